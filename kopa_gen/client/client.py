"""The platform client: key injection, format switch, envelope unwrapping, result-code mapping, retries.

Everything above the HTTP boundary is the same for the live service and the sandbox; only `base_url`, the key
and the transport differ.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import httpx

from kopa_gen.client.bulk import MEMBER_ARGS, BulkRows, member_rows, parse_bulk_file
from kopa_gen.client.errors import PlatformError, ToolArgumentError, redact
from kopa_gen.client.redaction import redact_bytes
from kopa_gen.envelopes import Wire, family
from kopa_gen.envelopes.base import JSON, EnvelopeError, Parsed, coerce, coerce_rows
from kopa_gen.envelopes.gateway import parse_gateway
from kopa_gen.language.kopa import Category
from kopa_gen.language.platform import Operation, Platform

log = logging.getLogger(__name__)

Exchange = Callable[[httpx.Request, httpx.Response], None]
T = TypeVar("T")

MAX_URL_CHARS = 8000
"""The longest request URL kopa-gen sends: scheme, host, path and percent-encoded query, measured with the
platform's real base URL so that the sandbox and the live service refuse the same calls. Web servers refuse longer
request lines (Apache 8,190 bytes and nginx 8 KiB by default; the sandbox behind `kopa-gen sandbox serve` 16 KiB,
h11's head limit), and httpx raises InvalidURL past 65,536 characters. A Korean character takes 9 (three
UTF-8 bytes, each %XX), so a free-text argument holds about 880 of them."""


@dataclass(frozen=True)
class Result:
    """A successful (or no-data) answer, unwrapped and typed by the row schema."""

    code: str
    message: str
    rows: list[JSON] = field(default_factory=list)
    total: int = 0
    page: int = 1
    page_size: int = 0
    record: JSON | None = None
    echo: dict[str, str] = field(default_factory=dict)
    """Request parameters the envelope repeated (`x-kopa.echo`)."""


@dataclass
class RetryPolicy:
    """Retries only for environmental failures (transport, 5xx, rate, provider error); never for quota or a
    structural error. Backoff doubles from `backoff_s`."""

    attempts: int = 3
    backoff_s: float = 0.5


class PlatformClient:
    def __init__(
        self,
        platform: Platform,
        *,
        key: str | None,
        base_url: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        wire: Wire = "json",
        timeout_s: float = 30.0,
        retry: RetryPolicy | None = None,
        on_exchange: Exchange | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        secret: bool = True,
    ) -> None:
        self.platform = platform
        # data.go.kr issues an already URL-encoded "Encoding" key; decode it once so httpx encodes it once.
        self._key = unquote(key) if key and "%" in key else key
        # the user's key is redacted from everything the client reads; the sandbox's well-known one guards nothing
        self._secrets = [self._key] if self._key and secret else []
        self.base_url = (base_url or platform.server_url).rstrip("/")
        self.wire: Wire = wire  # the format asked for wherever the operation has a switch
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.on_exchange = on_exchange
        self._sleep = sleep
        # the spec's live headers (some services refuse clients that do not look like a browser)
        headers = {"User-Agent": "kopa-gen", **platform.kopa.live.headers}
        self._http = httpx.AsyncClient(transport=transport, timeout=timeout_s, headers=headers)
        self._files: dict[str, BulkRows] = {}
        # one lock per bulk file: parallel first calls (three dart_corp_code in one turn) share one download
        self._file_locks: dict[str, asyncio.Lock] = {}

    def __repr__(self) -> str:
        return f"PlatformClient({self.platform.id!r}, base_url={self.base_url!r}, key=***)"

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> PlatformClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def redact(self, text: str) -> str:
        """`text` without this client's key or any key the process registered, in any form."""
        return redact(text, self._secrets)

    def _body(self, response: httpx.Response) -> bytes:
        """The body as the client reads it: with the key redacted before anything parses or cuts it (a service
        that echoes the key, in a message or a row, echoes `***`). A ZIP is read as it is: its files are parsed
        into rows, which the tool box redacts."""
        body = response.content
        return body if body[:2] == b"PK" else redact_bytes(body, self._secrets)

    def wire_of(self, op: Operation) -> Wire:
        """The format `op` answers in: the one asked for where it has a switch, else its only one."""
        fmt = self.platform.format(op)
        return self.wire if fmt.param or fmt.extension else fmt.default

    def request(self, op: Operation, params: Mapping[str, Any], wire: Wire) -> httpx.Request:
        """The exact HTTP request a real client sends: real path, real parameter names, the key, the format."""
        fmt = self.platform.format(op)
        path = op.route
        if fmt.extension and op.kopa.shape != "file" and wire == "xml":
            path = re.sub(r"\.json$", ".xml", path)
        query: dict[str, str] = {}
        if self._key is not None:
            query[self.platform.key_param] = self._key
        query.update(op.fixed_query)
        for name, value in params.items():
            if value is None or value == "":
                continue
            query[name] = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        if fmt.param and op.kopa.shape != "file":
            choice = fmt.json_value if wire == "json" else fmt.xml_value
            if choice:
                query[fmt.param] = choice
        self._check_length(path, query)
        return self._http.build_request(op.method.upper(), self.base_url + path, params=query)

    def _check_length(self, path: str, query: Mapping[str, str]) -> None:
        """Refuse, before sending, a request whose URL would pass MAX_URL_CHARS, naming the longest argument."""
        encoded = {
            name: len(quote(name, safe="")) + 1 + len(quote(value, safe="")) for name, value in query.items()
        }
        length = len(self.platform.server_url.rstrip("/") + path) + sum(encoded.values()) + len(encoded)
        if length <= MAX_URL_CHARS:
            return
        args = {name: n for name, n in encoded.items() if name != self.platform.key_param}
        name = max(args, key=args.__getitem__)
        room = MAX_URL_CHARS - (length - len(quote(query[name], safe="")))
        raise ToolArgumentError(
            f"{name}: too long to send ({len(query[name]):,} characters, {length:,} in the request URL; a request "
            f"URL holds at most {MAX_URL_CHARS:,}, so {name} may take about {max(room, 0):,} URL characters, "
            f"{max(room, 0) // 9:,} if all Korean); shorten it or split it over several calls"
        )

    async def call(self, op: Operation | str, params: Mapping[str, Any]) -> Result:
        """Call one operation. Raises PlatformError for any non-success code (after retries if environmental)."""
        op = self.platform.operation(op) if isinstance(op, str) else op
        if op.kopa.shape == "file":
            return await self._call_file(op, params)
        wire = self.wire_of(op)
        parsed = await self._send(op, self.request(op, params, wire), wire)
        return self._result(op, parsed, params)

    async def _retrying(self, attempt_once: Callable[[], Awaitable[T]]) -> T:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await attempt_once()
            except PlatformError as err:
                if err.category not in (Category.RATE, Category.SERVER) or attempt >= self.retry.attempts:
                    raise
                delay = self.retry.backoff_s * 2 ** (attempt - 1)
                log.info("%s; retry %d in %.2fs", err, attempt, delay)
                await self._sleep(delay)

    async def _send(self, op: Operation, request: httpx.Request, wire: Wire) -> Parsed:
        return await self._retrying(lambda: self._once(op, request, wire))

    async def _http_send(self, op: Operation, request: httpx.Request) -> httpx.Response:
        """One HTTP exchange; transport failures, time-outs, 5xx and gateway errors become PlatformError."""
        pid = self.platform.id
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self._http.send(request)
                await response.aread()
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise PlatformError(
                pid, op.operation_id, "timeout", f"no answer in {self.timeout_s}s", Category.SERVER
            ) from exc
        except httpx.TransportError as exc:
            message = self.redact(f"{type(exc).__name__}: {exc}")
            raise PlatformError(pid, op.operation_id, "transport", message, Category.SERVER) from exc
        log.debug("%s %s -> %d", request.method, self.redact(str(request.url)), response.status_code)
        if self.on_exchange is not None:
            self.on_exchange(request, response)
        gateway = parse_gateway(self._body(response)) if self.platform.kopa.gateway else None
        if gateway is not None:
            code, message = gateway
            raise PlatformError(pid, op.operation_id, code, message, self._category(code, Category.AUTH))
        if response.status_code >= 400:
            category = Category.SERVER if response.status_code >= 500 else Category.AUTH
            reason = self.redact(response.reason_phrase)  # a status line is the server's text too
            raise PlatformError(pid, op.operation_id, f"HTTP {response.status_code}", reason, category)
        return response

    def _parse(self, op: Operation, body: bytes, wire: Wire) -> Parsed:
        """Unwrap the envelope; any code that is not ok or no-data becomes a PlatformError."""
        try:
            parsed = family(self.platform.kopa.envelope).parse(self.platform, op, body, wire)
        except EnvelopeError as exc:
            raise PlatformError(
                self.platform.id, op.operation_id, "envelope", str(exc), Category.SERVER
            ) from exc
        category = self._category(parsed.code, Category.SERVER)
        if category not in (Category.OK, Category.NO_DATA):
            raise PlatformError(self.platform.id, op.operation_id, parsed.code, parsed.message, category)
        return parsed

    async def _once(self, op: Operation, request: httpx.Request, wire: Wire) -> Parsed:
        response = await self._http_send(op, request)
        return self._parse(op, self._body(response), wire)

    def _category(self, code: str, unknown: Category) -> Category:
        try:
            return self.platform.code(code).category
        except KeyError:
            return unknown

    def _result(self, op: Operation, parsed: Parsed, params: Mapping[str, Any]) -> Result:
        props = op.row_props
        rows = coerce_rows(props, parsed.rows)
        if op.kopa.groups is not None:
            # a grouped row holds its own group's fields only, not every group's blanks
            rows = [
                {k: v for k, v in row.items() if k in raw} for row, raw in zip(rows, parsed.rows, strict=True)
            ]
        record = coerce(props, parsed.record) if parsed.record is not None else None
        page, size = self._paging(op, params)
        return Result(
            code=parsed.code,
            message=parsed.message,
            rows=rows,
            total=parsed.total if parsed.total is not None else len(rows),
            page=parsed.page or page,
            page_size=parsed.size if parsed.size is not None else size or len(rows),
            record=record,
            echo=parsed.echo,
        )

    def _paging(self, op: Operation, params: Mapping[str, Any]) -> tuple[int, int]:
        paging = self.platform.kopa.paging
        if paging is None or not self.platform.paged(op):
            return 1, 0
        return int(params.get(paging.page) or 1), int(params.get(paging.size) or paging.default_size)

    async def _call_file(self, op: Operation, params: Mapping[str, Any]) -> Result:
        """A bulk download, turned into a searchable paged list (see docs/tools.md): downloaded once per client,
        filtered and paged locally with the tool's `local_filters`."""
        spec = op.kopa.file
        assert spec is not None
        if spec.per_row:  # one small file per request (document.xml): fetched each call, not kept
            sent = {k: v for k, v in params.items() if k not in MEMBER_ARGS}
            body = await self._retrying(lambda: self._fetch_zip(op, sent))
            if isinstance(body, Parsed):  # no file for these parameters (OpenDART's 014): an empty answer
                return Result(body.code, body.message, rows=[], total=0, page=1, page_size=0)
            rows = member_rows(op, body, params)
            ok = self.platform.code(self.platform.kopa.answers.ok)
            return Result(ok.code, ok.message, rows=rows, total=len(rows), page=1, page_size=len(rows))
        if op.operation_id not in self._files:
            async with self._file_locks.setdefault(op.operation_id, asyncio.Lock()):
                if op.operation_id not in self._files:  # another call may have downloaded it meanwhile
                    self._files[op.operation_id] = await self._download(op)
        rows = self._files[op.operation_id].search(op.kopa.local_filters, params)
        page = max(1, int(params.get("page") or 1))
        size = min(max(1, int(params.get("page_size") or spec.page_size)), spec.max_page_size)
        chosen = rows[(page - 1) * size : page * size]
        ok = self.platform.code(self.platform.kopa.answers.ok)
        return Result(ok.code, ok.message, rows=chosen, total=len(rows), page=page, page_size=size)

    async def _download(self, op: Operation) -> BulkRows:
        body = await self._retrying(lambda: self._fetch_zip(op))
        assert isinstance(body, bytes)  # without params a non-ZIP answer raises
        return parse_bulk_file(op, body)

    async def _fetch_zip(self, op: Operation, params: Mapping[str, Any] | None = None) -> bytes | Parsed:
        """The ZIP; or, for a per-row file (document.xml), the no-data answer when there is none."""
        response = await self._http_send(op, self.request(op, params or {}, "xml"))
        body = self._body(response)
        if body[:2] == b"PK":
            return body
        # ZIP endpoints answer errors as XML <result><status/><message/></result>; clients sniff the `PK` magic.
        parsed = self._parse(op, body, "xml")
        if params is not None:
            return parsed
        raise PlatformError(
            self.platform.id, op.operation_id, "envelope", "neither a ZIP nor an error", Category.SERVER
        )

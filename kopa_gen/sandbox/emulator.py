"""The generic emulator: any platform spec + the world = the platform's real wire behaviour.

Order of checks follows the real services: gateway faults, key, rate, quota, parameters, then the query.
"""

from __future__ import annotations

import asyncio
import calendar
import datetime as dt
import functools
import hashlib
import io
import json
import logging
import re
import threading
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route, Router
from starlette.types import Receive, Scope, Send

from kopa_gen.envelopes import Page, Reply, Wire, family
from kopa_gen.envelopes.base import add_row, coerce_rows, row_type, xml_bytes
from kopa_gen.envelopes.gateway import render_gateway
from kopa_gen.language.kopa import Category, ResultCode, Span
from kopa_gen.language.platform import Operation, Param, Platform
from kopa_gen.language.world import WORLD_TABLE, EpisodeTable
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.sandbox.episode import EpisodeStore
from kopa_gen.sandbox.limits import FaultPlan, Meter
from kopa_gen.sandbox.nested import with_sublists
from kopa_gen.sandbox.paths import WorkspacePathError, normalize_params
from kopa_gen.sandbox.store import WorldStore

log = logging.getLogger(__name__)

HTTP_FAULTS = {
    "http_500": (500, "Internal Server Error"),
    "http_502": (502, "Bad Gateway"),
    "http_503": (503, "Service Unavailable"),
}
SAMPLE_ROWS = 5
THREADS = 8
"""Worker threads answering world reads (`SandboxConfig.threads`); each keeps one SQLite connection and its cache."""
DATAGOKR_KEY_SPELLINGS = ("serviceKey", "ServiceKey")
ASCII_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)
INTEGER_DIGITS = 100
"""The longest integer parameter read as a number: longer ones are out of range (Python refuses to read one of more
than 4,300 digits, and no parameter means one of more than 19)."""
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Control characters no parameter value holds (tab and line breaks aside): a value with one is malformed, as the
real gateways answer it; a NUL would also end the text for SQLite's length()."""
NO_OPENAPI_SERVICE = ResultCode(
    code="12", message="NO_OPENAPI_SERVICE_ERROR", category=Category.BAD_PARAM, gateway=True
)
"""The data.go.kr gateway's answer to a path no service has (the guide's code 12)."""


class Sandbox:
    """One sandbox: shared read-only world, private counters and fault stream. Cheap to make per episode."""

    def __init__(
        self,
        platforms: Sequence[Platform],
        store: WorldStore,
        config: SandboxConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        episode: Sequence[EpisodeTable] = (),
    ) -> None:
        self.platforms = {p.id: p for p in platforms}
        self.store = store
        self.episode = EpisodeStore(episode)
        self.config = config or SandboxConfig()
        self.meter = Meter(clock)
        self._meter_lock = threading.Lock()
        self._limiter: anyio.CapacityLimiter | None = None
        self.faults = FaultPlan(self.config.faults, self.config.seed)
        self._keys = {p.id: self.config.accepted(p) for p in platforms}
        self.app = _SandboxApp(self, _router(tuple(platforms)))

    def prefix(self, platform: Platform) -> str:
        return prefix(platform)

    async def answer(self, platform: Platform, op: Operation, path: str, params: Mapping[str, str]) -> Reply:
        try:
            return await self._answer(platform, op, path, params)
        except (
            Exception
        ) as exc:  # the sandbox itself failed (a damaged world file): the platform's server error
            log.debug("sandbox failure answering %s.%s", platform.id, op.operation_id, exc_info=True)
            return self.failure(platform, op, self._wire(platform, op, path, params), exc)

    def failure(self, platform: Platform, op: Operation, wire: Wire, exc: Exception) -> Reply:
        """The platform's own server-error answer, its message saying what failed in the sandbox (the client
        reports it as an environmental failure: an eval scores the episode failed-infrastructure)."""
        code = platform.code(platform.kopa.answers.server)
        said = code.model_copy(
            update={"message": f"{code.message} (sandbox error: {type(exc).__name__}: {exc})"}
        )
        if said.gateway:
            return render_gateway(said)
        return family(platform.kopa.envelope).render(platform, op, said, wire)

    async def _answer(self, platform: Platform, op: Operation, path: str, params: Mapping[str, str]) -> Reply:
        fault = self.faults.draw()
        if fault == "timeout":
            await asyncio.sleep(self.config.faults.timeout_s)
            return Reply(504, b"<html><body><h1>504 Gateway Time-out</h1></body></html>", "text/html")
        if fault in HTTP_FAULTS:
            status, text = HTTP_FAULTS[fault]
            return Reply(status, f"<html><body><h1>{status} {text}</h1></body></html>".encode(), "text/html")
        source = op.kopa.source
        world_read = source is not None and source.table not in self.episode
        if op.kopa.shape == "file" or (self.config.threads and world_read):
            # Building a bulk file takes seconds the first time, and with `threads` every world read runs in the
            # thread pool (each thread its own connection): the event loop stays free for other clients.
            if self._limiter is None:  # made inside the event loop, at its first use
                self._limiter = anyio.CapacityLimiter(THREADS)
            return await anyio.to_thread.run_sync(
                lambda: self.respond(platform, op, path, params, provider_fault=fault == "provider"),
                limiter=self._limiter,
            )
        return self.respond(platform, op, path, params, provider_fault=fault == "provider")

    def respond(
        self,
        platform: Platform,
        op: Operation,
        path: str,
        params: Mapping[str, str],
        provider_fault: bool = False,
    ) -> Reply:
        kopa = platform.kopa
        answers = kopa.answers
        wire = self._wire(platform, op, path, params)
        echo = {e.field: params.get(e.param) or e.default or "" for e in platform.echo(op)}

        def say(code: str, page: Page | None = None, record: dict[str, Any] | None = None) -> Reply:
            result = platform.code(code)
            if result.gateway:
                return render_gateway(result)
            return family(kopa.envelope).render(platform, op, result, wire, page, record, echo)

        def refuse(detail: str) -> Reply:
            """The bad-value answer with `detail` after its message (for what only kopa-gen's own platforms
            declare, so the answer may say exactly what is wrong)."""
            result = platform.code(answers.bad_value or answers.invalid_param)
            if result.gateway:
                return say(result.code)
            result = result.model_copy(update={"message": f"{result.message} {detail}"})
            return family(kopa.envelope).render(platform, op, result, wire, None, None, echo)

        key = self._key(platform, params)
        if (key is None and not kopa.auth.optional) or (
            key is not None and key not in self._keys[platform.id]
        ):
            return say(answers.bad_key)
        meter_key = key or "<sample>"
        daily = self.config.daily_quota.get(platform.id, kopa.limits.daily)
        with self._meter_lock:  # requests may be answered in worker threads (`threads`)
            over_rate = self.config.limits and self.meter.over_rate(
                platform.id, meter_key, kopa.limits.per_second
            )
            over_quota = (
                not over_rate and self.config.limits and self.meter.over_quota(platform.id, meter_key, daily)
            )
        if over_rate:
            return say(answers.rate)
        if over_quota:
            return say(answers.quota)
        if provider_fault:
            return say(answers.server)
        try:
            params = normalize_params(op, params)
        except WorkspacePathError as exc:
            return refuse(str(exc))
        problem = check_params(platform, op, params)
        if problem is not None:
            return say(getattr(answers, problem))
        params = self._filter_values(op, params)
        if op.kopa.span is not None and not within_span(op.kopa.span, params):
            return say(answers.invalid_param)

        src = op.source
        columns = list(op.row_fields)
        if op.kopa.shape == "file":
            if op.kopa.file is not None and op.kopa.file.per_row:
                found = self.store.select(src.table, list(op.row_fields), src.filters, params, src.order)
                if not found:
                    return say(op.kopa.file.missing or answers.no_data)
                return member_zip(op, found)
            return self._file(platform, op)
        store = self._reader(src.table)
        if op.kopa.shape == "record":
            found = store.select(src.table, columns, src.filters, params, src.order, limit=1)
            if op.kopa.write is not None:
                row = {column: params.get(param) for column, param in op.kopa.write.values.items()}
                if op.kopa.write.mode == "delete":
                    if not self.episode.delete(src.table, row):
                        return say(answers.no_data)
                    return say(answers.ok, record=self._typed(op, found, params)[0])
                identity = {k: row[k] for k in self.episode.tables[src.table].key}
                limit = self.episode.full(src.table, identity)
                if limit is not None:
                    return refuse(
                        f"{src.table}: at most {limit:,} in an episode, and it is full; delete one before writing "
                        "a new one (rewriting one that exists still works)"
                    )
                self.episode.upsert(src.table, row)
                found = store.select(src.table, columns, src.filters, params, src.order, limit=1)
            if not found:
                return say(answers.no_data)
            return say(answers.ok, record=self._typed(op, found, params)[0])
        if platform.paged(op):
            paging = kopa.paging
            assert paging is not None
            page_no = int(params.get(paging.page) or 1)
            size = int(params.get(paging.size) or paging.default_size)
            if key is None:
                size = min(size, SAMPLE_ROWS)
            total = store.count(src.table, src.filters, params)
            offset = (page_no - 1) * size
            rows = self._rows(store, op, params, size, offset) if total > offset else []
        else:
            rows = self._rows(store, op, params)
            total, page_no, size = len(rows), 1, len(rows)
        if total == 0:
            return say(answers.no_data, page=Page([], 0, page_no, size))
        return say(answers.ok, page=Page(rows, total, page_no, size))

    def _filter_values(self, op: Operation, params: Mapping[str, str]) -> dict[str, str]:
        """The request's parameters with each filter's `default` filled in and its `ignore` values emptied (the
        store skips an empty value)."""
        values = dict(params)
        for f in op.kopa.source.filters if op.kopa.source is not None else ():
            if f.default or f.ignore:
                values[f.param] = f.value(params, self.today) or ""
        return values

    @functools.cached_property
    def today(self) -> str:
        """The world's today, YYYYMMDD."""
        (row,) = self.store.select(WORLD_TABLE, ["today_ymd"], [], {}, [])
        return str(row["today_ymd"])

    def _reader(self, table: str) -> WorldStore | EpisodeStore:
        """The store that holds `table`: the episode's own tables, else the shared world."""
        return self.episode if table in self.episode else self.store

    def _rows(
        self,
        store: WorldStore | EpisodeStore,
        op: Operation,
        params: Mapping[str, str],
        limit: int | None = None,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """The operation's rows (one page of them with `limit`), typed as the API sends them. World rows without
        sub-lists are typed straight from the database's values, with no untyped row made first."""
        src = op.source
        order = src.order_for(params)
        if op.kopa.nested or not isinstance(store, WorldStore):
            rows = store.select(src.table, list(op.row_fields), src.filters, params, order, limit, offset)
            return self._typed(op, rows, params)
        typed = row_type(op.row_props)
        return store.select(
            src.table, typed.names, src.filters, params, order, limit, offset, typed.from_values
        )

    def _typed(
        self, op: Operation, rows: Sequence[dict[str, Any]], params: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Selected rows as the API sends them: sub-lists filled (`x-kopa.nested`), typed by the row schema."""
        if op.kopa.nested:
            rows = with_sublists(self._reader, op.row_props, op.kopa.nested, rows, params)
        return coerce_rows(op.row_props, rows)

    def _wire(self, platform: Platform, op: Operation, path: str, params: Mapping[str, str]) -> Wire:
        fmt = platform.format(op)
        if fmt.extension:
            return "json" if path.endswith(".json") else "xml"
        if fmt.param and fmt.json_value:
            for name in (fmt.param, *fmt.aliases):
                if params.get(name, "").lower() == fmt.json_value.lower():
                    return "json"
            return "xml"
        return fmt.default

    def _key(self, platform: Platform, params: Mapping[str, str]) -> str | None:
        names: tuple[str, ...] = (platform.key_param,)
        if platform.kopa.gateway == "datagokr":
            names = DATAGOKR_KEY_SPELLINGS
        for name in names:
            if params.get(name):
                return params[name]
        return None

    def _file(self, platform: Platform, op: Operation) -> Reply:
        spec = op.kopa.file
        assert spec is not None
        src = op.source

        def build() -> bytes:
            rows = self.store.select(src.table, list(op.row_fields), src.filters, {}, src.order)
            root = ET.Element(spec.root)
            for row in self._typed(op, rows):
                add_row(root, spec.row_element, row, op.row_props)
            return zipped([(spec.member or "", xml_bytes(root))])

        # what the bytes depend on besides the world: the file layout, the row schema, the source
        made_of = json.dumps([spec.model_dump(), op.row_props, src.model_dump()], sort_keys=True, default=str)
        digest = hashlib.sha256(made_of.encode()).hexdigest()[:16]
        body = self.store.file(f"{platform.id}-{op.operation_id}-{digest}", build)
        return attachment(body, spec.member or op.operation_id)


def member_zip(op: Operation, rows: Sequence[Mapping[str, Any]]) -> Reply:
    """A ZIP of one member per row (`file.name_column` / `file.content_column`, OpenDART's document.xml), named
    after the first member as the real service names it (20240312000736.xml -> 20240312000736.zip)."""
    spec = op.kopa.file
    assert spec is not None and spec.name_column is not None and spec.content_column is not None
    members = [(str(r[spec.name_column]), str(r[spec.content_column] or "").encode("utf-8")) for r in rows]
    return attachment(zipped(members), members[0][0])


def zipped(members: Sequence[tuple[str, bytes]]) -> bytes:
    """A ZIP of these (name, bytes) members, deflated, with a fixed date: the same bytes for the same members."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED  # a ZipInfo does not inherit the archive's default
            zf.writestr(info, data)
    return buf.getvalue()


def attachment(body: bytes, member: str) -> Reply:
    """A ZIP download named after its (first) member as the real services name it (a popular client refuses a
    download without the header): CORPCODE.xml -> CORPCODE.zip."""
    name = member.rsplit(".", 1)[0] + ".zip"
    return Reply(200, body, "application/zip", (("content-disposition", f"attachment; filename={name}"),))


def _http(reply: Reply) -> Response:
    return Response(
        reply.body,
        status_code=reply.status,
        headers={"content-type": reply.content_type, **dict(reply.headers)},
    )


def within_span(span: Span, params: Mapping[str, str]) -> bool:
    """Whether the period from `span.start` to `span.end` is at most `span.months` calendar months (a request
    that gives an `unless` parameter, or leaves a date out, is not limited)."""
    if any(params.get(name) for name in span.unless):
        return True
    try:
        start = dt.datetime.strptime(params.get(span.start) or "", "%Y%m%d").date()
        end = dt.datetime.strptime(params.get(span.end) or "", "%Y%m%d").date()
    except ValueError:
        return True
    month = start.month - 1 + span.months
    year, month = start.year + month // 12, month % 12 + 1
    limit = dt.date(year, month, min(start.day, calendar.monthrange(year, month)[1]))
    return end <= limit


def pick_operation(ops: Sequence[Operation], params: Mapping[str, str]) -> Operation | None:
    """The operation of a shared path that a request calls: the one whose fixed query values it sends (the most
    specific when several match); None when none does."""
    matching = [op for op in ops if all(params.get(k) == v for k, v in op.fixed_query.items())]
    return max(matching, key=lambda op: len(op.fixed_query)) if matching else None


def check_params(platform: Platform, op: Operation, params: Mapping[str, str]) -> str | None:
    """The `answers` situation a bad request falls into, or None when the parameters are acceptable."""
    paging = platform.kopa.paging
    for p in op.params:
        value = params.get(p.name)
        if value is None or value == "":
            if p.required:
                return "missing_param"
            continue
        problem = _check_value(p, value)
        if problem == "range" and paging is not None and p.name == paging.size:
            return "page_size"
        if problem in ("type", "range"):
            return "invalid_param"
        if problem is not None and platform.kopa.answers.bad_value is not None:
            return "bad_value"
    return None


def _check_value(p: Param, value: str) -> str | None:
    schema = p.schema
    if CONTROL.search(value):
        return "type"
    if schema.get("type") == "integer":
        # ASCII digits only, as the real services parse them: Python's int() would also take "1_0", " 5", "١٢"
        if not ASCII_INTEGER.fullmatch(value):
            return "type"
        if len(value.lstrip("-")) > INTEGER_DIGITS:
            return "range"
        number = int(value)
        if "minimum" in schema and number < schema["minimum"]:
            return "range"
        if "maximum" in schema and number > schema["maximum"]:
            return "range"
    enum = schema.get("enum")
    if enum is not None and value not in [str(e) for e in enum]:
        return "enum"
    pattern = schema.get("pattern")
    if pattern is not None and not ecma_pattern(pattern).search(value):
        return "pattern"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return "length"
    if "minLength" in schema and len(value) < schema["minLength"]:
        return "length"
    return None


@functools.cache
def ecma_pattern(pattern: str) -> re.Pattern[str]:
    """A JSON Schema `pattern` (ECMA-262) as a Python regex. The one difference that matters for parameters: ECMA's
    `$` matches only at the very end, Python's also before a final line break (so `^[0-9]{8}$` took "12345678\\n");
    `$` outside a character class becomes `\\Z`."""
    out: list[str] = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "$" and not in_class:
            out.append(r"\Z")
            continue
        out.append(char)
    return re.compile("".join(out))


class _SandboxApp:
    """The ASGI app of one sandbox: the router shared by every sandbox over the same platforms, told which
    sandbox answers through the request scope (building the routes took 20 ms, a third of an oracle episode)."""

    def __init__(self, sandbox: Sandbox, router: Starlette) -> None:
        self.sandbox = sandbox
        self.router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.router({**scope, SCOPE_KEY: self.sandbox}, receive, send)


SCOPE_KEY = "kopa.sandbox"
_ROUTERS: dict[tuple[int, ...], tuple[tuple[Platform, ...], Starlette]] = {}
_ROUTERS_LOCK = threading.Lock()


def _router(platforms: tuple[Platform, ...]) -> Starlette:
    """The routes of these platforms (the same objects: a project loads each once), built once per process."""
    key = tuple(id(p) for p in platforms)
    with _ROUTERS_LOCK:
        if key not in _ROUTERS:  # the platforms are kept with it, so their ids cannot be reused
            _ROUTERS[key] = (platforms, Starlette(routes=_routes(platforms)))
        return _ROUTERS[key][1]


def _sandbox(request: Request) -> Sandbox:
    sandbox: Sandbox = request.scope[SCOPE_KEY]
    return sandbox


def _routes(platforms: Sequence[Platform]) -> list[BaseRoute]:
    """One mount per platform (a request is matched against its platform's routes only), whose routes are made at
    its first request: a sandbox over 1,700 operations answers its first call of one platform without compiling
    the path patterns of all the others (0.3 s)."""
    return [Mount(f"/{platform.id}", app=_PlatformRoutes(platform)) for platform in platforms]


class _PlatformRoutes:
    """The routes of one platform, made once, at the first request that reaches them."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self._router: Router | None = None
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._router is None:
            with self._lock:
                if self._router is None:
                    self._router = Router(routes=_platform_routes(self.platform))
        await self._router(scope, receive, send)


def _platform_routes(platform: Platform) -> list[BaseRoute]:
    # operations sharing one path (told apart by the query values their path keys fix) share a route
    shared: dict[tuple[str, str], list[Operation]] = {}
    for op in platform.operations:
        paths = [op.route]
        if platform.format(op).extension and op.kopa.shape != "file":
            paths.append(re.sub(r"\.json$", ".xml", op.route))
        for path in paths:
            shared.setdefault((path, op.method.upper()), []).append(op)
    routes: list[BaseRoute] = [
        Route(platform.base_path + path, _endpoint(platform, ops), methods=[method])
        for (path, method), ops in shared.items()
    ]
    if platform.kopa.gateway == "datagokr":  # after every real route: a path no service has
        routes.append(Route("/{rest:path}", _no_service, methods=["GET", "POST"]))
    return routes


def prefix(platform: Platform) -> str:
    """Path under which the platform's real base path is served: `/<platform><real base path>`."""
    return f"/{platform.id}{platform.base_path}"


async def _no_service(request: Request) -> Response:
    """The data.go.kr gateway answers a path no service has with its own XML envelope, not a bare 404."""
    return _http(render_gateway(NO_OPENAPI_SERVICE))


def _endpoint(platform: Platform, ops: Sequence[Operation]) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        sandbox = _sandbox(request)
        params = dict(request.query_params)
        op = pick_operation(ops, params)
        if op is None:  # no operation fixes these query values (law.go.kr: an unknown target)
            answers = platform.kopa.answers
            op = ops[0]
            wire = sandbox._wire(platform, op, request.url.path, params)
            code = platform.code(answers.bad_value or answers.invalid_param)
            return _http(family(platform.kopa.envelope).render(platform, op, code, wire))
        return _http(await sandbox.answer(platform, op, request.url.path, params))

    return endpoint

"""Conformance oracle: validate real HTTP exchanges against the platform's OpenAPI spec with openapi-core.

Used in tests on every sandbox exchange (and available in live mode) to keep spec, emulator and client honest.
One openapi-core object per path (built lazily) keeps the per-call cost flat as specs grow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from openapi_core import Config, OpenAPI
from openapi_core.datatypes import RequestParameters
from werkzeug.datastructures import Headers, ImmutableMultiDict

from kopa_gen.language.platform import Operation, Platform


@dataclass
class _Request:
    host_url: str
    path: str
    method: str
    parameters: RequestParameters
    body: bytes | None = None
    content_type: str = ""


@dataclass(frozen=True)
class _Response:
    status_code: int
    content_type: str
    headers: Any
    data: bytes


class SpecValidator:
    """Validates requests and JSON responses; counts what it checked so tests can prove it ran."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self._apps: dict[str, OpenAPI] = {}
        self.requests_checked = 0
        self.responses_checked = 0
        split = urlsplit(platform.server_url)
        self._host = f"{split.scheme}://{split.netloc}"

    def _app(self, op: Operation) -> OpenAPI:
        if op.path not in self._apps:
            doc = dict(self.platform.doc)
            doc["paths"] = {op.path: self.platform.doc["paths"][op.path]}
            # The spec was validated at load time; skip openapi-core's own (slow) re-validation.
            config = Config(spec_validator_cls=None)  # type: ignore[arg-type]
            self._apps[op.path] = OpenAPI.from_dict(doc, config=config)
        return self._apps[op.path]

    def operation_for(self, url: httpx.URL, method: str = "GET") -> tuple[Operation, bool] | None:
        """The operation a request calls, and whether it asked for the XML variant of a .json path."""
        query = dict(url.params)
        for op in sorted(self.platform.operations, key=lambda op: -len(op.fixed_query)):
            if op.method.upper() != method.upper():
                continue
            if any(query.get(k) != v for k, v in op.fixed_query.items()):
                continue
            if url.path.endswith(op.route):
                return op, False
            if op.route.endswith(".json") and url.path.endswith(op.route[:-5] + ".xml"):
                return op, True
        return None

    def __call__(self, request: httpx.Request, response: httpx.Response) -> None:
        found = self.operation_for(request.url, request.method)
        if found is None:
            raise AssertionError(f"{request.url.path} is not an operation of {self.platform.id}")
        op, xml_variant = found
        pairs = [
            (k, v)
            for k, vs in parse_qs(request.url.query.decode(), keep_blank_values=True).items()
            for v in vs
        ]
        query: ImmutableMultiDict[str, str] = ImmutableMultiDict(pairs)
        req = _Request(
            host_url=self._host,
            path=self.platform.base_path + op.path,
            method=request.method.lower(),
            parameters=RequestParameters(query=query, header=Headers(dict(request.headers))),
        )
        app = self._app(op)
        app.validate_request(req)
        self.requests_checked += 1
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        fmt = self.platform.format(op)
        if content_type == fmt.json_content_type.split(";")[0].strip().lower():
            content_type = "application/json"
        declared = app.spec / "paths" / op.path / op.method / "responses" / "200" / "content"
        if xml_variant or content_type not in declared:
            return  # XML bodies and gateway answers are not described by JSON schemas in the spec
        if content_type != "application/json":
            self.responses_checked += (
                1  # a declared binary body (the corp-code ZIP): its media type is the contract
            )
            return
        resp = _Response(
            response.status_code, content_type, Headers(dict(response.headers)), response.content
        )
        app.validate_response(req, resp)
        self.responses_checked += 1

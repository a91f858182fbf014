"""Load a platform spec (OpenAPI 3.1 + x-kopa) into a checked, resolved in-memory form."""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.metadata
import importlib.resources
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from jsonschema import Draft202012Validator

from kopa_gen.cache import cache_dir
from kopa_gen.language.catalog import expand_catalogs
from kopa_gen.language.diagnostics import Diagnostic, Diagnostics
from kopa_gen.language.kopa import Echo, Format, Nested, OperationKopa, PlatformKopa, Provenance, ResultCode
from kopa_gen.language.kopa import Source as KopaSource
from kopa_gen.language.nested import columns as row_columns
from kopa_gen.language.nested import wire_props
from kopa_gen.language.source import Loc, Source, YamlError, load_yaml, resolve, validate_model

JSON = dict[str, Any]


@dataclass(frozen=True)
class Param:
    name: str
    required: bool
    schema: JSON
    description: str


@dataclass(frozen=True)
class Operation:
    operation_id: str
    path: str
    method: str
    summary: str
    description: str
    params: tuple[Param, ...]
    kopa: OperationKopa
    row_schema: JSON
    row_name: str
    row_props: JSON = field(default_factory=dict)
    """The row schema's properties as they go on the wire: the item schema of every sub-list (`x-kopa.nested`)
    resolved, to any depth. What envelopes render and parse and the client types rows by."""

    @property
    def tool(self) -> str:
        return self.kopa.tool

    @property
    def route(self) -> str:
        """The URL path: the path key up to a `?`. A key may fix query parameters after it
        (`/lawSearch.do?target=law`), so that one real path serves several operations (see `fixed_query`)."""
        return self.path.split("?", 1)[0]

    @property
    def fixed_query(self) -> dict[str, str]:
        """Query parameters the path key fixes (`/lawSearch.do?target=law` -> {target: law}): every request of the
        operation sends them, and they tell apart the operations that share one path."""
        _, _, query = self.path.partition("?")
        return dict(parse_qsl(query, keep_blank_values=True))

    def takes(self, name: str) -> bool:
        """Whether requests of the operation carry the parameter: a declared one or one its path key fixes."""
        return self.param(name) is not None or name in self.fixed_query

    @property
    def row_fields(self) -> tuple[str, ...]:
        """The row's columns in its table: every property but the sub-lists (`x-kopa.nested`)."""
        return tuple(row_columns(self.row_schema.get("properties", {}), self.kopa.nested))

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def source(self) -> KopaSource:
        """The world table serving the rows (bound when the project loads, synthesised where the spec gives none)."""
        if self.kopa.source is None:
            raise ValueError(
                f"{self.tool}: no world source bound; load it through kopa_gen.project.load_project"
            )
        return self.kopa.source


@dataclass(frozen=True)
class Platform:
    id: str
    file: str
    sha256: str
    doc: JSON
    kopa: PlatformKopa
    server_url: str
    operations: tuple[Operation, ...]
    origin: Source | None = field(default=None, compare=False, repr=False)
    """The loaded YAML, for the project's checks made later (against the world) to name the line; None in a
    loaded project (kopa_gen/project.py drops it once they pass)."""

    @property
    def base_path(self) -> str:
        """Path prefix of the real server URL, e.g. `/api` for OpenDART."""
        return urlsplit(self.server_url).path.rstrip("/")

    @property
    def key_param(self) -> str:
        scheme = self.doc["components"]["securitySchemes"][self.kopa.auth.scheme]
        return str(scheme["name"])

    def code(self, code: str) -> ResultCode:
        for c in self.kopa.codes:
            if c.code == code:
                return c
        raise KeyError(f"{self.id}: result code {code!r} is not declared in x-kopa.codes")

    def echo(self, op: Operation) -> tuple[Echo, ...]:
        """What the operation's envelope repeats of the request: the platform's echo, then the operation's (which
        replaces one of the same field)."""
        own = {e.field for e in op.kopa.echo}
        return (*(e for e in self.kopa.echo if e.field not in own), *op.kopa.echo)

    def format(self, op: Operation) -> Format:
        """How `op` is asked for JSON or XML: its own `x-kopa.format`, else the platform's."""
        return format_of(self.kopa, op)

    def paged(self, op: Operation) -> bool:
        """Whether the operation takes the platform's paging parameters."""
        paging = self.kopa.paging
        return paging is not None and op.param(paging.page) is not None

    def operation(self, tool_or_id: str) -> Operation:
        op = self._by_name.get(tool_or_id)
        if op is None:
            raise KeyError(f"{self.id}: no operation or tool named {tool_or_id!r}")
        return op

    @cached_property
    def _by_name(self) -> dict[str, Operation]:
        out: dict[str, Operation] = {}
        for op in reversed(self.operations):  # the first of a name wins, as a scan would find it
            out[op.operation_id] = op
            out[op.tool] = op
        return out

    def provenance(self, tool: str) -> Provenance | None:
        """Where a tool's facts come from: its operation's `provenance`, else the platform's (None: unrecorded)."""
        return self.operation(tool).kopa.provenance or self.kopa.provenance

    def examples(self, tool: str) -> dict[str, list[str | int]]:
        """The sample arguments of one tool: the platform's `x-kopa.examples`, with the operation's own
        (`x-kopa.examples` under the operation) in place of the platform's for the same argument."""
        own = self.operation(tool).kopa.examples
        return {**self.kopa.examples, **own} if own else dict(self.kopa.examples)


def _dangling_refs(node: Any, doc: JSON, loc: Loc, src: Source, out: Diagnostics) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                resolve(doc, ref)
            except KeyError:
                out.items.append(
                    src.diag(
                        (*loc, "$ref"),
                        f"dangling $ref {ref!r}: define it under components or fix the pointer",
                    )
                )
        for key, value in node.items():
            _dangling_refs(value, doc, (*loc, str(key)), src, out)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _dangling_refs(item, doc, (*loc, i), src, out)


def openapi_errors(doc: JSON, digest: str) -> list[tuple[Loc, str]]:
    """openapi-spec-validator's verdict, each error at its place in the document; a clean verdict is remembered
    per spec hash. An invalid regex is left to our own pattern check, which says why. The document's shape is
    checked by jsonschema-rs (the validator's own backend when installed) and each Schema Object against the OAS
    3.1 dialect by jsonschema-rs too (`_spec_checker`): the pure-Python checks took 60 ms an operation, 100 s for
    the catalogs on an empty cache."""
    version = importlib.metadata.version("openapi-spec-validator")
    marker = cache_dir() / "valid-specs" / f"{digest}-{version}"
    if marker.exists():
        return []
    errors = [
        (_written_at(doc, [p for p in err.absolute_path if isinstance(p, str | int)]), err.message)
        for err in _spec_checker()(doc).iter_errors()
        if not err.message.endswith("is not a 'regex'")
    ]
    if not errors:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    return errors


@functools.cache
def _spec_checker() -> Any:
    """openapi-spec-validator's OpenAPI 3.1 validator with the meta-check of each Schema Object done by
    jsonschema-rs against the same dialect (its document check picks jsonschema-rs by itself). Imported on first
    use: 0.1 s, needed only for a spec not seen yet."""
    import jsonschema_rs
    from openapi_spec_validator import OpenAPIV31SpecValidator
    from openapi_spec_validator.validation import keywords
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    # the OAS 3.1 dialect and its vocabulary, as openapi-schema-validator ships them
    oas31 = importlib.resources.files("openapi_schema_validator").joinpath("schemas", "oas3.1")
    dialect = json.loads(oas31.joinpath("metaschema.json").read_text(encoding="utf-8"))
    vocabulary = json.loads(oas31.joinpath("vocabularies", "base").read_text(encoding="utf-8"))
    registry = jsonschema_rs.Registry([(dialect["$id"], dialect), (vocabulary["$id"], vocabulary)])
    meta = jsonschema_rs.validator_for(dialect, registry=registry)
    passed: set[str] = set()  # Schema Objects (canonical JSON) the dialect accepted: catalogs repeat many

    class RsSchemaMeta(keywords.OpenAPIV31SchemaValidator):
        def _validate_schema_meta(self, schema: Any, schema_value: Any) -> Any:
            if isinstance(schema_value, Mapping) and "$schema" in schema_value:
                return super()._validate_schema_meta(schema, schema_value)  # another dialect: the library's
            key = json.dumps(schema_value, sort_keys=True, ensure_ascii=False, default=str)
            if key in passed:
                return None
            for err in meta.iter_errors(schema_value):  # formats unchecked (annotations in 2020-12)
                return OpenAPIValidationError(err.message, path=[*schema.parts, *err.instance_path])
            passed.add(key)
            return None

    class Checker(OpenAPIV31SpecValidator):
        keyword_validators = {**OpenAPIV31SpecValidator.keyword_validators, "schema": RsSchemaMeta}  # noqa: RUF012

    return Checker


def _written_at(doc: JSON, path: list[str | int]) -> Loc:
    """Where the node at `path` is written: the validator's path runs through a `$ref` into what it names (a
    response's schema into components), so the walk follows each `$ref` whose mapping lacks the next step."""
    at: list[str | int] = []
    node: Any = doc
    for step in path:
        while isinstance(node, dict) and step not in node and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            try:
                node = resolve(doc, ref)
            except KeyError:
                return (*at, step)
            at = [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")]
        inside = step in node if isinstance(node, dict) else isinstance(step, int) and step < len(node or [])
        node = node[step] if inside else None
        at.append(step)
    return tuple(at)


def format_of(kopa: PlatformKopa, op: Operation) -> Format:
    """The operation's format switch: its own `x-kopa.format`, else the platform's (`kopa`)."""
    return op.kopa.format or kopa.format


def tool_params(kopa: PlatformKopa, op: Operation) -> tuple[Param, ...]:
    """The arguments of the operation's tool as the generated tool exposes them: the parameters minus the format
    switch; for a bulk file, its local filters plus paging."""
    if op.kopa.shape == "file" and op.kopa.file is not None and op.kopa.file.per_row:
        chars = op.kopa.file.text_chars
        return (
            *(p for p in op.params if p.name != format_of(kopa, op).param),
            Param("member", False, {"type": "string"}, "읽을 파일 이름 (기본: 첫 파일, 본문)"),
            Param(
                "offset",
                False,
                {"type": "integer", "minimum": 0},
                f"읽기 시작할 글자 위치 (기본 0, 한 번에 {chars:,}자)",
            ),
        )
    if op.kopa.shape == "file":
        spec = op.kopa.file
        page_size = "페이지당 건수"
        largest: JSON = {}
        if spec is not None:
            page_size += f" (기본 {spec.page_size}, 최대 {spec.max_page_size})"
            largest = {"maximum": spec.max_page_size}
        return (
            *(
                Param(f.param, False, {"type": "string"}, f.description or f.column)
                for f in op.kopa.local_filters
            ),
            Param("page", False, {"type": "integer", "minimum": 1}, "페이지 번호 (기본 1)"),
            Param("page_size", False, {"type": "integer", "minimum": 1, **largest}, page_size),
        )
    switch = format_of(kopa, op).param
    return tuple(p for p in op.params if p.name != switch)


def tool_arguments(kopa: PlatformKopa, op: Operation) -> dict[str, JSON]:
    """The arguments of the operation's tool with the JSON Schema each is checked against (see `tool_params`)."""
    return {p.name: p.schema for p in tool_params(kopa, op)}


_META = Draft202012Validator(Draft202012Validator.META_SCHEMA)
_VALID_SCHEMAS: set[str] = (
    set()
)  # schemas (as canonical JSON) the meta-schema accepted: catalogs repeat a few


def _check_schema(schema: Any, loc: Loc, src: Source, out: Diagnostics) -> None:
    key = json.dumps(schema, sort_keys=True, ensure_ascii=False, default=str)
    if key in _VALID_SCHEMAS:
        return
    found = len(out.items)
    for err in _META.iter_errors(schema):
        where = (*loc, *(p for p in err.absolute_path if isinstance(p, str | int)))
        out.items.append(src.diag(where, f"invalid JSON Schema: {err.message}"))
    _check_patterns(schema, loc, src, out)
    if len(out.items) == found:
        _VALID_SCHEMAS.add(key)


def _check_patterns(node: Any, loc: Loc, src: Source, out: Diagnostics) -> None:
    """Every `pattern` is a regular expression the generated tools (Python `re`) can compile."""
    if isinstance(node, dict):
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            try:
                re.compile(pattern)
            except re.error as exc:
                out.items.append(
                    src.diag((*loc, "pattern"), f"invalid regular expression {pattern!r}: {exc}")
                )
        for key, value in node.items():
            if key != "pattern":
                _check_patterns(value, (*loc, key), src, out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_patterns(value, (*loc, i), src, out)


def load_platform(
    path: Path, root: Path, families: Mapping[str, bool]
) -> tuple[Platform | None, list[Diagnostic]]:
    """Load and check one `specs/platforms/<id>/openapi.yaml`. Returns the platform (None on errors) and all
    diagnostics found; never raises for a bad spec. `families` are the envelope families the project knows (name
    -> whether it places echoed fields): the plug-ins are named by whoever assembles the project, so the language
    imports none of them."""
    diags = Diagnostics()
    try:
        src = load_yaml(path, root)
    except YamlError as exc:
        return None, exc.diagnostics
    doc = src.data
    if not isinstance(doc, dict):
        diags.items.append(src.diag((), "a platform spec must be a YAML mapping (an OpenAPI document)"))
        return None, diags.items
    src, digest = expand_catalogs(path, root, src, diags)  # bulk catalogs become ordinary operations
    if diags.errors:
        return None, diags.items

    _dangling_refs(doc, doc, (), src, diags)
    if diags.errors:
        return None, diags.items
    for where, message in openapi_errors(doc, digest):
        diags.items.append(src.diag(where, f"OpenAPI 3.1 validation: {message}"))

    kopa = validate_model(PlatformKopa, doc.get("x-kopa"), src, ("x-kopa",), diags)
    servers = doc.get("servers") or []
    if not servers:
        diags.items.append(src.diag(("servers",), "give the real server URL under servers[0].url"))
    ops: list[Operation] = []
    before = len(diags.errors)
    for route, item in (doc.get("paths") or {}).items():
        for method, raw in (item or {}).items():
            if method not in ("get", "post", "put", "delete"):
                continue
            loc: Loc = ("paths", route, method)
            op = _load_operation(doc, src, loc, route, method, raw, kopa, diags)
            if op is not None:
                ops.append(op)
    if kopa is not None:
        _check_platform(doc, src, kopa, ops, families, diags)
        if (
            len(diags.errors) == before
        ):  # with an operation missing, every example it takes would read as unused
            _check_examples(src, kopa, ops, diags)
        tools = {op.tool for op in ops}
        for k, tool in enumerate(kopa.entry):
            if tool not in tools:
                diags.items.append(
                    src.diag(
                        ("x-kopa", "entry", k),
                        f"entry tool {tool!r} is no tool of platform {kopa.platform!r}; name one of its tools "
                        "(`kopa-gen tools " + kopa.platform + "` lists them)",
                    )
                )
    if diags.errors or kopa is None:
        return None, diags.items
    platform = Platform(kopa.platform, src.file, digest, doc, kopa, servers[0]["url"], tuple(ops), src)
    return platform, diags.items


def _load_operation(
    doc: JSON,
    src: Source,
    loc: Loc,
    route: str,
    method: str,
    raw: JSON,
    kopa: PlatformKopa | None,
    diags: Diagnostics,
) -> Operation | None:
    okopa = validate_model(OperationKopa, raw.get("x-kopa"), src, (*loc, "x-kopa"), diags)
    params: list[Param] = []
    for i, p in enumerate(raw.get("parameters") or []):
        ploc: Loc = (*loc, "parameters", i)
        if "$ref" in p:
            p = resolve(doc, p["$ref"])
        schema = p.get("schema", {})
        _check_schema(schema, (*ploc, "schema"), src, diags)
        params.append(Param(p["name"], bool(p.get("required", False)), schema, p.get("description", "")))
    if okopa is None:
        return None
    kloc: Loc = (*loc, "x-kopa")
    if kopa is not None and not okopa.tool.startswith(kopa.platform + "_"):
        diags.items.append(src.diag((*kloc, "tool"), f"tool name must start with '{kopa.platform}_'"))
    try:
        row = resolve(doc, okopa.row)
    except KeyError:
        diags.items.append(
            src.diag((*kloc, "row"), f"row schema {okopa.row!r} does not exist under components")
        )
        return None
    if "$ref" in row:
        row = resolve(doc, row["$ref"])
    props = row.get("properties") or {}
    if not props:
        diags.items.append(src.diag((*kloc, "row"), "the row schema must be an object with properties"))
    names = {p.name for p in params}
    bound = okopa.source or KopaSource(table="unbound", filters=okopa.filters or [])
    at: Loc = ("source",) if okopa.source else ()  # the synthesised table's filters are x-kopa.filters
    for i, f in enumerate(bound.filters):
        if f.param not in names:
            diags.items.append(
                src.diag(
                    (*kloc, *at, "filters", i, "param"),
                    f"filter parameter {f.param!r} is not a parameter",
                )
            )
    for i, f in enumerate(bound.filters):
        for fallback in f.default:
            if fallback != "today" and fallback not in names:
                diags.items.append(
                    src.diag(
                        (*kloc, *at, "filters", i, "default"),
                        f"default {fallback!r} is neither a parameter nor `today`",
                    )
                )
    if okopa.span is not None:
        for field_name in ("start", "end"):
            if getattr(okopa.span, field_name) not in names:
                diags.items.append(
                    src.diag(
                        (*kloc, "span", field_name), f"{getattr(okopa.span, field_name)!r} is not a parameter"
                    )
                )
    if bound.sort is not None and bound.sort.param not in names:
        diags.items.append(
            src.diag((*kloc, *at, "sort", "param"), f"sort parameter {bound.sort.param!r} is not a parameter")
        )
    # a bound source's columns are checked against its world table when the project loads (check_bindings): a
    # filter or an order may use a column the rows do not show
    if okopa.held and okopa.source is not None:
        diags.items.append(
            src.diag(
                (*kloc, "held"),
                "`held` adds columns to a synthesised table; a bound source has its own: remove one",
            )
        )
    sent = {str(p).lower() for p in props}
    for name in sorted(n for n in okopa.held if n.lower() in sent):
        diags.items.append(
            src.diag(
                (*kloc, "held", name),
                f"{name!r} is sent (a property of the row schema, names compared without case as SQLite does) "
                "and held back: keep one",
            )
        )
    for group, columns in (
        ("filters", [] if okopa.source else [f.column for f in bound.filters]),
        ("order", [] if okopa.source else [o.column for o in bound.order]),
    ):
        for i, column in enumerate(columns):
            if column not in props and column not in okopa.held:
                diags.items.append(
                    src.diag(
                        (*kloc, *at, group, i, "column"),
                        f"column {column!r} is not a property of the row schema {okopa.row}; "
                        "add it to the row schema or bind another column",
                    )
                )
    for i, f in enumerate(okopa.local_filters):
        if f.column not in props:
            diags.items.append(
                src.diag((*kloc, "local_filters", i, "column"), f"column {f.column!r} not in row")
            )
    found: list[Diagnostic] = []
    row_props = wire_props(
        lambda ref: resolve(doc, ref),
        props,
        okopa.nested,
        f"row schema {okopa.row}",
        (*kloc, "nested"),
        (*kloc, "row"),
        src.diag,
        found,
    )
    diags.items.extend(found)
    _check_nested_filters(src, okopa.nested, row_props, names, (*kloc, "nested"), diags)
    fixed = dict(parse_qsl(route.partition("?")[2], keep_blank_values=True))
    _check_echo(src, okopa.echo, names | set(fixed), (*kloc, "echo"), "this operation", diags)
    if (okopa.effect == "write") != (okopa.write is not None):
        diags.items.append(
            src.diag(kloc, "an operation has a `write:` block exactly when its effect is write")
        )
    if okopa.write is not None:
        for i, param in enumerate(okopa.write.values.values()):
            if param not in names:
                diags.items.append(src.diag((*kloc, "write", "values", i), f"{param!r} is not a parameter"))
    if okopa.shape == "file" and okopa.file is None:
        diags.items.append(src.diag(kloc, "shape: file needs a `file:` block (member, row_element)"))
    _check_layout(src, doc, okopa, props, kopa, kloc, diags)
    return Operation(
        operation_id=raw.get("operationId", route),
        path=route,
        method=method,
        summary=raw.get("summary", ""),
        description=raw.get("description", ""),
        params=tuple(params),
        kopa=okopa,
        row_schema=row,
        row_name=okopa.row.rsplit("/", 1)[-1],
        row_props=row_props,
    )


def _check_layout(
    src: Source,
    doc: JSON,
    okopa: OperationKopa,
    props: JSON,
    kopa: PlatformKopa | None,
    loc: Loc,
    diags: Diagnostics,
) -> None:
    """A per-row file names two row properties and a declared `missing` code; a grouped answer is a list whose groups
    name item schemas that exist and whose `by` is a row property."""
    spec = okopa.file
    missing = spec.missing if spec is not None else None
    if missing is not None and kopa is not None and missing not in {c.code for c in kopa.codes}:
        diags.items.append(
            src.diag((*loc, "file", "missing"), f"code {missing!r} is not listed in x-kopa.codes")
        )
    for key in ("name_column", "content_column"):
        column = getattr(spec, key) if spec is not None else None
        if column is not None and column not in props:
            diags.items.append(
                src.diag((*loc, "file", key), f"{column!r} is not a property of the row schema {okopa.row}")
            )
    groups = okopa.groups
    if groups is None:
        return
    if okopa.shape != "list":
        diags.items.append(
            src.diag((*loc, "groups"), "groups lay out a list: give this operation `shape: list`")
        )
    if groups.by not in props:
        diags.items.append(
            src.diag((*loc, "groups", "by"), f"{groups.by!r} is not a property of the row schema {okopa.row}")
        )
    for title, pointer in groups.schemas.items():
        try:
            found = resolve(doc, pointer)
        except KeyError:
            found = None
        if not isinstance(found, dict) or not isinstance(found.get("properties"), dict):
            diags.items.append(
                src.diag(
                    (*loc, "groups", "schemas", title),
                    f"{pointer!r} is not an object schema with properties; point at one under components.schemas",
                )
            )


def _check_nested_filters(
    src: Source, nested: list[Nested], props: JSON, params: set[str], loc: Loc, diags: Diagnostics
) -> None:
    """Each sub-list filter compares a parameter of the operation with a column of the items, by equality."""
    for i, entry in enumerate(nested):
        item_props = ((props.get(entry.field) or {}).get("items") or {}).get("properties") or {}
        for j, f in enumerate(entry.filters):
            here: Loc = (*loc, i, "filters", j)
            if f.param not in params:
                diags.items.append(
                    src.diag((*here, "param"), f"filter parameter {f.param!r} is not a parameter")
                )
            if f.column not in item_props:
                diags.items.append(
                    src.diag(
                        (*here, "column"), f"column {f.column!r} is not a property of the {entry.field} items"
                    )
                )
            if f.match != "eq":
                diags.items.append(
                    src.diag((*here, "match"), "a sub-list filter compares by equality: use eq")
                )
        _check_nested_filters(src, entry.nested, item_props, params, (*loc, i, "nested"), diags)


def _check_echo(
    src: Source, echo: list[Echo], params: set[str], loc: Loc, owner: str, diags: Diagnostics
) -> None:
    """Each echoed field once, each repeating a parameter `owner` takes."""
    fields: set[str] = set()
    for i, entry in enumerate(echo):
        if entry.field in fields:
            diags.items.append(src.diag((*loc, i, "field"), f"echo field {entry.field!r} is given twice"))
        fields.add(entry.field)
        if entry.param not in params:
            diags.items.append(
                src.diag(
                    (*loc, i, "param"),
                    f"echo parameter {entry.param!r} is not a parameter of {owner}; repeat one of its "
                    "parameters (or declare the echo on the operations that take it)",
                )
            )


def _check_platform(
    doc: JSON,
    src: Source,
    kopa: PlatformKopa,
    ops: list[Operation],
    families: Mapping[str, bool],
    diags: Diagnostics,
) -> None:
    schemes = (doc.get("components") or {}).get("securitySchemes") or {}
    scheme = schemes.get(kopa.auth.scheme)
    if not scheme or scheme.get("type") != "apiKey" or scheme.get("in") != "query":
        diags.items.append(
            src.diag(("x-kopa", "auth", "scheme"), "must name an apiKey security scheme with `in: query`")
        )
    if kopa.envelope not in families:
        diags.items.append(
            src.diag(
                ("x-kopa", "envelope"),
                f"unknown envelope family {kopa.envelope!r}; known: {', '.join(sorted(families))} "
                "(a new family is one module in kopa_gen/envelopes/)",
            )
        )
    else:
        _check_platform_echo(src, kopa, ops, families[kopa.envelope], diags)
    seen_codes: set[str] = set()
    for i, c in enumerate(kopa.codes):
        if c.code in seen_codes:
            diags.items.append(src.diag(("x-kopa", "codes", i, "code"), f"code {c.code!r} is listed twice"))
        seen_codes.add(c.code)
    if kopa.paging is not None and kopa.paging.default_size > kopa.paging.max_size:
        diags.items.append(
            src.diag(
                ("x-kopa", "paging", "default_size"),
                f"default_size {kopa.paging.default_size} is above max_size {kopa.paging.max_size}",
            )
        )
    _check_sandbox_key(src, kopa, diags)
    declared = {c.code for c in kopa.codes}
    for situation, code in kopa.answers.model_dump().items():
        if code is not None and code not in declared:
            diags.items.append(
                src.diag(("x-kopa", "answers", situation), f"code {code!r} is not listed in x-kopa.codes")
            )
    routes: dict[tuple[str, str, tuple[tuple[str, str], ...]], str] = {}
    for op in ops:
        fixed = (op.method, op.route, tuple(sorted(op.fixed_query.items())))
        if fixed in routes:
            diags.items.append(
                src.diag(
                    ("paths", op.path, op.method),
                    f"{op.path} is the same request as {routes[fixed]}; fix another query value after '?'",
                )
            )
        routes.setdefault(fixed, op.path)
    seen: dict[str, str] = {}
    for op in ops:
        if op.tool in seen:
            diags.items.append(
                src.diag(
                    ("paths", op.path, op.method, "x-kopa", "tool"),
                    f"duplicate tool name {op.tool!r} (also {seen[op.tool]}); give each operation its own name",
                )
            )
        seen[op.tool] = op.path
        switch = format_of(kopa, op).param
        if switch and op.kopa.shape != "file" and op.param(switch) is None:
            own = op.kopa.format is not None
            diags.items.append(
                src.diag(
                    ("paths", op.path, op.method, "parameters"),
                    f"format parameter {switch!r} missing"
                    + (" (x-kopa.format of this operation)" if own else " (the platform's x-kopa.format)")
                    + ": add it to the parameters or give the operation its own x-kopa.format",
                )
            )


def _check_platform_echo(
    src: Source, kopa: PlatformKopa, ops: list[Operation], echoes: bool, diags: Diagnostics
) -> None:
    """The platform's echo names a parameter of every operation that answers in an envelope, and the family
    places echoed fields at all (`echoes`)."""
    fields: set[str] = set()
    for i, entry in enumerate(kopa.echo):
        if entry.field in fields:
            diags.items.append(
                src.diag(("x-kopa", "echo", i, "field"), f"echo field {entry.field!r} is given twice")
            )
        fields.add(entry.field)
        lacking = [
            op.tool
            for op in ops
            if op.kopa.shape != "file"
            and not op.takes(entry.param)
            and all(own.field != entry.field for own in op.kopa.echo)
        ]
        if lacking:
            diags.items.append(
                src.diag(
                    ("x-kopa", "echo", i, "param"),
                    f"echo parameter {entry.param!r} is not a parameter of {', '.join(lacking)}; declare this "
                    "echo on the operations that take it",
                )
            )
    if not echoes:
        where: list[Loc] = [("x-kopa", "echo")] if kopa.echo else []
        where += [("paths", op.path, op.method, "x-kopa", "echo") for op in ops if op.kopa.echo]
        for loc in where:
            diags.items.append(
                src.diag(
                    loc,
                    f"envelope family {kopa.envelope!r} places no echoed fields (its real API repeats none); "
                    "remove `echo` or teach the family where they go (kopa_gen/envelopes/)",
                )
            )


def _check_sandbox_key(src: Source, kopa: PlatformKopa, diags: Diagnostics) -> None:
    try:
        pattern = re.compile(kopa.auth.key_pattern)
    except re.error as exc:
        diags.items.append(src.diag(("x-kopa", "auth", "key_pattern"), f"invalid regular expression: {exc}"))
        return
    key = kopa.auth.sandbox_key
    if key is not None and not pattern.fullmatch(key):
        diags.items.append(
            src.diag(
                ("x-kopa", "auth", "sandbox_key"),
                f"sandbox key does not match key_pattern {pattern.pattern!r}",
            )
        )
    elif key is None and generated_key(kopa) is None:
        diags.items.append(
            src.diag(
                ("x-kopa", "auth", "key_pattern"),
                "no built-in key shape (40 or 32 hex digits, base64, decimal digits) matches this pattern; give "
                "x-kopa.auth.sandbox_key: a key of the platform's own format that the sandbox will accept",
            )
        )


def generated_key(kopa: PlatformKopa) -> str | None:
    """A key of a common shape (40 or 32 hex digits, base64 of 64 bytes, 1 to 40 decimal digits) matching the key
    pattern, derived from the platform id; None when none of them matches. Every data.go.kr service shares one key,
    as one data.go.kr account's key serves every service the account applied for."""
    owner = "data.go.kr account" if kopa.gateway == "datagokr" else kopa.platform
    digest = hashlib.sha512(f"kopa-gen sandbox key for {owner}".encode()).digest()
    digits = str(int.from_bytes(digest, "big"))
    shapes = (digest.hex()[:40], digest.hex()[:32], base64.b64encode(digest).decode())
    for candidate in (*shapes, *(digits[:n] for n in range(1, 41))):
        try:
            if re.fullmatch(kopa.auth.key_pattern, candidate):
                return candidate
        except re.error:
            return None
    return None


def _check_examples(src: Source, kopa: PlatformKopa, ops: list[Operation], diags: Diagnostics) -> None:
    """Every example value must be one every tool taking that argument accepts (EDGE passes it unchanged), except
    a tool with its own examples for the argument: those are checked against that tool alone."""
    takers: dict[str, list[tuple[str, JSON]]] = {}
    for op in ops:
        arguments = tool_arguments(kopa, op)
        for name, schema in arguments.items():
            if name not in op.kopa.examples:
                takers.setdefault(name, []).append((op.tool, schema))
        at: Loc = ("paths", op.path, op.method, "x-kopa", "examples")
        for name, values in op.kopa.examples.items():
            if name not in arguments:
                diags.items.append(
                    src.diag(
                        (*at, name),
                        f"tool {op.tool!r} takes no argument {name!r}; key its examples by its argument names "
                        "(see generated/servers/<platform>/tools.json)",
                    )
                )
                continue
            _check_values(src, (*at, name), values, [(op.tool, arguments[name])], diags)
    every = {name for op in ops for name in tool_arguments(kopa, op)}
    for name, values in kopa.examples.items():
        loc: Loc = ("x-kopa", "examples", name)
        if name not in every:
            diags.items.append(
                src.diag(
                    loc,
                    f"no tool of platform {kopa.platform!r} takes an argument {name!r}; "
                    "key examples by tool argument name (see generated/servers/<platform>/tools.json)",
                )
            )
            continue
        _check_values(src, loc, values, takers.get(name, []), diags)


def _check_values(
    src: Source, loc: Loc, values: list[str | int], takers: list[tuple[str, JSON]], diags: Diagnostics
) -> None:
    if not values:
        diags.items.append(src.diag(loc, "give at least one value or remove the argument"))
    for i, value in enumerate(values):
        failures: dict[str, list[str]] = {}
        for tool, schema in takers:
            for err in Draft202012Validator(schema).iter_errors(value):
                failures.setdefault(err.message, []).append(tool)
        for message, tools in failures.items():
            which = tools[0] if len(tools) == 1 else f"{tools[0]} and {len(tools) - 1} more"
            diags.items.append(
                src.diag((*loc, i), f"{message} (tool {which}); give a value the real API accepts")
            )

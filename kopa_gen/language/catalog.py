"""Bulk catalogs: one file lists the many datasets of a portal that serves them all in one envelope (the National
Assembly's hub services, OpenDART's full list, law.go.kr's targets), and each dataset becomes an ordinary OpenAPI
path, operation and row schema of the platform's document at load, before anything is checked.

A dataset is a few lines (code, Korean name, parameters and how they select rows, fields); what every dataset
shares (the common parameters, the response envelope) is written once in the catalog's `defaults`. Everything
downstream (openapi-spec-validator, the generated tools, the sandbox, the client) sees hand-written operations.
Mistakes are reported at the catalog's line, and so are those the later checks of the expanded document find
(a dangling `$ref`, a binding the world lacks): `ExpandedSource` sends them back to the dataset they came from.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from kopa_gen.language.diagnostics import Diagnostic, Diagnostics
from kopa_gen.language.kopa import Echo, Format, Match, Provenance, Source, StrictModel
from kopa_gen.language.source import Loc, YamlError, load_yaml, resolve, validate_model
from kopa_gen.language.source import Source as YamlSource
from kopa_gen.language.world import ColumnGen

JSON = dict[str, Any]
NAME = r"^[^\W\d]\w*$"  # a parameter or field name: letters of any script, digits, _
CONDITION_MATCH: dict[str, Match] = {
    "EQ": "eq",
    "LIKE": "contains",
    "GTE": "gte",
    "GT": "gt",
    "LTE": "lte",
    "LT": "lt",
}
"""행정안전부's condition parameters, `cond[COLUMN::OP]`: how each OP selects rows of COLUMN."""
COND = re.compile(rf"^cond\[({NAME[1:-1]})::({'|'.join(CONDITION_MATCH)})\]$")
PARAM = rf"{NAME}|{COND.pattern}"  # a parameter name: a plain name or a condition
MAX_TOOL = 64  # MCP clients refuse longer tool names

ValueType = Literal["string", "integer", "number"]


class CatalogParam(StrictModel):
    """A request parameter of one dataset and the rows it selects."""

    name: str = Field(
        json_schema_extra={"pattern": PARAM},
        description="The query parameter exactly as the real API spells it: a name, or `cond[COLUMN::OP]` (OP one "
        "of EQ, LIKE, GTE, GT, LTE, LT), whose `field` and `match` are then COLUMN and the OP's.",
    )
    description: str = Field(default="", description="Korean description, as the API guide gives it.")
    type: ValueType = Field(default="string", description="JSON type of the value.")
    required: bool = Field(default=False, description="The real API answers an error without it.")
    match: Match = Field(default="eq", description="How the value selects rows of `field`.")
    field: str | None = Field(
        default=None, description="The row field it selects on; default: the field of the same name."
    )
    enum: list[str | int] | None = Field(
        default=None, description="The values the API accepts, if a closed list."
    )
    pattern: str | None = Field(default=None, description="A regular expression every value matches.")

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if re.match(NAME, name) is None and COND.match(name) is None:
            raise ValueError(
                f"{name!r} is neither a name (letters, digits, _) nor a condition cond[COLUMN::OP] with OP one of "
                f"{', '.join(CONDITION_MATCH)}"
            )
        return name

    @model_validator(mode="before")
    @classmethod
    def _condition(cls, data: Any) -> Any:
        """`cond[COLUMN::OP]` selects on COLUMN as OP says: `field` and `match` follow from it, and a written one
        that contradicts it is a mistake."""
        name = data.get("name") if isinstance(data, dict) else None
        cond = COND.match(name) if isinstance(name, str) else None
        if cond is None or not isinstance(data, dict):
            return data
        implied = {"field": cond.group(1), "match": CONDITION_MATCH[cond.group(2)]}
        for key, value in implied.items():
            if data.get(key, value) != value:
                raise ValueError(
                    f"{data['name']} selects with {key} {value!r}, not {data[key]!r}: remove `{key}`"
                )
        return {**data, **implied}


class CatalogField(StrictModel):
    """One field of a dataset's rows."""

    name: str = Field(pattern=NAME, description="The field exactly as the real API sends it.")
    type: ValueType = Field(default="string", description="JSON type (hub portals send strings).")
    description: str = Field(default="", description="Korean description, as the API guide gives it.")
    enum: list[str | int] | None = Field(default=None, description="The values it takes, if a closed list.")
    attribute: bool = Field(
        default=False,
        description="In XML an attribute of the row's element, not a child (the DRF's `<law id=\"1\">`); a row "
        "whose world leaves it empty sends its position in the whole answer, as the DRF does.",
    )
    gen: ColumnGen | None = Field(
        default=None,
        description="How the default world fills it (becomes `x-kopa-gen`), where the rules from its name and "
        "type would be unrealistic: {person: full} for names, {choice: [...]} for parties.",
    )
    sent: bool = Field(
        default=True,
        description="false: the world holds it and a parameter selects on it, but the answer does not send it "
        "(the source names no such response field; becomes the operation's `x-kopa.held`).",
    )


class Dataset(StrictModel):
    """One dataset of the portal: one path, one operation, one tool."""

    code: str = Field(
        pattern=r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$",
        description="The dataset code, i.e. the URL path after the server URL: one segment (the hub's "
        "nwvrqwxyaytdsfvhu) or several (data.go.kr's GetCorpBasicInfoService_V2/getCorpOutline_V2).",
    )
    tool: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="MCP tool name (<platform>_<what>, at most 64 characters); default <platform>_<code in lower "
        "case, other characters as _>.",
    )
    summary: str = Field(min_length=1, description="The dataset's Korean name (국회의원 인적사항).")
    description: str = Field(default="", description="What it answers and where its arguments come from.")
    params: list[CatalogParam] = Field(
        default_factory=list, description="Its own parameters, after those every dataset takes."
    )
    fields: list[CatalogField] = Field(min_length=1, description="The fields of one row, in the API's order.")
    rows: int | None = Field(
        default=None, ge=1, description="Without `source`: rows of the synthesised table."
    )
    source: Source | None = Field(
        default=None,
        description="The world table or view serving it (as an operation's x-kopa.source); its filters default to "
        "the parameters' `match`. Absent: rows synthesised from the fields.",
    )
    provenance: Provenance | None = Field(
        default=None, description="Where its facts come from (else the catalog's `defaults.provenance`)."
    )
    examples: dict[str, list[str | int]] = Field(
        default_factory=dict,
        description="Sample argument values for this dataset alone (an operation's `x-kopa.examples`).",
    )
    envelope: dict[str, str] = Field(
        default_factory=dict,
        description="Values of the response template's other placeholders, `{name}` as a whole key or value "
        "(the DRF's element names: {root: CgmExpc, item: cgmExpc}).",
    )
    format: Format | None = Field(
        default=None,
        description="Its format switch where it differs from the platform's (an operation's `x-kopa.format`): "
        "{param: type, json: json, xml: xml}, or {} for a dataset that takes none (it answers in `default`). A "
        "`param` it names is added to its parameters.",
    )


class Defaults(StrictModel):
    """What every dataset of the catalog shares."""

    path: str = Field(
        default="/{code}", pattern=r"^/.*\{code\}", description="The path of a dataset; {code} is its code."
    )
    parameters: list[JSON] = Field(
        default_factory=list,
        description="OpenAPI parameter objects every dataset takes first (key, format, paging), or $refs into "
        "the spec's components.parameters.",
    )
    response: JSON = Field(
        description="The JSON Schema of the 200 answer: the envelope, with `{code}` (a key or value) standing for "
        "the dataset code and `{row}` for the JSON pointer of its row schema."
    )
    rows: int = Field(default=120, ge=1, description="Rows of each synthesised table, unless a dataset says.")
    echo: list[Echo] = Field(
        default_factory=list,
        description="Request parameters every dataset's envelope repeats back (an operation's `x-kopa.echo`).",
    )
    provenance: Provenance | None = Field(
        default=None, description="Where the datasets' facts come from, unless a dataset says."
    )


class Catalog(StrictModel):
    """A bulk catalog file (x-kopa.catalog): datasets sharing one envelope."""

    defaults: Defaults
    datasets: list[Dataset] = Field(min_length=1)


@dataclass
class ExpandedSource(YamlSource):
    """The platform spec with its catalogs expanded in: a place inside an expanded dataset is reported at the
    catalog line it came from."""

    redirects: dict[Loc, tuple[YamlSource, Loc]] = field(default_factory=dict)

    def diag(self, loc: Sequence[str | int], message: str) -> Diagnostic:
        key = tuple(loc)
        for n in range(len(key), 0, -1):
            hit = self.redirects.get(key[:n])
            if hit is not None:
                src, base = hit
                return src.diag((*base, *key[n:]), message)
        return super().diag(loc, message)


def tool_name(platform: str, dataset: Dataset) -> str:
    """The dataset's tool: its own `tool`, else `<platform>_<code>` in lower case with other characters as `_`."""
    if dataset.tool is not None:
        return dataset.tool
    return f"{platform}_{re.sub(r'[^a-z0-9]+', '_', dataset.code.lower()).strip('_')}"


def row_schema_name(tool: str) -> str:
    """`assembly_list_members` -> `AssemblyListMembersRow`."""
    return "".join(part.capitalize() for part in tool.split("_")) + "Row"


def expand_catalogs(path: Path, root: Path, src: YamlSource, diags: Diagnostics) -> tuple[YamlSource, str]:
    """Expand every catalog the spec's `x-kopa.catalog` names into its document (in place). Returns the source to
    report the document's problems through and the spec's digest (openapi.yaml and its catalogs)."""
    digest = hashlib.sha256(path.read_bytes())
    doc = src.data
    kopa = doc.get("x-kopa")
    files = kopa.get("catalog") if isinstance(kopa, dict) else None
    platform = kopa.get("platform") if isinstance(kopa, dict) else None
    if not files or not isinstance(files, list) or not isinstance(platform, str):
        return src, digest.hexdigest()  # nothing to expand; a malformed x-kopa is reported by its own check
    out = ExpandedSource(src.file, src.data, src.lines)
    expansion = _Expansion(doc, platform, out, diags)
    for i, name in enumerate(files):
        file = path.parent / str(name)
        if not isinstance(name, str) or not file.is_file():
            diags.items.append(
                src.diag(
                    ("x-kopa", "catalog", i),
                    f"catalog file {name!r} does not exist; write it beside {path.name} or fix the name",
                )
            )
            continue
        try:
            catalog_src = load_yaml(file, root)
        except YamlError as exc:
            diags.items.extend(exc.diagnostics)
            continue
        digest.update(file.read_bytes())
        catalog = validate_model(Catalog, catalog_src.data, catalog_src, (), diags)
        if catalog is not None:
            expansion.add(catalog, catalog_src)
    return out, digest.hexdigest()


class _Expansion:
    """Adds datasets to one document, remembering what is taken across its catalogs."""

    def __init__(self, doc: JSON, platform: str, out: ExpandedSource, diags: Diagnostics) -> None:
        self.doc, self.platform, self.out, self.diags = doc, platform, out, diags
        self.paths: JSON = doc.setdefault("paths", {})
        self.schemas: JSON = doc.setdefault("components", {}).setdefault("schemas", {})
        # tool -> where it is defined, starting with the hand-written operations
        self.tools: dict[str, str] = {
            str(raw["x-kopa"]["tool"]): f"{out.file} paths.{route}"
            for route, item in self.paths.items()
            if isinstance(item, dict)
            for raw in item.values()
            if isinstance(raw, dict) and isinstance(raw.get("x-kopa"), dict) and "tool" in raw["x-kopa"]
        }
        self.hand_written = set(self.paths)
        fmt = doc.get("x-kopa", {}).get("format") if isinstance(doc.get("x-kopa"), dict) else None
        self.switch = fmt.get("param") if isinstance(fmt, dict) else None  # the platform's format switch
        self.codes: dict[str, str] = {}  # code -> file:line of its dataset

    def add(self, catalog: Catalog, src: YamlSource) -> None:
        shared = self._shared_names(catalog, src)
        for j, dataset in enumerate(catalog.datasets):
            if self._check(dataset, j, shared, catalog, src):
                self._write(dataset, j, catalog, src)

    def _shared_names(self, catalog: Catalog, src: YamlSource) -> set[str]:
        names: set[str] = set()
        for k, param in enumerate(catalog.defaults.parameters):
            if "$ref" in param:
                try:
                    param = resolve(self.doc, str(param["$ref"]))
                except KeyError:
                    self.diags.items.append(
                        src.diag(
                            ("defaults", "parameters", k, "$ref"),
                            f"dangling $ref {param['$ref']!r}: define it under components.parameters of "
                            f"{self.out.file} or fix the pointer",
                        )
                    )
                    continue
            if isinstance(param.get("name"), str):
                names.add(param["name"])
        return names

    def _check(self, ds: Dataset, j: int, shared: set[str], catalog: Catalog, src: YamlSource) -> bool:
        at: Loc = ("datasets", j)
        before = len(self.diags.errors)
        where = f"{src.file}:{src.line(at)}"
        if ds.code in self.codes:
            self.diags.items.append(
                src.diag(
                    (*at, "code"),
                    f"dataset code {ds.code!r} is listed twice (first at {self.codes[ds.code]}); remove one",
                )
            )
        self.codes.setdefault(ds.code, where)
        tool = tool_name(self.platform, ds)
        tloc: Loc = (*at, "tool" if ds.tool else "code")
        if not tool.startswith(self.platform + "_"):
            self.diags.items.append(src.diag(tloc, f"tool name must start with '{self.platform}_'"))
        if len(tool) > MAX_TOOL:
            self.diags.items.append(
                src.diag(
                    tloc,
                    f"tool name {tool!r} is {len(tool)} characters; MCP allows at most {MAX_TOOL}: "
                    "give the dataset a shorter `tool:`",
                )
            )
        if tool in self.tools:
            self.diags.items.append(
                src.diag(
                    tloc,
                    f"tool name {tool!r} is taken (by {self.tools[tool]}); give this dataset its own `tool:`",
                )
            )
        elif row_schema_name(tool) in self.schemas:
            self.diags.items.append(
                src.diag(
                    tloc,
                    f"row schema {row_schema_name(tool)} of tool {tool!r} is already under components.schemas; "
                    "rename that schema or the tool",
                )
            )
        self.tools.setdefault(tool, where)
        route = catalog.defaults.path.replace("{code}", ds.code)
        if route in self.hand_written:
            self.diags.items.append(
                src.diag(
                    (*at, "code"),
                    f"path {route} is already an operation of {self.out.file}; remove one of them",
                )
            )
        names: set[str] = set()
        for k, f in enumerate(ds.fields):
            if f.name in names:
                self.diags.items.append(
                    src.diag((*at, "fields", k, "name"), f"field {f.name!r} is listed twice; remove one")
                )
            names.add(f.name)
        params: set[str] = set()
        for k, p in enumerate(ds.params):
            ploc: Loc = (*at, "params", k)
            if p.name in params or p.name in shared:
                again = (
                    "listed twice" if p.name in params else "one every dataset takes (defaults.parameters)"
                )
                self.diags.items.append(
                    src.diag((*ploc, "name"), f"parameter {p.name!r} is {again}; remove it here")
                )
            params.add(p.name)
            target = p.field or p.name
            if target not in names and COND.match(p.name):
                self.diags.items.append(
                    src.diag(
                        (*ploc, "name"),
                        f"condition {p.name!r} selects on column {target!r}, which is not among the dataset's "
                        "fields: add it to `fields` or fix the condition",
                    )
                )
            elif target not in names:
                self.diags.items.append(
                    src.diag(
                        (*ploc, "field" if p.field else "name"),
                        f"parameter {p.name!r} selects on no field: add {target!r} to the dataset's fields or "
                        "name the field it selects on with `field:`",
                    )
                )
            if p.pattern is not None:
                try:
                    re.compile(p.pattern)
                except re.error as exc:
                    self.diags.items.append(
                        src.diag((*ploc, "pattern"), f"invalid regular expression {p.pattern!r}: {exc}")
                    )
        wanted = placeholders(catalog.defaults.response) - {"code", "row"}
        for name in sorted(wanted - set(ds.envelope)):
            self.diags.items.append(
                src.diag(
                    at,
                    f"the response template's {{{name}}} has no value here: add `envelope: {{{name}: ...}}`",
                )
            )
        for name in sorted(set(ds.envelope) - wanted):
            self.diags.items.append(
                src.diag(
                    (*at, "envelope", name),
                    f"the response template has no {{{name}}}: remove it, or use it in defaults.response",
                )
            )
        if ds.format is not None and ds.format.param in params:
            self.diags.items.append(
                src.diag(
                    (*at, "format"),
                    f"format parameter {ds.format.param!r} is also one of the dataset's params: remove it there, "
                    "or name the switch the API has",
                )
            )
        for k, f in enumerate(ds.fields):
            if ds.source is not None and not f.sent:
                self.diags.items.append(
                    src.diag(
                        (*at, "fields", k, "sent"),
                        "a field held back is a column of the synthesised table; a dataset with a `source` is "
                        "served by the world's table: select on one of its columns, or remove `source`",
                    )
                )
        if ds.source is not None and ds.rows is not None:
            self.diags.items.append(
                src.diag(
                    (*at, "rows"),
                    "`rows` sizes the synthesised table; a dataset with a `source` is served by the world: "
                    "remove one",
                )
            )
        return len(self.diags.errors) == before

    def _write(self, ds: Dataset, j: int, catalog: Catalog, src: YamlSource) -> None:
        at: Loc = ("datasets", j)
        tool = tool_name(self.platform, ds)
        row_name = row_schema_name(tool)
        row_ref = f"#/components/schemas/{row_name}"
        route = catalog.defaults.path.replace("{code}", ds.code)
        properties: JSON = {}
        held: JSON = {}
        for f in ds.fields:
            prop: JSON = {"type": f.type}
            if f.description:
                prop["description"] = f.description
            if f.enum is not None:
                prop["enum"] = list(f.enum)
            if f.attribute:
                prop["xml"] = {"attribute": True}
            if f.gen is not None:
                prop["x-kopa-gen"] = f.gen.model_dump(mode="json", exclude_defaults=True)
            (properties if f.sent else held)[f.name] = prop
        self.schemas[row_name] = {"type": "object", "description": ds.summary, "properties": properties}
        parameters: list[JSON] = [
            p for p in copy.deepcopy(catalog.defaults.parameters) if not self._platform_switch(p, ds)
        ]
        shared = len(parameters)
        for p in ds.params:
            schema: JSON = {"type": p.type}
            if p.enum is not None:
                schema["enum"] = list(p.enum)
            if p.pattern is not None:
                schema["pattern"] = p.pattern
            param: JSON = {"name": p.name, "in": "query", "required": p.required, "schema": schema}
            if p.description:
                param["description"] = p.description
            parameters.append(param)
        filters = [{"param": p.name, "column": p.field or p.name, "match": p.match} for p in ds.params]
        kopa: JSON = {"tool": tool, "effect": "read", "shape": "list", "row": row_ref}
        provenance = ds.provenance or catalog.defaults.provenance
        if provenance is not None:
            kopa["provenance"] = provenance.model_dump(mode="json", exclude_none=True)
        if ds.examples:
            kopa["examples"] = copy.deepcopy(ds.examples)
        if ds.format is not None:
            kopa["format"] = ds.format.model_dump(mode="json", by_alias=True, exclude_defaults=True)
            if ds.format.param is not None:
                values = [v for v in (ds.format.json_value, ds.format.xml_value) if v is not None]
                parameters.append(
                    {
                        "name": ds.format.param,
                        "in": "query",
                        "required": False,
                        "description": "응답 형식 (" + ", ".join(values) + ")",
                        "schema": {"type": "string", **({"enum": values} if values else {})},
                    }
                )
        if ds.source is not None:
            bound = ds.source.model_dump(mode="json")
            if not bound["filters"]:
                bound["filters"] = filters
            kopa["source"] = bound
        else:
            kopa["synth_rows"] = ds.rows or catalog.defaults.rows
            kopa["filters"] = filters
            if held:
                kopa["held"] = held
        if catalog.defaults.echo:
            kopa["echo"] = [e.model_dump(mode="json", exclude_none=True) for e in catalog.defaults.echo]
        response = _fill(catalog.defaults.response, {"code": ds.code, "row": row_ref, **ds.envelope})
        self.paths[route] = {
            "get": {
                "operationId": ds.code,
                "summary": ds.summary,
                "description": ds.description or ds.summary,
                "parameters": parameters,
                "responses": {
                    "200": {"description": ds.summary, "content": {"application/json": {"schema": response}}}
                },
                "x-kopa": kopa,
            }
        }
        self._redirect(ds, at, route, row_name, shared, src)

    def _platform_switch(self, param: JSON, ds: Dataset) -> bool:
        """Whether `param` (of `defaults.parameters`) is the platform's format switch that the dataset's own
        `format` replaces."""
        if ds.format is None or self.switch is None:
            return False
        if "$ref" in param:
            try:
                param = resolve(self.doc, str(param["$ref"]))
            except KeyError:
                return False  # reported by _shared_names
        return bool(param.get("name") == self.switch)

    def _redirect(
        self, ds: Dataset, at: Loc, route: str, row_name: str, shared: int, src: YamlSource
    ) -> None:
        """Send the expanded document's places back to the catalog lines they came from."""
        get: Loc = ("paths", route, "get")
        kopa: Loc = (*get, "x-kopa")
        places: dict[Loc, Loc] = {
            ("paths", route): at,
            get: at,
            kopa: at,
            (*kopa, "synth_rows"): (*at, "rows"),
            (*kopa, "examples"): (*at, "examples"),
            (*kopa, "format"): (*at, "format"),
            (*kopa, "held"): (*at, "fields"),
            (*kopa, "echo"): ("defaults", "echo"),
            (*get, "parameters", shared + len(ds.params)): (*at, "format"),
            (*kopa, "provenance"): (*at, "provenance")
            if ds.provenance is not None
            else ("defaults", "provenance"),
            (*get, "responses"): ("defaults", "response"),
            ("components", "schemas", row_name): (*at, "fields"),
        }
        for k in range(shared):
            places[(*get, "parameters", k)] = ("defaults", "parameters", k)
        for k in range(len(ds.params)):
            places[(*get, "parameters", shared + k)] = (*at, "params", k)
            places[(*get, "parameters", shared + k, "schema")] = (*at, "params", k)
            places[(*kopa, "filters", k)] = (*at, "params", k)
            if ds.source is not None and not ds.source.filters:  # the binding's filters are the parameters'
                places[(*kopa, "source", "filters", k)] = (*at, "params", k)
        for k, f in enumerate(ds.fields):
            prop: Loc = (
                ("components", "schemas", row_name, "properties", f.name)
                if f.sent
                else (*kopa, "held", f.name)
            )
            places[prop] = (*at, "fields", k)
            places[(*prop, "x-kopa-gen")] = (*at, "fields", k, "gen")
        self.out.redirects.update({loc: (src, base) for loc, base in places.items()})


PLACEHOLDER = re.compile(r"^\{(\w+)\}$")


def _fill(node: Any, values: dict[str, str]) -> Any:
    """The response template with its placeholders (`{code}`, `{row}`, a dataset's `envelope` names; whole keys or
    values) put in."""
    if isinstance(node, dict):
        return {_word(k, values): _fill(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, values) for v in node]
    return _word(node, values) if isinstance(node, str) else node


def _word(text: str, values: dict[str, str]) -> str:
    found = PLACEHOLDER.match(text)
    return values.get(found.group(1), text) if found else text


def placeholders(node: Any) -> set[str]:
    """The `{name}` placeholders of a response template."""
    if isinstance(node, dict):
        return {n for k, v in node.items() for n in placeholders(k) | placeholders(v)}
    if isinstance(node, list):
        return {n for v in node for n in placeholders(v)}
    found = PLACEHOLDER.match(node) if isinstance(node, str) else None
    return {found.group(1)} if found else set()

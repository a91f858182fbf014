"""The `x-kopa` extension: what kopa-gen needs to know about a platform beyond plain OpenAPI.

Every field carries a description; they become the exported JSON Schema that editors use.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


DOMAIN_ID = r"^[a-z][a-z0-9_]{1,31}$"
"""A domain id (finance, education, ...): the domains are data, declared in specs/domains.yaml."""


class DomainSpec(StrictModel):
    """One benchmark domain."""

    id: str = Field(pattern=DOMAIN_ID, description="Id used by platforms, tasks and fixture folders.")
    name: str = Field(description="Korean name, e.g. 금융.")
    description: str = Field(default="", description="What the domain covers.")


class HeldOut(StrictModel):
    """The held-out split: platforms withheld from synthesis and training, so a model's score on the benchmark's
    tasks that use them measures transfer to platforms it never trained on."""

    platforms: list[str] = Field(
        min_length=1, description="Platform ids no synthesized task and no training row may touch."
    )
    reason: str = Field(default="", description="Why these platforms (for the report).")


class Domains(StrictModel):
    """specs/domains.yaml: the benchmark's domains, and its held-out split."""

    domains: list[DomainSpec] = Field(min_length=1)
    held_out: HeldOut | None = Field(
        default=None,
        description="Platforms withheld from `kopa-gen edge synth` and `kopa-gen train export` (the tasks using "
        "them are the benchmark's held-out split).",
    )


class Category(StrEnum):
    """What a platform result code means. `auth`, `bad_param` and `no_data` are structural (the call was wrong);
    `quota`, `rate` and `server` are environmental (the same call may succeed later)."""

    OK = "ok"
    NO_DATA = "no_data"
    AUTH = "auth"
    QUOTA = "quota"
    RATE = "rate"
    BAD_PARAM = "bad_param"
    SERVER = "server"

    @property
    def environmental(self) -> bool:
        return self in (Category.QUOTA, Category.RATE, Category.SERVER)


class ResultCode(StrictModel):
    code: str = Field(
        description="The code exactly as the platform sends it (a string, e.g. '000', 'INFO-200', '30')."
    )
    message: str = Field(description="The platform's own message text for this code, verbatim.")
    category: Category = Field(
        description="What the code means to a client; decides retries and EDGE weighting."
    )
    gateway: bool = Field(
        default=False,
        description="True when the code is answered by the data.go.kr gateway (always XML OpenAPI_ServiceResponse).",
    )


class Answers(StrictModel):
    """Which code the platform answers with in each situation the sandbox can produce."""

    ok: str = Field(description="Success.")
    no_data: str = Field(
        description="Valid request, nothing matched (may equal `ok` where the platform says 00)."
    )
    bad_key: str = Field(description="Key missing, malformed or not registered.")
    missing_param: str = Field(description="A required parameter is absent.")
    invalid_param: str = Field(
        description="A parameter is not of its type (e.g. a page number that is not an integer)."
    )
    bad_value: str | None = Field(
        default=None,
        description="A value outside the parameter's enum or pattern; absent when the platform just finds no rows.",
    )
    page_size: str = Field(description="Page size above the platform's maximum.")
    quota: str = Field(description="Daily call quota exhausted.")
    rate: str = Field(description="Per-second rate limit exceeded.")
    server: str = Field(description="Provider-side failure.")


class Auth(StrictModel):
    scheme: str = Field(
        description="Name of the apiKey entry in components.securitySchemes (its `name` is the param)."
    )
    env: str = Field(description="Environment variable that holds the user's real key in live mode.")
    key_pattern: str = Field(
        description="Regex a well-formed key matches; used to make sandbox keys of the same shape."
    )
    optional: bool = Field(
        default=False,
        description="True when the platform serves a few sample rows without any key (NEIS hub).",
    )
    sandbox_key: str | None = Field(
        default=None,
        description="The key the sandbox accepts, in the platform's own format (must match key_pattern). Needed "
        "only when no common shape (40 or 32 hex digits, base64, decimal digits) matches key_pattern.",
    )


class Format(StrictModel):
    """How a client asks for JSON instead of the default XML."""

    param: str | None = Field(default=None, description="Query parameter that switches the format.")
    aliases: list[str] = Field(
        default_factory=list,
        description="Other spellings of `param` the platform also accepts (the NEIS hub takes `type` as well as "
        "`Type`, which clients such as neispy rely on).",
    )
    json_value: str | None = Field(
        default=None, alias="json", description="Value of `param` that asks for JSON."
    )
    xml_value: str | None = Field(
        default=None, alias="xml", description="Value of `param` that asks for XML."
    )
    extension: bool = Field(
        default=False, description="True when the format is the path suffix (.json / .xml)."
    )
    default: Literal["xml", "json"] = Field(
        default="xml",
        description="What the platform answers when nothing asks for a format (XML almost everywhere).",
    )
    json_content_type: str = Field(
        default="application/json;charset=UTF-8",
        description="Content-Type the platform sends with JSON (StanReginCd sends text/html).",
    )
    xml_content_type: str = Field(default="text/xml;charset=UTF-8", description="Content-Type sent with XML.")


class Paging(StrictModel):
    page: str = Field(description="Page-number parameter (1-based).")
    size: str = Field(description="Rows-per-page parameter.")
    default_size: int = Field(description="Rows per page when the size parameter is absent.")
    max_size: int = Field(description="Largest page size the platform accepts.")


class Limits(StrictModel):
    daily: int | None = Field(default=None, description="Calls per key per day before the quota code.")
    per_second: int | None = Field(default=None, description="Calls per key per second before the rate code.")


class Live(StrictModel):
    """How live mode talks to the real service beyond the key."""

    headers: dict[str, str] = Field(
        default_factory=dict,
        description="HTTP headers every live request sends, e.g. a browser User-Agent for services that refuse "
        "others (default: User-Agent kopa-gen).",
    )


class Echo(StrictModel):
    """A request parameter the envelope repeats back (law.go.kr answers a search with `<target>law</target>
    <키워드>자동차</키워드><page>1</page>`). Where it goes in the envelope is the family's business."""

    field: str = Field(description="Name of the field in the envelope, e.g. 키워드.")
    param: str = Field(description="Request parameter whose value is repeated, e.g. query.")
    default: str | None = Field(
        default=None,
        description="What is repeated when the request leaves the parameter out (the real service's default, "
        "e.g. '1' for a page number); without it the field is sent empty.",
    )


class Provenance(StrictModel):
    """Where an operation's facts come from and how far they are checked."""

    source: str = Field(
        min_length=1,
        description="Where the facts come from: the official guide page, a spec sheet, a package and its version "
        "(facts only: names, parameters, fields, codes).",
    )
    retrieved: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="When they were read (YYYY-MM-DD).")
    verified: Literal["live", "docs", "one-source"] = Field(
        description="`live`: checked against the real API; `docs`: an official document gives them, or two "
        "independent sources agree; `one-source`: a single unofficial source."
    )
    field_count: int | None = Field(
        default=None,
        ge=1,
        description="The fields a row has by the source, where it names only some: the operation lists (and the "
        "sandbox serves) the known ones only, never invented ones.",
    )


class PlatformKopa(StrictModel):
    """Top-level `x-kopa` of a platform's openapi.yaml."""

    platform: str = Field(
        pattern=r"^[a-z][a-z0-9]{1,15}$", description="Short id; every tool name starts with it."
    )
    domain: str | None = Field(
        pattern=DOMAIN_ID,
        description="Benchmark domain, one of specs/domains.yaml; null for the local workspace platform.",
    )
    envelope: str = Field(
        description="Envelope family of the platform's responses: the name a module in kopa_gen/envelopes/ "
        "registers (dart, flat, datagokr, hub, stanregin, ...)."
    )
    gateway: Literal["datagokr"] | None = Field(
        default=None, description="Gateway answering key/quota/rate errors in front of the provider, if any."
    )
    auth: Auth
    format: Format
    paging: Paging | None = Field(default=None, description="Paging parameters; absent when nothing pages.")
    codes: list[ResultCode] = Field(min_length=1, description="Every result code the platform documents.")
    answers: Answers
    limits: Limits = Field(default_factory=Limits)
    live: Live = Field(default_factory=Live, description="Live-mode request settings.")
    world: list[str] = Field(
        default_factory=list,
        description="World spec files (under specs/world/) whose tables this platform reads.",
    )
    local: bool = Field(
        default=False,
        description="The platform exists only inside kopa-gen (the agent's workspace); live mode serves it locally.",
    )
    real_data: bool = Field(
        default=False,
        description="The sandbox serves the real public master list here (the legal-district codes), not synthetic "
        "data: an answer read from it is a public fact a model may remember, and the build warns.",
    )
    provenance: Provenance | None = Field(
        default=None,
        description="Where the operations' facts come from, for those that do not say it themselves.",
    )
    examples: dict[str, list[str | int]] = Field(
        default_factory=dict,
        description="Sample argument values as the real API guide shows them, keyed by tool argument name "
        "(e.g. corp_code: ['00126380']). EDGE uses them as defaults for arguments no upstream result binds and as "
        "the starting arguments of probe chains, so pick values the sandbox world has data for. Every value must be "
        "valid for every tool of the platform that takes that argument.",
    )
    echo: list[Echo] = Field(
        default_factory=list,
        description="Request parameters every operation's envelope repeats back; an operation's own `echo` "
        "entries add to these and replace one of the same field.",
    )
    catalog: list[str] = Field(
        default_factory=list,
        description="Bulk catalog files beside openapi.yaml (e.g. catalog.yaml): each dataset in them becomes one "
        "operation and one tool at load (kopa_gen/language/catalog.py).",
    )
    day_format: str = Field(
        default="%Y%m%d",
        description="How the platform writes a day in its answers (strftime), e.g. '%Y-%m-%d' for 열린국회정보: "
        "the default world's synthesised date fields are written so (kopa_gen/world/synth.py).",
    )

    @field_validator("day_format")
    @classmethod
    def _a_day(cls, value: str) -> str:
        if not all(part in value for part in ("%Y", "%m", "%d")):
            raise ValueError(
                f"{value!r} is not a day: write a strftime format with %Y, %m and %d, e.g. '%Y-%m-%d'"
            )
        return value

    entry: list[str] = Field(
        default_factory=list,
        description="The tools a chain on this platform starts from: its code lookups (a company's corp_code, a "
        "school's code, an election's sgId). Search mode (`--tools-mode search`) lists them beside search_tools "
        "and call_tool, so an agent never has to search for where to begin.",
    )


Match = Literal["eq", "contains", "prefix", "gte", "lte", "gt", "lt", "in", "range"]
"""`range` takes `low~high` (either side may be left out, law.go.kr's `efYd=20240101~20241231`) and compares as
text, both ends included."""


class Filter(StrictModel):
    param: str = Field(description="Request parameter (or, for local_filters, tool argument) name.")
    column: str = Field(description="Column of the source table (a property of the row schema) it filters.")
    match: Match = Field(description="How the value selects rows; string comparison for ranges.")
    description: str | None = Field(default=None, description="Korean description (local_filters only).")
    default: list[str] = Field(
        default_factory=list,
        description="When the request leaves `param` out: the value of the first of these that has one, another "
        "request parameter's name or `today` (the world's today, YYYYMMDD). OpenDART's list.json: bgn_de "
        "[end_de, today], end_de [today].",
    )
    ignore: list[str] = Field(
        default_factory=list,
        description="Values of `param` that ask for no condition (OpenDART's last_reprt_at=N: every report).",
    )

    def value(self, params: Mapping[str, str], today: str) -> str | None:
        """The value this filter compares with for a request: the parameter's, else its `default`; None when the
        filter does not apply."""
        value = params.get(self.param)
        for fallback in self.default:
            if value:
                break
            value = today if fallback == "today" else params.get(fallback)
        return None if not value or value in self.ignore else value


class Span(StrictModel):
    """A longest allowed period between two date parameters (YYYYMMDD), after their filters' defaults: longer is
    the `answers.invalid_param` answer. OpenDART's list.json: at most 3 months without corp_code."""

    start: str = Field(description="Parameter of the first day, e.g. bgn_de.")
    end: str = Field(description="Parameter of the last day, e.g. end_de.")
    months: int = Field(ge=1, description="Calendar months from start that end may reach, that day included.")
    unless: list[str] = Field(
        default_factory=list, description="Parameters that lift the limit when given (OpenDART: corp_code)."
    )


class Order(StrictModel):
    column: str
    desc: bool = False


class Sort(StrictModel):
    """A request parameter that picks the order of the rows (law.go.kr's `sort=ldes`)."""

    param: str = Field(description="Request parameter naming the order, e.g. sort.")
    orders: dict[str, list[Order]] = Field(
        min_length=1,
        description="Parameter value -> the order it asks for (end with a unique key); an absent or unknown value "
        "keeps the source's `order`.",
    )
    flip: dict[str, str] | None = Field(
        default=None,
        description="A second parameter and the value of it that runs the chosen order the other way (OpenDART's "
        "{sort_mth: asc}, the orders being written as its default desc).",
    )


class Source(StrictModel):
    table: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="World table or view that serves the rows.")
    filters: list[Filter] = Field(default_factory=list)
    order: list[Order] = Field(default_factory=list, description="Total order (end with a unique key).")
    sort: Sort | None = Field(default=None, description="A request parameter that picks another order.")

    def order_for(self, params: Mapping[str, str]) -> list[Order]:
        """The order a request asks for: its `sort` value's, else the default `order`."""
        order = self.order
        if self.sort is not None:
            order = self.sort.orders.get(params.get(self.sort.param) or "", order)
            if self.sort.flip and any(params.get(k) == v for k, v in self.sort.flip.items()):
                order = [Order(column=o.column, desc=not o.desc) for o in order]
        return order


class Nested(StrictModel):
    """A sub-list of every row: the rows of a child table or view whose `key` columns equal the parent's, e.g. a
    law's articles and, inside each article, its paragraphs. The sandbox fills one level with one query."""

    field: str = Field(
        description="Property of the parent's schema that holds the sub-list: an array whose items are objects."
    )
    table: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="World table or view with the child rows.")
    key: dict[str, str] = Field(
        min_length=1,
        description="Child column -> parent property that links them, e.g. {law_id: law_id}. The parent property "
        "may be `writeOnly` to keep it off the wire.",
    )
    order: list[Order] = Field(
        default_factory=list, description="Order of the items inside one parent (end with a unique key)."
    )
    nested: list[Nested] = Field(default_factory=list, description="Sub-lists of each item, to any depth.")
    filters: list[Filter] = Field(
        default_factory=list,
        description="Request parameters that keep only some items (equality on an item column), e.g. law.go.kr's "
        "`JO` selecting one article of a law.",
    )


class FileSpec(StrictModel):
    """A download: a ZIP of one XML member built from all the source's rows (`member`, DART's CORPCODE.xml), which the
    tool turns into a searchable, paged list; or a ZIP of one member per source row selected by the request's
    parameters (`name_column` + `content_column`, DART's document.xml), which the tool lists with one member's text."""

    member: str | None = Field(default=None, description="File name inside the ZIP, e.g. CORPCODE.xml.")
    root: str = Field(default="result", description="Root element of the XML member.")
    row_element: str = Field(default="list", description="Element that wraps one row.")
    page_size: int = Field(default=100, description="Default rows per page the tool returns.")
    max_page_size: int = Field(default=100, description="Largest page the tool returns.")
    name_column: str | None = Field(
        default=None,
        description="Instead of `member`: the source column holding each member's file name; the source's filters "
        "select the rows of one request (one member per row, in the source's order).",
    )
    content_column: str | None = Field(
        default=None, description="With `name_column`: the source column holding each member's text (UTF-8)."
    )
    missing: str | None = Field(
        default=None,
        description="With `name_column`: the code answered when no row matches (OpenDART's 014 파일이 존재하지 "
        "않습니다); absent: `answers.no_data`.",
    )
    text: Literal["plain", "markup"] = Field(
        default="plain",
        description="With `name_column`: what the tool shows of a member: its text without tags (plain) or as it "
        "is (markup, e.g. an XBRL instance whose element names matter).",
    )
    text_chars: int = Field(
        default=4000,
        ge=100,
        description="With `name_column`: the most characters of a member one tool call shows; the tool says where "
        "it cut and which `offset` reads on.",
    )

    @model_validator(mode="after")
    def _one_layout(self) -> FileSpec:
        if (self.member is None) == (self.name_column is None):
            raise ValueError(
                "give exactly one of `member` (one file of every row) or `name_column` (a file per row)"
            )
        if (self.name_column is None) != (self.content_column is None):
            raise ValueError("`name_column` and `content_column` go together")
        return self

    @property
    def per_row(self) -> bool:
        """One member per selected row (document.xml), not one member of every row (corpCode.xml)."""
        return self.name_column is not None


class Groups(StrictModel):
    """A grouped answer: the rows split by a title column into `group: [{title, list: [...]}]`, each group's items
    laid out by its own schema (OpenDART's DS006 증권신고서: 일반사항, 증권의종류, ...). The source is one table
    or view holding every group's rows; a row may carry other groups' columns too, its item keeps its own schema's."""

    by: str = Field(description="Column of the source naming each row's group, e.g. title.")
    schemas: dict[str, str] = Field(
        min_length=1,
        description="Group title -> JSON pointer of its item schema, in the order the groups are sent; a group "
        "without rows is sent with an empty list.",
    )

    @field_validator("schemas")
    @classmethod
    def _pointers(cls, value: dict[str, str]) -> dict[str, str]:
        for title, pointer in value.items():
            if not pointer.startswith("#/components/schemas/"):
                raise ValueError(
                    f"group {title!r}: {pointer!r} is not a '#/components/schemas/<Name>' pointer"
                )
        return value


class Write(StrictModel):
    """How a write operation changes an episode table (the table is `source.table`)."""

    mode: Literal["upsert", "delete"] = Field(
        description="upsert: insert or replace by key; delete: remove by key."
    )
    values: dict[str, str] = Field(
        description="Column -> request parameter. For delete, the key columns only.", min_length=1
    )


class OperationKopa(StrictModel):
    """Per-operation `x-kopa`."""

    tool: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$", description="MCP tool name (<= 64 chars, unique).")
    effect: Literal["read", "write"] = Field(description="Whether the operation changes state.")
    shape: Literal["list", "record", "file"] = Field(
        description="list: rows (maybe paged); record: one object at top level; file: bulk download."
    )
    row: str = Field(description="JSON pointer of the row schema, e.g. '#/components/schemas/Disclosure'.")
    source: Source | None = Field(
        default=None,
        description="World table or view serving the rows; absent: rows synthesised from the row schema "
        "(kopa_gen/world/synth.py), so a freshly imported spec answers at once.",
    )
    synth_rows: int = Field(
        default=120, ge=1, description="Without `source`: how many rows the synthesised table has."
    )
    filters: list[Filter] | None = Field(
        default=None,
        description="Without `source`: how request parameters select the synthesised rows (a bulk catalog's "
        "`match`); absent: equality on every parameter named like a row property.",
    )
    held: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Without `source`: columns of the synthesised table that the answer does not send, name -> "
        "JSON Schema (with `x-kopa-gen` as a row property): what a parameter selects on where the source names no "
        "such response field (건축HUB's sigunguCd), held by the world so that the rows answer the value asked.",
    )
    local_filters: list[Filter] = Field(
        default_factory=list, description="For shape=file: filters the tool applies to the downloaded rows."
    )
    file: FileSpec | None = Field(default=None, description="For shape=file: how the download is laid out.")
    groups: Groups | None = Field(
        default=None,
        description="For shape=list: the rows are sent grouped by title (`group: [{title, list}]`), not as one list.",
    )
    write: Write | None = Field(default=None, description="For effect: write, what the operation changes.")
    empty_items: Literal["string", "list"] = Field(
        default="string",
        description='data.go.kr only: how 0 rows look in JSON (`items: ""` usually; FSC stock prices send []).',
    )
    nested: list[Nested] = Field(
        default_factory=list,
        description="Sub-lists of each row (array-of-object properties of the row schema) and where they come from.",
    )
    echo: list[Echo] = Field(
        default_factory=list, description="Request parameters this operation's envelope repeats back."
    )
    span: Span | None = Field(
        default=None, description="A longest allowed period between two date parameters."
    )
    start: dict[str, str] = Field(
        default_factory=dict,
        description="Arguments a first call adds to the ones that name its entity, so that it finds data (OpenDART "
        "list.json: a bgn_de, without which only today's filings are listed). EDGE's probes and the example tests "
        "add them.",
    )
    provenance: Provenance | None = Field(
        default=None, description="Where this operation's facts come from (else the platform's `provenance`)."
    )
    format: Format | None = Field(
        default=None,
        description="This operation's format switch where it differs from the platform's (data.go.kr services of "
        "one ministry spell it `type`, `resultType`, `dataType` or `_type`, or take none); absent: the "
        "platform's `format`.",
    )
    examples: dict[str, list[str | int]] = Field(
        default_factory=dict,
        description="Sample argument values for this operation alone, in the platform's `examples` shape; they "
        "replace the platform's values for the same argument here (a parameter name that operations share with "
        "different valid values: KMA's base_time) and are checked against this operation only.",
    )

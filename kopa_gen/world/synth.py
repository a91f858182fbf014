"""The default world: an operation with no `x-kopa.source` is served from rows synthesised from its row schema.

Each such operation gets a declared table `auto_<tool>` (see kopa_gen/world/declared.py) with one column per row
property, filled by what the schema says, first match wins:
1. `x-kopa-gen` on the property: a column generator written out (any kind of declared tables);
2. the field names a shared entity (world.yaml `entities`, e.g. corp_code -> companies.corp_code): a foreign key;
3. `enum`: a choice among the values; `examples` (2 or more): a choice among them;
4. a date (`format: date`, a YYYYMMDD pattern or name, e.g. `*_de`, `*Dt`, `*YMD`): a day of the last ten years;
5. `integer` / `number`: uniform between `minimum` and `maximum` (0-1000 without them);
6. a digits-only `pattern` or a code-like name (`*_cd`, `*_code`, `*Cd`, `*_no`, `*Id`): a zero-padded serial;
7. what the Korean label (the description) or an UPPER_SNAKE name's last word says the value is (`_by_meaning`):
   a flag (`…여부`, `*_YN`), a month or a year (`…년월`, `…연도`, `*_YM`), a day (`…일자`, `등록일`, `*_DATE`),
   a rate (`…률`, `…비율`), an amount of money (`…금액`, `…가격`, `*_AMT`), a count (`…건수`, `…인원`,
   `*_CNT`), an area, a score, a rank, a person's name (`성명`, `대표자명`), a telephone number, a web address, a
   serial number (`…번호`) or a code (`…코드`); a kind (`…구분`, `…유형`, `…상태`): one of five `<label> <k>`;
8. otherwise: the description (or the name) and the row number, e.g. `시설명 12`.
Every query parameter named like a row property filters it by equality, unless the operation lists its own
`x-kopa.filters` (a bulk catalog's `match`). Rows are served in creation order."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from typing import Any

from pydantic import ValidationError

from kopa_gen.language.diagnostics import Diagnostics
from kopa_gen.language.kopa import Filter, Order, Source
from kopa_gen.language.platform import Operation, Platform
from kopa_gen.language.world import (
    WORLD_TABLE,
    WORLD_TABLE_SQL,
    Column,
    ColumnGen,
    Table,
    WorldSpec,
    column_sql,
    declared_problems,
)

ROW = "_n"  # the serial every synthesised table orders by
DAY = "%Y%m%d"  # how a day is written unless the platform says otherwise (x-kopa.day_format)
DATE_NAME = re.compile(r"(_de|_dt|Dt|_date|Date|YMD|Ymd|_ymd)$")
CODE_NAME = re.compile(r"(_cd|_code|Cd|Code|_no|No|_id|Id|ID|CD|CODE)$")
CAMEL_WORD = re.compile(r"[a-z0-9]([A-Z][a-z]*)$")  # the last word of a camelCase name: basYm -> Ym
DIGITS = re.compile(r"^\^?\\d\{(\d+)\}\$?$|^\^?\[0-9\]\{(\d+)\}\$?$")


def column_gen(
    name: str, schema: dict[str, Any], entities: dict[str, ColumnGen], day: str = DAY
) -> ColumnGen:
    """How a synthesised table fills the column of one row property (the rules of the module docstring); `day`
    is how the platform writes a day (`x-kopa.day_format`). A malformed `x-kopa-gen` raises pydantic's
    ValidationError."""
    hint = schema.get("x-kopa-gen")
    if hint is not None:
        return ColumnGen.model_validate(hint)
    if name in entities:
        return entities[name]
    kind = schema.get("type", "string")
    if schema.get("enum"):
        return ColumnGen(choice=list(schema["enum"]))
    examples = schema.get("examples") or []
    if len(examples) >= 2:
        return ColumnGen(choice=list(examples))
    pattern = str(schema.get("pattern", ""))
    if schema.get("format") == "date":
        return ColumnGen(date=["today-3650", "today-1"], format="%Y-%m-%d")
    if kind == "string" and pattern in (r"^\d{8}$", r"^[0-9]{8}$"):
        return ColumnGen(date=["today-3650", "today-1"])
    if kind == "string" and DATE_NAME.search(name):
        return ColumnGen(date=["today-3650", "today-1"], format=day)
    if kind == "integer":
        return ColumnGen(integer=[int(schema.get("minimum", 0)), int(schema.get("maximum", 1000))])
    if kind == "number":
        low, high = float(schema.get("minimum", 0)), float(schema.get("maximum", 1000))
        return ColumnGen(uniform=[low, high], decimals=2)
    if kind == "string":
        known = _camel_case(name)
        if known is not None:
            return known
    digits = DIGITS.match(pattern)
    if digits or CODE_NAME.search(name):
        width = int(next(g for g in digits.groups() if g)) if digits else 6
        return ColumnGen(code=f"{{n:0{width}d}}")
    label = str(schema.get("description") or name).split("(")[0].split(",")[0].strip()[:20] or name
    if kind == "string":
        meant = _by_meaning(name, label, day)
        if meant is not None:
            return meant
    return ColumnGen(code=label.replace("{", "{{").replace("}", "}}") + " {n}")


# A label's last word, and the last word of an UPPER_SNAKE name (열린국회정보, 행정안전부), say what a value is.
# First match wins; a label that says none of these keeps rule 8's `<label> <n>` (a name, a title, a place).
_DAY_WORDS = re.compile(r"(일자|일시|날짜|(?<![요휴평매주])일)$")
_MEANINGS: tuple[tuple[re.Pattern[str], frozenset[str], ColumnGen], ...] = (
    (re.compile(r"(여부|유무)$"), frozenset({"YN", "AT"}), ColumnGen(choice=["Y", "N"])),
    (
        re.compile(r"(년월|연월)$"),
        frozenset({"YM"}),
        ColumnGen(date=["today-3650", "today-1"], format="%Y%m"),
    ),
    (
        re.compile(r"(연도|년도)$"),
        frozenset({"YY", "YEAR", "YR"}),
        ColumnGen(date=["today-3650", "today-1"], format="%Y"),
    ),
    (_DAY_WORDS, frozenset({"DATE", "DT", "DE", "YMD"}), ColumnGen(date=["today-3650", "today-1"])),  # `day`
    (
        re.compile(r"(율|률|비율|비중)$"),
        frozenset({"RT", "RATE", "RTO"}),
        ColumnGen(uniform=[0.0, 100.0], decimals=2),
    ),
    (
        re.compile(r"(금액|가격|단가|비용|예산|액)$"),
        frozenset({"AMT", "PRC", "PRICE"}),
        ColumnGen(lognormal=[5_000_000.0, 1.5], decimals=0),
    ),
    (re.compile(r"(점수)$"), frozenset({"SCORE"}), ColumnGen(integer=[0, 100])),
    (
        re.compile(r"(건수|인원|인원수|횟수|수량|세대수|개수|개소|합계|거래량|(?<![접교징호])수)$"),
        frozenset({"CNT", "QTY", "COUNT"}),
        ColumnGen(integer=[0, 500]),
    ),
    (re.compile(r"(면적)$"), frozenset({"AREA"}), ColumnGen(uniform=[10.0, 5000.0], decimals=2)),
    (re.compile(r"(순위|순번|차수)$"), frozenset({"RANK", "ORD"}), ColumnGen(integer=[1, 50])),
    (
        re.compile(r"(성명|대표자명?|작성자|담당자명?|신청인명?|대리인명?)$"),
        frozenset({"FLNM"}),
        ColumnGen(person="full"),
    ),
    (
        re.compile(r"(전화번호|연락처|팩스번호|팩스)$"),
        frozenset({"TEL", "TELNO", "PHONE", "FAX"}),
        ColumnGen(code="02-{n:04d}-{n:04d}"),
    ),
    (
        re.compile(r"(홈페이지|URL|url|링크|링크 주소|URL 주소)$"),
        frozenset({"URL", "LINK", "HMPG"}),
        ColumnGen(code="https://example.kr/{n}"),
    ),
    (re.compile(r"^(번|지|본번|부번)$"), frozenset({"MNNM", "SLNO"}), ColumnGen(integer=[1, 999])),
    (re.compile(r"우편번호$"), frozenset({"ZIP", "ZIPCODE", "ZC"}), ColumnGen(code="{n:05d}")),
    (re.compile(r"번호$"), frozenset({"NUM", "SN", "NO"}), ColumnGen(code="{n}")),
    (re.compile(r"(코드|ID|아이디)$"), frozenset({"ID"}), ColumnGen(code="{n:06d}")),
)


_KIND_WORDS = re.compile(r"(구분|종류|유형|분류|등급|상태)$")


def _by_meaning(name: str, label: str, day: str) -> ColumnGen | None:
    """A generator for a text field whose Korean label (`등록일자`, `대표자명`, `회의번호`; a qualifier after `_`
    aside: `가중평균가격_경쟁`) or UPPER_SNAKE name (`REG_DATE`, `LINK_URL`) says what its values are; a kind
    (`…구분`, `…유형`, `…상태`) is one of five values, as kinds repeat across rows; a day is written as `day`;
    None where nothing says."""
    word = name.rsplit("_", 1)[-1] if "_" in name and name.isupper() else ""
    label = label.strip()
    head = label.split("_", 1)[0].strip() or label
    for said, words, gen in _MEANINGS:
        if any(said.search(text) for text in {label, head}) or word in words:
            return gen.model_copy(update={"format": day}) if said is _DAY_WORDS else gen
    if _KIND_WORDS.search(head):
        quoted = label.replace("'", "''")
        return ColumnGen(sql=f"'{quoted} ' || ({ROW} % 5 + 1)")
    return None


def _camel_case(name: str) -> ColumnGen | None:
    """data.go.kr's camelCase field names say what they hold by their last word: a year-month (`basYm`), a year
    (`bizYr`), a Y/N flag (`impYn`), an amount or count (`trPrc`, `bondBal`, `acdnCnt`), a rate (`fltRt`).
    Served as text, as those services send them."""
    word = CAMEL_WORD.search(name)
    if word is None:
        return None
    last = word.group(1)
    if last == "Ym":
        return ColumnGen(date=["today-3650", "today-1"], format="%Y%m")
    if last in ("Yr", "Year"):
        return ColumnGen(date=["today-3650", "today-1"], format="%Y")
    if last == "Yn":
        return ColumnGen(choice=["Y", "N"])
    if last in ("Rt", "Rto", "Rate"):
        return ColumnGen(uniform=[0.0, 100.0], decimals=2)
    if last in ("Amt", "Cnt", "Qty", "Bal", "Prc", "Vol", "Sum", "Tot", "Num"):
        return ColumnGen(integer=[0, 1_000_000])
    return None


def synthesize(
    platforms: list[Platform], world: WorldSpec, diags: Diagnostics
) -> tuple[list[Platform], WorldSpec]:
    """Bind every operation lacking a source to a synthesised table appended to the world (after every declared
    and generated table, so foreign keys may read any of them). A malformed `x-kopa-gen` hint is an error at its
    place."""
    made: list[tuple[Platform, Operation, Table]] = []
    out: list[Platform] = []
    columns = {t.name: [c.name for c in t.columns] for t in world.tables}
    for platform in platforms:
        ops: list[Operation] = []
        for op in platform.operations:
            if op.kopa.source is not None:
                ops.append(op)
                continue
            try:
                table, source = synth_table(op, world.entities, columns, platform.kopa.day_format)
            except HintError as exc:
                diags.error(platform.file, _hint_at(op, exc.prop), exc.message)
                continue
            made.append((platform, op, table))
            ops.append(dataclasses.replace(op, kopa=op.kopa.model_copy(update={"source": source})))
        out.append(
            dataclasses.replace(platform, operations=tuple(ops))
            if ops != list(platform.operations)
            else platform
        )
    if not made:
        return platforms, world
    check_made(made, world, diags)
    return out, world.model_copy(update={"tables": [*world.tables, *(table for _, _, table in made)]})


def check_made(made: list[tuple[Platform, Operation, Table]], world: WorldSpec, diags: Diagnostics) -> None:
    """Check each synthesised table as a declared one, now rather than as a failed world build: a hint naming
    a later property, a `ref` to a table or column the world lacks, SQL that does not run. Each problem is
    reported at the row property's `x-kopa-gen`."""
    db = sqlite3.connect(":memory:")
    db.execute(WORLD_TABLE_SQL)
    for t in world.tables:
        db.execute(f'CREATE TABLE "{t.name}" ({", ".join(column_sql(c) for c in t.columns)})')
    base = {WORLD_TABLE, *(t.name for t in world.tables)}
    for platform, op, table in made:
        for loc, message in declared_problems(table, db, base):
            prop = table.columns[int(loc[1])].name if loc[:1] == ("columns",) and len(loc) > 1 else None
            diags.error(platform.file, _hint_at(op, prop), f"{op.tool}: {message}")


def _hint_at(op: Operation, prop: str | None) -> str:
    """Where a row property's `x-kopa-gen` is in the platform spec (the row schema itself without `prop`)."""
    where = f"{op.kopa.row}/properties/{prop}/x-kopa-gen" if prop else str(op.kopa.row)
    return where.removeprefix("#/").replace("/", ".")


def _followers(
    gens: dict[str, ColumnGen], free: set[str], tables: dict[str, list[str]], table: str
) -> dict[str, ColumnGen]:
    """For each entity table a row's keys draw from, the first such key (in field order) is drawn; every other
    field that the entity table holds, or that is another key into it, is read from the drawn row, whatever its
    own generator says (the entity's table is the one place a fact lives). A key is a field drawn as an entity
    with no `x-kopa-gen` of its own: a hinted `ref` may be a pool of values (a committee name drawn from the
    members'); a field hinted `ref ... by` already follows a key of its own choosing."""
    drawn: dict[str, tuple[str, str]] = {}  # entity table -> (this row's key column, entity column)
    for name, gen in gens.items():
        if name in free and gen.ref is not None and "." in gen.ref and gen.by is None:
            entity, column = gen.ref.split(".", 1)
            drawn.setdefault(entity, (name, column))

    # The finer entity first: a candidate's table holds its election's key (sgId), so a row drawing both a
    # candidate and an election reads the election key, and every field both tables hold (sgTypecode), from the
    # candidate's row rather than pairing one candidate with another election's facts.
    def keys_held(entity: str) -> int:  # how many other drawn entities' keys this entity's table holds
        held = tables.get(entity, ())
        return sum(column in held for other, (_, column) in drawn.items() if other != entity)

    anchors = dict(sorted(drawn.items(), key=lambda item: -keys_held(item[0])))
    out: dict[str, ColumnGen] = {}
    for name, gen in gens.items():
        if gen.by is not None:  # follows a key of its own choosing
            continue
        for entity, (key, column) in anchors.items():
            if name == key:
                break
            if gen.ref is not None and gen.ref.split(".", 1)[0] == entity:
                field = gen.ref.split(".", 1)[1]
            elif name != column and name in tables.get(entity, ()):
                field = name
            else:
                continue
            out[name] = ColumnGen(
                sql=f'(SELECT e."{field}" FROM "{entity}" e WHERE e."{column}" = "{table}"."{key}" LIMIT 1)'
            )
            break
    return out


class HintError(ValueError):
    """A row property's `x-kopa-gen` is not a column generator."""

    def __init__(self, prop: str, message: str) -> None:
        super().__init__(f"{prop}: {message}")
        self.prop, self.message = prop, message


def synth_table(
    op: Operation,
    entities: dict[str, ColumnGen],
    tables: dict[str, list[str]] | None = None,
    day: str = DAY,
) -> tuple[Table, Source]:
    """The table and source of one operation without a source. `tables` (the world's tables and their columns)
    makes an entity's facts follow its key: the first field naming an entity (MONA_CD) is drawn, and every other
    field its table holds (HG_NM, POLY_NM; a second key of the same table) is read from that same row, so a row
    never pairs one member's code with another member's name."""
    # the row's properties, then the columns held back from the answer (x-kopa.held)
    props: dict[str, Any] = {**op.row_schema.get("properties", {}), **op.kopa.held}
    name_ = f"auto_{op.tool}"
    columns = [Column(name=ROW, type="integer", gen=ColumnGen(seq=1))]
    gens: dict[str, ColumnGen] = {}
    for name, schema in props.items():
        try:
            gens[name] = column_gen(name, schema, entities, day)
        except ValidationError as exc:
            err = exc.errors()[0]
            at = ".".join(str(x) for x in err["loc"])
            message = str(err["msg"]).removeprefix("Value error, ")
            raise HintError(name, f"{message} (at {at})" if at else message) from exc
    if tables is not None:
        gens.update(
            _followers(gens, {n for n, sch in props.items() if sch.get("x-kopa-gen") is None}, tables, name_)
        )
    for name, schema in props.items():
        kind = schema.get("type", "string")
        sql_type = "integer" if kind == "integer" else "real" if kind == "number" else "text"
        columns.append(
            Column(name=name, type=sql_type, description=str(schema.get("description", "")), gen=gens[name])
        )
    table = Table(
        name=name_,
        description=f"Synthesised from the row schema {op.row_name} of {op.tool} (no x-kopa.source).",
        rows=op.kopa.synth_rows,
        columns=columns,
        indexes=[[p.name] for p in op.params if p.name in props],
        lazy=True,  # read by its operation alone: made at its first query
    )
    filters = op.kopa.filters
    if filters is None:
        filters = [Filter(param=p.name, column=p.name, match="eq") for p in op.params if p.name in props]
    source = Source(table=table.name, filters=filters, order=[Order(column=ROW)])
    return table, source

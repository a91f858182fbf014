"""The fast paths of a call (kopa_gen/envelopes/base.py, kopa_gen/mcp/toolbox.py) give what the plain definitions
give: rows typed by compiled per-schema plans equal rows typed field by field, orjson's JSON equals the standard
library's bytes where `dumps` uses it, and its parsed values equal `json.loads`'s."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from kopa_gen.compose import sandbox_client
from kopa_gen.envelopes.base import EnvelopeError, coerce, coerce_rows, dumps, loads, row_type
from kopa_gen.language.platform import Operation
from kopa_gen.mcp.generated import generated_module
from kopa_gen.project import Project
from kopa_gen.sandbox.emulator import Sandbox

from .conftest import declared_tools, repository_project


def operations() -> list[tuple[str, str]]:
    return [(p.id, op.operation_id) for p in repository_project().platforms for op in p.operations]


class Text(str):
    """A str subclass: typed rows hold plain str."""


def reference(props: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    """`coerce` as its docstring defines it, one field at a time."""
    out: dict[str, Any] = {}
    for name, schema in props.items():
        if schema.get("writeOnly"):
            continue
        kind, value = schema.get("type", "string"), row.get(name)
        if kind == "array":
            items = [value] if isinstance(value, dict) else value if isinstance(value, list) else []
            item_props = schema.get("items", {}).get("properties", {})
            out[name] = [reference(item_props, i) for i in items if isinstance(i, Mapping)]
        elif kind == "integer":
            out[name] = None if value in (None, "") else int(value)
        elif kind == "number":
            out[name] = None if value in (None, "") else float(value)
        else:
            out[name] = "" if value is None else value if type(value) is str else str(value)
    return out


def random_value(rng: random.Random, schema: Mapping[str, Any], depth: int = 0) -> Any:
    """A value as a database or a live JSON answer may hold it for this property (sometimes missing or empty)."""
    kind = schema.get("type", "string")
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.15:
        return ""
    if kind == "array":
        props = schema.get("items", {}).get("properties", {})
        item = {n: random_value(rng, s, depth + 1) for n, s in props.items()}
        return rng.choice([[item, dict(item)], item, [], "x"]) if depth < 2 else []
    if kind == "integer":
        return rng.choice([rng.randint(-(10**6), 10**6), str(rng.randint(0, 10**12)), True])
    if kind == "number":
        return rng.choice([rng.uniform(-1e3, 1e3), str(rng.randint(0, 99)), rng.randint(0, 9), 1e-05])
    return rng.choice(
        ["삼성전자", Text("005930"), rng.randint(0, 10**15), rng.uniform(0, 1), b"\x00b", 'a\u2028\x1f"\\']
    )


def random_row(rng: random.Random, op: Operation) -> dict[str, Any]:
    row = {name: random_value(rng, schema) for name, schema in op.row_props.items()}
    if rng.random() < 0.3:  # columns selected in another order, one missing, one the schema does not know
        names = list(row)
        rng.shuffle(names)
        row = {n: row[n] for n in names[1:]}
        row["not_in_schema"] = "x"
    return row


@pytest.mark.parametrize(("platform_id", "operation_id"), operations())
def test_rows_are_typed_as_field_by_field(project: Project, platform_id: str, operation_id: str) -> None:
    op = project.platform(platform_id).operation(operation_id)
    rng = random.Random(f"{platform_id}.{operation_id}")
    rows = [random_row(rng, op) for _ in range(60)]
    want = [reference(op.row_props, row) for row in rows]
    assert [coerce(op.row_props, row) for row in rows] == want
    assert coerce_rows(op.row_props, [dict(row) for row in rows]) == want
    typed = row_type(op.row_props)
    assert [typed.from_values([row.get(n) for n in typed.names]) for row in rows] == want
    # a typed row is typed already: it comes back as it is, neither changed nor copied
    again = coerce_rows(op.row_props, want)
    assert again == want
    plain = [r for r in want if all(v is not None and not isinstance(v, list) for v in r.values())]
    kept = coerce_rows(op.row_props, plain)
    assert all(a is b for a, b in zip(kept, plain, strict=True))


@pytest.mark.parametrize(("platform_id", "operation_id"), operations())
def test_dumps_writes_the_standard_librarys_bytes(
    project: Project, platform_id: str, operation_id: str
) -> None:
    op = project.platform(platform_id).operation(operation_id)
    rng = random.Random(f"dumps.{platform_id}.{operation_id}")
    rows = coerce_rows(op.row_props, [random_row(rng, op) for _ in range(40)])
    bodies: list[Any] = [
        {"response": {"header": {"resultCode": "00"}, "body": {"items": {"item": rows}, "totalCount": 40}}},
        {"list": rows[:1], "total_count": 2**64, "status": "000"},  # an integer orjson refuses
        {"list": [], "message": "\x00\x1f\x7f\u2028\ud7a3😀 \"'\\/", "n": -(2**63)},
    ]
    for body in bodies:
        std = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        assert dumps(body, op) == std
        assert dumps(body) == std
        assert loads(std) == json.loads(std)


def test_floats_are_written_as_the_standard_library_writes_them(project: Project) -> None:
    """An operation with a number property keeps the standard library's float text (orjson's differs)."""
    ops = [op for p in project.platforms for op in p.operations if row_type(op.row_props).floats]
    assert ops, "no operation has a number property"
    for op in ops:
        body = {"rows": [1e-05, 1e16, 0.1 + 0.2, -0.0]}
        assert dumps(body, op) == b'{"rows":[1e-05,1e+16,0.30000000000000004,-0.0]}'


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": [1, 2.5, "x", null, true], "b": {"c": "\\ud55c"}}',
        b'{"a":NaN,"b":Infinity}',  # not JSON; the standard library reads it
        b'\xef\xbb\xbf{"a":1}',  # a byte-order mark
        b'{"a":"\\ud800"}',  # a lone surrogate
        b'{"big":18446744073709551615,"small":-9223372036854775808}',
    ],
)
def test_loads_reads_what_json_loads_reads(body: bytes) -> None:
    got, want = loads(body), json.loads(body)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_loads_refuses_what_is_not_json() -> None:
    with pytest.raises(EnvelopeError, match="not JSON"):
        loads(b"<html>502 Bad Gateway</html>")


@pytest.mark.anyio
async def test_a_large_page_is_typed_and_its_text_is_its_structured_result(sandbox: Sandbox) -> None:
    """A 1,000-row page through ToolBox -> client -> sandbox: rows typed by the schema, the text the model reads
    parses to exactly the structured result."""
    platform = next(p for p in sandbox.platforms.values() if p.id == "fsc")
    async with sandbox_client(sandbox, platform.id) as client:
        box = generated_module(platform.id).create_toolbox(client)
        declared = declared_tools(
            repository_project(), platform.id
        )  # a large table, not a catalog's 120 rows
        name = next(b for b in box.bindings if b in declared and box.bindings[b].shape == "list")
        binding = box.bindings[name]
        op = platform.operation(binding.operation_id)
        paging = platform.kopa.paging
        assert paging is not None
        out = await box.call(name, {paging.size: paging.max_size, paging.page: 3})
        assert not out.is_error, out.text
        assert out.structured is not None and json.loads(out.text) == out.structured
        rows = out.structured["rows"]
        assert len(rows) == paging.max_size
        assert rows == [reference(op.row_props, row) for row in rows]

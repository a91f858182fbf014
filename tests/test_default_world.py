"""The default world: an operation with no `x-kopa.source` answers at once from rows synthesised from its row
schema, typed and shaped by it, linked to the shared entities the world declares, filtered by its parameters; a
malformed hint is an error at its place."""

from __future__ import annotations

import copy
import datetime as dt
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from kopa_gen.compose import sandbox_client
from kopa_gen.language.diagnostics import Level, SpecError
from kopa_gen.project import load_project
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.lazy import open_world
from tests.test_declared import REGIONS, world_with
from tests.toyspec import WORLD_ROOT, spec_copy, write_project

STATION = {
    "type": "object",
    "properties": {
        "stnId": {"type": "string", "pattern": "^\\d{5}$", "description": "관측소 번호"},
        "stnNm": {"type": "string", "description": "관측소명"},
        "kind": {"type": "string", "enum": ["ASOS", "AWS"], "description": "종류"},
        "region_cd": {"type": "string", "description": "법정동코드"},
        "open_de": {"type": "string", "description": "개소일 (YYYYMMDD)"},
        "height": {"type": "integer", "minimum": 1, "maximum": 50, "description": "높이(m)"},
        "ta": {"type": "number", "minimum": -10, "maximum": 35, "description": "기온"},
        "grade": {"type": "string", "description": "등급", "x-kopa-gen": {"choice": ["A", "B"], "weights": [9, 1]}},
    },
}  # fmt: skip


def station_spec(hint: Any = None) -> dict[str, Any]:
    spec = spec_copy()
    fruits = spec["paths"]["/fruits"]["get"]
    schema = copy.deepcopy(STATION)
    if hint is not None:
        schema["properties"]["grade"]["x-kopa-gen"] = hint
    spec["components"]["schemas"]["Station"] = schema
    spec["paths"]["/stations"] = {
        "get": {
            "operationId": "getStations",
            "summary": "관측소 목록",
            "parameters": [
                {"name": "kind", "in": "query", "description": "종류", "schema": {"type": "string"}},
                *[p for p in fruits["parameters"] if p["name"] != "name"],
            ],
            "responses": fruits["responses"],
            "x-kopa": {
                "tool": "toy_list_stations",
                "effect": "read",
                "shape": "list",
                "row": "#/components/schemas/Station",
                "synth_rows": 30,
            },
        }
    }
    return spec


def project_at(tmp_path: Path, hint: Any = None) -> Path:
    write_project(tmp_path, station_spec(hint), world_with(REGIONS))
    root = {**WORLD_ROOT, "entities": {"region_cd": {"ref": "regions.region_cd", "where": "abolished = 0"}}}
    (tmp_path / "specs/world/world.yaml").write_text(yaml.safe_dump(root), encoding="utf-8")
    return tmp_path


async def all_rows(tmp_path: Path, **params: Any) -> tuple[int, list[dict[str, Any]]]:
    project = load_project(tmp_path)
    async with sandbox_client(open_sandbox(project), "toy") as client:
        first = await client.call("toy_list_stations", {**params, "numOfRows": 2})
        rows = list(first.rows)
        for page in range(2, (first.total + 1) // 2 + 1):
            rows += (await client.call("toy_list_stations", {**params, "numOfRows": 2, "pageNo": page})).rows
        return first.total, rows


def test_an_operation_without_source_answers_from_its_schema(tmp_path: Path) -> None:
    total, rows = anyio.run(all_rows, project_at(tmp_path))
    assert total == 30 and len(rows) == 30
    for row in rows:
        assert set(row) == set(STATION["properties"])  # type: ignore[arg-type]
        assert re.fullmatch(r"\d{5}", row["stnId"])
        assert re.fullmatch(r"관측소명 \d+", row["stnNm"])
        assert row["kind"] in ("ASOS", "AWS")
        assert re.fullmatch(r"\d{10}", row["region_cd"])
        opened = dt.datetime.strptime(row["open_de"], "%Y%m%d").date()
        assert dt.date(2016, 11, 1) <= opened < dt.date(2026, 11, 29)
        assert isinstance(row["height"], int) and 1 <= row["height"] <= 50
        assert isinstance(row["ta"], float) and -10 <= row["ta"] <= 35
        assert row["grade"] in ("A", "B")
    assert len({r["stnId"] for r in rows}) == 30  # serials: a key
    assert [r["grade"] for r in rows].count("A") > 20  # the hint's weights, not the default
    assert len({r["region_cd"][:2] for r in rows}) > 3  # drawn across the country's current districts


def test_parameters_named_like_fields_filter(tmp_path: Path) -> None:
    _, every = anyio.run(all_rows, project_at(tmp_path))
    total, aws = anyio.run(lambda: all_rows(tmp_path, kind="AWS"))
    assert total == len(aws) == sum(r["kind"] == "AWS" for r in every) > 0
    assert aws == [r for r in every if r["kind"] == "AWS"]


def test_region_codes_name_current_districts(tmp_path: Path) -> None:

    from kopa_gen.world.build import ensure_world

    project = load_project(project_at(tmp_path))
    db = open_world(ensure_world(project.world).path)
    current = {r[0] for r in db.execute("SELECT region_cd FROM regions WHERE abolished = 0")}
    served = {r[0] for r in db.execute("SELECT region_cd FROM auto_toy_list_stations")}
    assert served and served <= current


def test_a_malformed_hint_is_an_error_at_its_place(tmp_path: Path) -> None:
    project_at(tmp_path, hint={"choice": ["A"], "integer": [1, 2]})
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    found = [d.render() for d in info.value.diagnostics if d.level is Level.ERROR]
    assert found == [
        "specs/platforms/toy/openapi.yaml: components.schemas.Station.properties.grade.x-kopa-gen: error: give "
        "exactly one generator kind of value, seq, code, choice, enum, integer, uniform, normal, lognormal, "
        "date, person, address, ref, parent, sql (given: choice, integer)"
    ]


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        ({"code": "G-{missing}-{n}"}, "format names missing: not an earlier column or n"),
        ({"ref": "nowhere.code"}, "no base table 'nowhere' before this one"),
        ({"sql": "no_such_function(1)"}, "no such function: no_such_function"),
    ],
)
def test_a_hint_the_world_cannot_fill_is_an_error_at_load(tmp_path: Path, hint: Any, message: str) -> None:
    """Checked as a declared table is, when the project loads: not a KeyError minutes into a world build."""
    project_at(tmp_path, hint=hint)
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    found = [d.render() for d in info.value.diagnostics if d.level is Level.ERROR]
    assert len(found) == 1 and found[0].startswith(
        "specs/platforms/toy/openapi.yaml: components.schemas.Station.properties.grade.x-kopa-gen: error: "
        "toy_list_stations: "
    ), found
    assert message in found[0], found


# Fields as catalogs state them: a Korean label and a name, no type beyond text, no pattern (the source says no
# more); what each value must look like when served, and the label a value must not repeat.
LABELLED: dict[str, tuple[str, str]] = {
    "REG_DATE": ("발간일", "day"),
    "rcptDay": ("접수일자", "day"),
    "PRDC_YM": ("생산년월", "month"),
    "bizYear": ("사업연도", "year"),
    "USE_AT": ("사용여부", "flag"),
    "debtRto": ("부채비율", "rate"),
    "sumAmt": ("합계 금액", "money"),
    "CMTM_CNT": ("현위원수", "count"),
    "rprsntvNm": ("대표자명", "person"),
    "telno": ("전화번호", "phone"),
    "LINK_URL": ("상세보기 링크", "url"),
    "CONFER_NUM": ("회의번호", "serial"),
    "zip": ("우편번호", "zip"),
    "wtAvgPrcCptn": ("가중평균가격_경쟁", "money"),
    "oilCtg": ("유종구분", "kind"),
    "facilNm": ("시설명", "name"),
    "weekday": ("요일", "name"),
}
LOOKS = {
    "month": r"20\d\d(0[1-9]|1[0-2])",
    "year": r"20\d\d",
    "flag": r"[YN]",
    "rate": r"\d{1,3}(\.\d+)?",
    "money": r"\d+",
    "count": r"\d+",
    "person": r"[가-힣]{2,4}",
    "phone": r"02-\d{4}-\d{4}",
    "url": r"https://example\.kr/\d+",
    "serial": r"\d+",
    "zip": r"\d{5}",
}


@pytest.mark.parametrize("day_format", ["%Y%m%d", "%Y-%m-%d"])
def test_a_fields_label_says_what_its_values_look_like(tmp_path: Path, day_format: str) -> None:
    """A field the source gives only a name and a Korean label is served with values of the kind the label (or an
    UPPER_SNAKE name's last word) says: days in the platform's own way of writing them (`x-kopa.day_format`),
    months, years, flags, rates, amounts, counts, persons, telephone numbers, web addresses, serials; a label
    that says none of these (a name, 요일) keeps the label and the row number; a kind (`…구분`) is one of five."""
    spec = station_spec()
    spec["components"]["schemas"]["Station"] = {
        "type": "object",
        "properties": {
            name: {"type": "string", "description": label} for name, (label, _) in LABELLED.items()
        },
    }
    if day_format != "%Y%m%d":
        spec["x-kopa"]["day_format"] = day_format
    write_project(tmp_path, spec, world_with(REGIONS))
    _, rows = anyio.run(all_rows, tmp_path)
    assert len(rows) == 30
    for row in rows:
        for name, (label, kind) in LABELLED.items():
            value = row[name]
            assert isinstance(value, str), (name, value)
            assert kind in ("name", "kind") or label not in value, (name, value)
            if kind == "day":
                day = dt.datetime.strptime(value, day_format).date()
                assert dt.date(2016, 11, 1) <= day < dt.date(2026, 11, 29), (name, value)
            elif kind == "name":
                assert re.fullmatch(rf"{label} \d+", value), (name, value)
            elif kind == "kind":
                assert re.fullmatch(rf"{label} [1-5]", value), (name, value)
            else:
                assert re.fullmatch(LOOKS[kind], value), (name, value)
    assert {r["USE_AT"] for r in rows} == {"Y", "N"}
    assert len({r["rprsntvNm"] for r in rows}) > 10  # people, not one name
    assert len({r["oilCtg"] for r in rows}) == 5  # a kind repeats across rows


def test_a_day_format_that_writes_no_day_is_an_error_at_its_line(tmp_path: Path) -> None:
    from tests.test_broken_specs import problems

    spec = spec_copy()
    spec["x-kopa"]["day_format"] = "%d.%m"
    found = problems(tmp_path, spec)
    assert len(found) == 1 and "openapi.yaml:" in found[0], found
    assert "x-kopa.day_format: error: '%d.%m' is not a day" in found[0] and "'%Y-%m-%d'" in found[0]

"""Bulk catalogs (x-kopa.catalog): one file of datasets expands at load into one ordinary operation and tool per
dataset, served by the default world (or a bound one), called and paged like hand-written operations; a broken
catalog is an error at its own line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kopa_gen.client.errors import PlatformError
from kopa_gen.compile.build import build
from kopa_gen.compose import sandbox_client
from kopa_gen.language.catalog import MAX_TOOL, expand_catalogs
from kopa_gen.language.diagnostics import Diagnostics
from kopa_gen.language.kopa import Filter
from kopa_gen.language.source import load_yaml
from kopa_gen.project import Project, load_project
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.build import ensure_world
from kopa_gen.world.lazy import open_world
from tests.test_broken_specs import problems
from tests.toyspec import spec_copy, write_project

CATALOG_FILE = "specs/platforms/toy/catalog.yaml"

# Three datasets of one envelope: one served by the default world with a hint and a range filter, one whose tool
# name comes from its code, one bound to the world's view.
CATALOG: dict[str, Any] = {
    "defaults": {
        "parameters": [
            {"$ref": "#/components/parameters/pageNo"},
            {"name": "numOfRows", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 2}},
            {"name": "type", "in": "query", "schema": {"type": "string", "enum": ["xml", "json"]}},
        ],
        "response": {"$ref": "{row}"},
        "rows": 6,
    },
    "datasets": [
        {
            "code": "vegetables",
            "tool": "toy_list_vegetables",
            "summary": "채소 목록",
            "description": "채소 이름과 가격",
            "params": [
                {"name": "name", "description": "이름 일부", "match": "contains"},
                {"name": "min_price", "type": "integer", "field": "price", "match": "gte"},
            ],
            "fields": [
                {"name": "code", "description": "코드"},
                {"name": "name", "description": "이름", "gen": {"choice": ["당근", "양파", "대파"]}},
                {"name": "price", "type": "integer", "description": "가격", "gen": {"seq": 100, "step": 100}},
            ],
        },
        {
            "code": "Grain-Prices",
            "summary": "곡물 가격",
            "params": [{"name": "grain", "required": True}],
            "fields": [
                {"name": "grain", "gen": {"choice": ["쌀", "보리"]}},
                {"name": "price", "type": "number"},
            ],
            "rows": 4,
        },
        {
            "code": "orchards",
            "tool": "toy_list_orchards",
            "summary": "과수원 과일",
            "params": [{"name": "name", "match": "prefix"}],
            "fields": [{"name": "code"}, {"name": "name"}, {"name": "price", "type": "integer"}],
            "source": {"table": "toy_fruit", "order": [{"column": "code"}]},
        },
    ],
}
TOOLS = {"toy_list_fruits", "toy_list_vegetables", "toy_grain_prices", "toy_list_orchards"}


def catalog_spec() -> dict[str, Any]:
    spec = spec_copy()
    spec["x-kopa"]["catalog"] = ["catalog.yaml"]
    spec["components"]["parameters"] = {
        "pageNo": {"name": "pageNo", "in": "query", "schema": {"type": "integer", "minimum": 1}}
    }
    return spec


def with_catalog(catalog: dict[str, Any]) -> Any:
    def edit(root: Path) -> None:
        text = yaml.safe_dump(catalog, allow_unicode=True, sort_keys=False)
        (root / CATALOG_FILE).write_text(text, encoding="utf-8")

    return edit


def catalog_project(tmp_path: Path, catalog: dict[str, Any] = CATALOG) -> Project:
    write_project(tmp_path, catalog_spec())
    with_catalog(catalog)(tmp_path)
    return load_project(tmp_path)


def broken(change: Any) -> dict[str, Any]:
    catalog = copy.deepcopy(CATALOG)
    change(catalog)
    return catalog


def catalog_problems(tmp_path: Path, catalog: dict[str, Any]) -> list[str]:
    return problems(tmp_path, catalog_spec(), edit=with_catalog(catalog))


def test_a_catalog_expands_into_one_tool_per_dataset(tmp_path: Path) -> None:
    project = catalog_project(tmp_path)
    toy = project.platform("toy")
    assert {op.tool for op in toy.operations} == TOOLS
    grain = toy.operation("toy_grain_prices")
    assert grain.path == "/Grain-Prices"
    assert [(p.name, p.required) for p in grain.params] == [
        ("pageNo", False),
        ("numOfRows", False),
        ("type", False),
        ("grain", True),
    ]
    assert grain.row_name == "ToyGrainPricesRow"
    assert grain.row_schema["properties"]["price"] == {"type": "number"}
    assert toy.operation("toy_list_orchards").source.table == "toy_fruit"
    build(project)
    listing = json.loads((tmp_path / "generated/servers/toy/tools.json").read_text(encoding="utf-8"))
    tools = {t["name"]: t for t in listing["tools"]}
    assert set(tools) == TOOLS
    assert tools["toy_grain_prices"]["inputSchema"]["required"] == ["grain"]
    assert tools["toy_list_vegetables"]["description"].startswith("채소 목록")


def test_a_changed_catalog_changes_the_spec_digest(tmp_path: Path) -> None:
    before = catalog_project(tmp_path).platform("toy").sha256
    catalog = broken(lambda c: c["datasets"][0].update(summary="채소"))
    with_catalog(catalog)(tmp_path)
    assert load_project(tmp_path).platform("toy").sha256 != before


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["json", "xml"])
async def test_catalog_tools_call_filter_and_page(tmp_path: Path, wire: str) -> None:
    project = catalog_project(tmp_path)
    async with sandbox_client(open_sandbox(project), "toy", wire=wire) as client:  # type: ignore[arg-type]
        first = await client.call("toy_list_vegetables", {"numOfRows": 2})
        second = await client.call("toy_list_vegetables", {"numOfRows": 2, "pageNo": 2})
        assert first.total == 6 and len(first.rows) == len(second.rows) == 2
        assert [r["price"] for r in [*first.rows, *second.rows]] == [100, 200, 300, 400]
        dear = await client.call("toy_list_vegetables", {"min_price": 500})
        assert dear.total == 2 and [r["price"] for r in dear.rows] == [500, 600]
        named = await client.call("toy_list_vegetables", {"name": "파", "numOfRows": 2})
        assert named.total >= 1 and all("파" in r["name"] for r in named.rows)
        rice = await client.call("toy_grain_prices", {"grain": "쌀"})
        assert rice.total >= 1 and {r["grain"] for r in rice.rows} == {"쌀"}
        assert all(isinstance(r["price"], float) for r in rice.rows)
        bound = await client.call("toy_list_orchards", {"name": "청"})
        assert bound.rows == [{"code": "F03", "name": "청사과", "price": 1500}]
        with pytest.raises(PlatformError) as missing:
            await client.call("toy_grain_prices", {})
        assert missing.value.code == "10"


def conditions(catalog: dict[str, Any]) -> None:
    """The vegetables selected as 행정안전부's services select: `cond[COLUMN::OP]` names the column and the match."""
    catalog["datasets"][0]["params"] = [
        {"name": "cond[name::LIKE]", "description": "이름을(를) 포함하는 값"},
        {"name": "cond[price::GTE]", "type": "integer"},
        {"name": "cond[price::LT]", "type": "integer"},
        {"name": "cond[code::EQ]"},
    ]


@pytest.mark.anyio
async def test_condition_parameters_select_on_the_column_they_name(tmp_path: Path) -> None:
    project = catalog_project(tmp_path, broken(conditions))
    op = project.platform("toy").operation("toy_list_vegetables")
    assert op.source.filters == [
        Filter(param="cond[name::LIKE]", column="name", match="contains"),
        Filter(param="cond[price::GTE]", column="price", match="gte"),
        Filter(param="cond[price::LT]", column="price", match="lt"),
        Filter(param="cond[code::EQ]", column="code", match="eq"),
    ]
    async with sandbox_client(open_sandbox(project), "toy") as client:
        band = await client.call("toy_list_vegetables", {"cond[price::GTE]": 300, "cond[price::LT]": 500})
        assert [r["price"] for r in band.rows] == [300, 400]
        named = await client.call("toy_list_vegetables", {"cond[name::LIKE]": "파"})
        assert named.total >= 1 and all("파" in r["name"] for r in named.rows)
        one = await client.call("toy_list_vegetables", {"cond[code::EQ]": band.rows[0]["code"]})
        assert [r["price"] for r in one.rows] == [300]


def test_condition_parameter_mistakes_are_errors_at_their_line(tmp_path: Path) -> None:
    def mistakes(catalog: dict[str, Any]) -> None:
        conditions(catalog)
        params = catalog["datasets"][0]["params"]
        params[0]["field"] = "code"  # contradicts the column it names
        params[1]["match"] = "eq"  # contradicts GTE
        params[2]["name"] = "cond[price::BETWEEN]"  # no such operator
        params[3]["name"] = "cond[colour::EQ]"  # no such column

    assert catalog_problems(tmp_path, broken(mistakes)) == [
        f"{CATALOG_FILE}:26: datasets[0].params[0]: error: cond[name::LIKE] selects with field 'name', not 'code': "
        "remove `field`",
        f"{CATALOG_FILE}:29: datasets[0].params[1]: error: cond[price::GTE] selects with match 'gte', not 'eq': "
        "remove `match`",
        f"{CATALOG_FILE}:32: datasets[0].params[2].name: error: 'cond[price::BETWEEN]' is neither a name "
        "(letters, digits, _) nor a condition cond[COLUMN::OP] with OP one of EQ, LIKE, GTE, GT, LTE, LT",
    ]
    catalog = broken(mistakes)
    del catalog["datasets"][0]["params"][0]["field"]
    catalog["datasets"][0]["params"][1:3] = []
    assert catalog_problems(tmp_path / "shaped", catalog) == [
        f"{CATALOG_FILE}:28: datasets[0].params[1].name: error: condition 'cond[colour::EQ]' selects on column "
        "'colour', which is not among the dataset's fields: add it to `fields` or fix the condition",
    ]


def own_formats(catalog: dict[str, Any]) -> None:
    """One ministry, three format switches: the platform's `type`, `resultType` spelled in capitals, none."""
    catalog["datasets"][0]["format"] = {"param": "resultType", "json": "JSON", "xml": "XML"}
    catalog["datasets"][1]["format"] = {}


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["json", "xml"])
async def test_a_dataset_with_its_own_format_switch(tmp_path: Path, wire: str) -> None:
    project = catalog_project(tmp_path, broken(own_formats))
    toy = project.platform("toy")
    vegetables, grain, orchards = (
        toy.operation(t) for t in ("toy_list_vegetables", "toy_grain_prices", "toy_list_orchards")
    )
    assert [p.name for p in vegetables.params] == ["pageNo", "numOfRows", "name", "min_price", "resultType"]
    assert [p.name for p in grain.params] == ["pageNo", "numOfRows", "grain"]
    assert "type" in [p.name for p in orchards.params]  # the platform's switch where a dataset says nothing
    build(project)
    listing = json.loads((tmp_path / "generated/servers/toy/tools.json").read_text(encoding="utf-8"))
    arguments = {t["name"]: set(t["inputSchema"]["properties"]) for t in listing["tools"]}
    assert not {"type", "resultType"} & (arguments["toy_list_vegetables"] | arguments["toy_grain_prices"])
    seen: list[tuple[str, str]] = []

    def exchange(request: Any, response: Any) -> None:
        seen.append((str(request.url.query, "ascii"), response.headers["content-type"]))

    async with sandbox_client(open_sandbox(project), "toy", wire=wire) as client:  # type: ignore[arg-type]
        client.on_exchange = exchange
        assert (await client.call("toy_list_vegetables", {"numOfRows": 2})).total == 6
        assert (await client.call("toy_grain_prices", {"grain": "쌀"})).total >= 1
        assert (await client.call("toy_list_orchards", {})).total >= 1
    (veg_query, veg_type), (grain_query, grain_type), (orchard_query, orchard_type) = seen
    assert f"resultType={wire.upper()}" in veg_query and "type=" not in veg_query.replace("resultType=", "")
    assert veg_type.startswith(f"application/{wire}" if wire == "json" else "text/xml")
    assert "type=" not in grain_query.lower() and grain_type.startswith("text/xml")  # its one format
    assert f"type={wire}" in orchard_query and orchard_type.startswith(
        "application/json" if wire == "json" else "text/xml"
    )


def test_format_switch_mistakes_are_errors_at_their_line(tmp_path: Path) -> None:
    def mistakes(catalog: dict[str, Any]) -> None:
        catalog["datasets"][0]["format"] = {"param": "name", "json": "json"}  # also a parameter of its own

    assert catalog_problems(tmp_path, broken(mistakes)) == [
        f"{CATALOG_FILE}:50: datasets[0].format: error: format parameter 'name' is also one of the dataset's "
        "params: remove it there, or name the switch the API has",
    ]
    spec = catalog_spec()
    spec["paths"]["/fruits"]["get"]["x-kopa"]["format"] = {"param": "resultType", "json": "json"}
    (found,) = problems(tmp_path / "hand", spec, edit=with_catalog(CATALOG))
    assert found.endswith(
        "error: format parameter 'resultType' missing (x-kopa.format of this operation): add it to the parameters "
        "or give the operation its own x-kopa.format"
    ), found


def held_region(catalog: dict[str, Any]) -> None:
    """곡물 가격 asked by a region code as a number, which the source lists among no response fields."""
    grain = catalog["datasets"][1]
    grain["params"].append({"name": "regionCd", "type": "integer", "required": True})
    grain["fields"].append(
        {"name": "regionCd", "type": "integer", "sent": False, "gen": {"choice": [11, 26]}}
    )
    grain["rows"] = 24


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["json", "xml"])
async def test_a_field_held_back_selects_rows_and_is_not_sent(tmp_path: Path, wire: str) -> None:
    """A dataset's field with `sent: false` is a column of its world table that a parameter selects on, absent
    from the answer, the row schema and the tool's output schema (the source names no such response field)."""
    project = catalog_project(tmp_path, broken(held_region))
    op = project.platform("toy").operation("toy_grain_prices")
    assert "regionCd" not in op.row_schema["properties"] and set(op.kopa.held) == {"regionCd"}
    build(project)
    listing = json.loads((tmp_path / "generated/servers/toy/tools.json").read_text(encoding="utf-8"))
    tool = next(t for t in listing["tools"] if t["name"] == "toy_grain_prices")
    assert "regionCd" in tool["inputSchema"]["required"]
    assert "regionCd" not in json.dumps(tool["outputSchema"])
    async with sandbox_client(open_sandbox(project), "toy", wire=wire) as client:  # type: ignore[arg-type]
        seoul = await client.call("toy_grain_prices", {"grain": "쌀", "regionCd": 11, "numOfRows": 2})
        busan = await client.call("toy_grain_prices", {"grain": "쌀", "regionCd": 26, "numOfRows": 2})
        nowhere = await client.call("toy_grain_prices", {"grain": "쌀", "regionCd": 99})
        rice = await client.call(
            "toy_grain_prices", {"grain": "쌀", "regionCd": 11, "numOfRows": 1, "pageNo": 1}
        )
    assert seoul.total >= 1 and busan.total >= 1 and nowhere.total == 0
    db = open_world(ensure_world(project.world).path)
    counted = dict(
        db.execute('SELECT "regionCd", count(*) FROM "auto_toy_grain_prices" WHERE grain = \'쌀\' GROUP BY 1')
    )
    assert (seoul.total, busan.total, rice.total) == (counted[11], counted[26], counted[11])
    assert all(set(row) == {"grain", "price"} for row in [*seoul.rows, *busan.rows])


def test_held_field_mistakes_are_errors_at_their_line(tmp_path: Path) -> None:
    def served_and_held(catalog: dict[str, Any]) -> None:
        held_region(catalog)
        catalog["datasets"][1]["fields"][2]["name"] = "GRAIN"  # the sent `grain`, to SQLite
        catalog["datasets"][1]["params"][1]["name"] = "GRAIN"

    def held_by_the_world(catalog: dict[str, Any]) -> None:
        catalog["datasets"][2]["fields"].append({"name": "owner", "sent": False})  # a world-bound dataset

    assert catalog_problems(tmp_path / "a", broken(served_and_held)) == [
        f"{CATALOG_FILE}:65: datasets[1].fields[2]: error: 'GRAIN' is sent (a property of the row schema, names "
        "compared without case as SQLite does) and held back: keep one"
    ]
    assert catalog_problems(tmp_path / "b", broken(held_by_the_world)) == [
        f"{CATALOG_FILE}:75: datasets[2].fields[3].sent: error: a field held back is a column of the synthesised "
        "table; a dataset with a `source` is served by the world's table: select on one of its columns, or remove "
        "`source`"
    ]


def test_envelope_placeholders_are_each_datasets_own(tmp_path: Path) -> None:
    """A response template may name its elements per dataset (the DRF: `{root}`, `{item}`); a dataset gives each
    placeholder a value, and none the template lacks."""

    def named(catalog: dict[str, Any]) -> None:
        catalog["defaults"]["response"] = {
            "type": "object",
            "required": ["{root}"],
            "properties": {
                "{root}": {
                    "type": "object",
                    "properties": {"{item}": {"type": "array", "items": {"$ref": "{row}"}}},
                }
            },
        }
        catalog["defaults"]["echo"] = [{"field": "pageNo", "param": "pageNo", "default": "1"}]
        catalog["datasets"][0]["fields"].insert(0, {"name": "id", "attribute": True})
        for ds, root in zip(catalog["datasets"], ("Veg", "Grain", "Orchard"), strict=True):
            ds["envelope"] = {"root": root, "item": root.lower()}

    toy = catalog_project(tmp_path, broken(named)).platform("toy")
    vegetables = toy.operation("toy_list_vegetables")
    schema = toy.doc["paths"][vegetables.path]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"
    ]
    assert schema["required"] == ["Veg"] and "veg" in schema["properties"]["Veg"]["properties"]
    assert vegetables.row_props["id"]["xml"] == {"attribute": True}
    assert [(e.field, e.param, e.default) for e in vegetables.kopa.echo] == [("pageNo", "pageNo", "1")]

    def mistakes(catalog: dict[str, Any]) -> None:
        named(catalog)
        del catalog["datasets"][0]["envelope"]["item"]
        catalog["datasets"][1]["envelope"]["colour"] = "red"

    assert catalog_problems(tmp_path / "wrong", broken(mistakes)) == [
        f"{CATALOG_FILE}:35: datasets[0]: error: the response template's {{item}} has no value here: add "
        "`envelope: {item: ...}`",
        f"{CATALOG_FILE}:84: datasets[1].envelope.colour: error: the response template has no {{colour}}: remove "
        "it, or use it in defaults.response",
    ]


def test_a_catalog_of_2400_datasets_expands_to_2400_unique_tools(tmp_path: Path) -> None:
    """Scale case (built here): the paper's 2,318 tools are catalogs of this size."""
    datasets = [
        {"code": f"OPENAPI{i:05d}", "summary": f"데이터셋 {i}", "fields": [{"name": "VAL"}]}
        for i in range(2400)
    ]
    catalog = {**copy.deepcopy(CATALOG), "datasets": datasets}
    write_project(tmp_path, catalog_spec())
    with_catalog(catalog)(tmp_path)
    path = tmp_path / "specs/platforms/toy/openapi.yaml"
    diags = Diagnostics()
    src, _ = expand_catalogs(path, tmp_path, load_yaml(path, tmp_path), diags)
    assert not diags.items
    tools = [op["get"]["x-kopa"]["tool"] for route, op in src.data["paths"].items() if route != "/fruits"]
    assert len(tools) == len(set(tools)) == 2400
    assert max(len(t) for t in tools) <= MAX_TOOL
    assert tools[0] == "toy_openapi00000"


def test_catalog_mistakes_are_errors_at_the_catalog_line(tmp_path: Path) -> None:
    def mistakes(catalog: dict[str, Any]) -> None:
        veg, grain, orchards = catalog["datasets"]
        catalog["datasets"].append({**copy.deepcopy(orchards), "tool": "toy_list_vegetables"})
        catalog["datasets"].append({"code": "x" * 70, "summary": "긴 이름", "fields": [{"name": "a"}]})
        orchards["params"] += [{"name": "colour"}, {"name": "kind", "field": "kind"}]
        veg["fields"].append({"name": "code"})
        del veg["summary"]
        grain["params"][0]["type"] = "text"

    # the file's shape first: a dataset that is not one stops the expansion
    assert catalog_problems(tmp_path, broken(mistakes)) == [
        f"{CATALOG_FILE}:21: datasets[0].summary: error: required field is missing",
        f"{CATALOG_FILE}:54: datasets[1].params[0].type: error: Input should be 'string', 'integer' or 'number'",
    ]
    catalog = broken(mistakes)
    catalog["datasets"][0]["summary"] = "채소 목록"
    del catalog["datasets"][1]["params"][0]["type"]
    assert catalog_problems(tmp_path / "shaped", catalog) == [
        f"{CATALOG_FILE}:48: datasets[0].fields[3].name: error: field 'code' is listed twice; remove one",
        f"{CATALOG_FILE}:70: datasets[2].params[1].name: error: parameter 'colour' selects on no field: add "
        "'colour' to the dataset's fields or name the field it selects on with `field:`",
        f"{CATALOG_FILE}:72: datasets[2].params[2].field: error: parameter 'kind' selects on no field: add "
        "'kind' to the dataset's fields or name the field it selects on with `field:`",
        f"{CATALOG_FILE}:82: datasets[3].code: error: dataset code 'orchards' is listed twice (first at "
        f"{CATALOG_FILE}:64); remove one",
        f"{CATALOG_FILE}:83: datasets[3].tool: error: tool name 'toy_list_vegetables' is taken (by "
        f"{CATALOG_FILE}:21); give this dataset its own `tool:`",
        f"{CATALOG_FILE}:97: datasets[4].code: error: tool name 'toy_{'x' * 70}' is 74 characters; MCP allows "
        "at most 64: give the dataset a shorter `tool:`",
    ]


def test_a_catalog_file_that_does_not_exist_and_a_dangling_shared_parameter(tmp_path: Path) -> None:
    spec = catalog_spec()
    spec["x-kopa"]["catalog"] = ["catalog.yaml", "more.yaml"]
    catalog = broken(
        lambda c: c["defaults"]["parameters"][0].update({"$ref": "#/components/parameters/page"})
    )
    assert problems(tmp_path, spec, edit=with_catalog(catalog)) == [
        f"{CATALOG_FILE}:3: defaults.parameters[0].$ref: error: dangling $ref '#/components/parameters/page': "
        "define it under components.parameters of specs/platforms/toy/openapi.yaml or fix the pointer",
        "specs/platforms/toy/openapi.yaml:139: x-kopa.catalog[1]: error: catalog file 'more.yaml' does not "
        "exist; write it beside openapi.yaml or fix the name",
    ]


def test_later_checks_of_an_expanded_dataset_name_the_catalog_line(tmp_path: Path) -> None:
    """A binding the row schema lacks is found after expansion, yet reported where the dataset says it."""
    catalog = broken(lambda c: c["datasets"][2]["source"]["order"].append({"column": "colour"}))
    assert catalog_problems(tmp_path, catalog) == [
        f"{CATALOG_FILE}:78: datasets[2].source.order[1].column: error: column 'colour' is in neither the row "
        "schema nor world view 'toy_fruit'; add it to one of them or bind another column"
    ]

"""Broken specs fail the build with every problem listed: file, field path, line and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kopa_gen.language.diagnostics import SpecError
from kopa_gen.project import load_project
from tests.toyspec import spec_copy, write_project

SPEC_FILE = "specs/platforms/toy/openapi.yaml"


def errors_of(tmp_path: Path, spec: dict[str, object]) -> list[str]:
    write_project(tmp_path, spec)
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    return [d.render() for d in info.value.diagnostics]


def test_valid_toy_spec_loads(tmp_path: Path) -> None:
    project = load_project(write_project(tmp_path))
    assert [op.tool for op in project.platforms[0].operations] == ["toy_list_fruits"]


def test_wrong_parameter_type_names_place_and_line(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["paths"]["/fruits"]["get"]["parameters"][0]["schema"]["type"] = "strin"
    found = errors_of(tmp_path, spec)
    assert (
        f"{SPEC_FILE}:19: paths./fruits.get.parameters[0].schema.type: error: "
        "invalid JSON Schema: 'strin' is not valid under any of the given schemas"
    ) in found


def test_a_broken_response_schema_is_an_error_at_its_own_line(tmp_path: Path) -> None:
    """A Schema Object the OAS 3.1 dialect rejects, deep in a component (which only the OpenAPI check reads), is
    reported where it is written, not at the top of the file."""
    spec = spec_copy()
    spec["components"]["schemas"]["Fruit"]["properties"]["price"]["type"] = "integr"
    found = errors_of(tmp_path, spec)
    assert [f for f in found if "OpenAPI 3.1 validation" in f] == [
        f"{SPEC_FILE}:75: components.schemas.Fruit.properties.price.type: error: OpenAPI 3.1 validation: "
        "\"integr\" is not valid under any of the schemas listed in the 'anyOf' keyword"
    ]


def test_dangling_ref(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["paths"]["/fruits"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"] = (
        "#/components/schemas/Nope"
    )
    found = errors_of(tmp_path, spec)
    assert found == [
        f"{SPEC_FILE}:44: paths./fruits.get.responses.200.content.application/json.schema.$ref: error: "
        "dangling $ref '#/components/schemas/Nope': define it under components or fix the pointer"
    ]


def test_duplicate_tool_name(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["paths"]["/fruits2"] = spec_copy()["paths"]["/fruits"]
    spec["paths"]["/fruits2"]["get"]["operationId"] = "getFruits2"
    found = errors_of(tmp_path, spec)
    assert any(
        "paths./fruits2.get.x-kopa.tool: error: duplicate tool name 'toy_list_fruits' (also /fruits); "
        "give each operation its own name" in f
        for f in found
    ), found


def test_binding_to_missing_column(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["paths"]["/fruits"]["get"]["x-kopa"]["source"]["filters"][0]["column"] = "colour"
    found = errors_of(tmp_path, spec)
    assert found == [
        f"{SPEC_FILE}:54: paths./fruits.get.x-kopa.source.filters[0].column: error: column 'colour' is in neither "
        "the row schema nor world view 'toy_fruit'; add it to one of them or bind another column"
    ]


def test_row_field_missing_from_world_view(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["components"]["schemas"]["Fruit"]["properties"]["weight"] = {"type": "string"}
    found = errors_of(tmp_path, spec)
    assert found == [
        f"{SPEC_FILE}:51: paths./fruits.get.x-kopa.source.table: error: world view 'toy_fruit' lacks columns weight "
        "of row schema Fruit; add them to the view or remove them from the row schema"
    ]


def test_every_problem_is_listed_together(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["x-kopa"]["answers"]["ok"] = "0"
    spec["paths"]["/fruits"]["get"]["x-kopa"]["colour"] = "red"
    spec["paths"]["/fruits"]["get"]["x-kopa"]["tool"] = "x" * 70
    spec["paths"]["/fruits"]["get"]["parameters"][1]["schema"]["minimum"] = "one"
    found = errors_of(tmp_path, spec)
    assert len(found) == 5, found
    assert sum("x-kopa.colour: error: unknown field; remove it" in f for f in found) == 1
    assert sum("x-kopa.answers.ok: error: code '0' is not listed in x-kopa.codes" in f for f in found) == 1
    assert sum("x-kopa.tool: error: String should match pattern" in f for f in found) == 1
    assert (
        sum(
            "parameters[1].schema.minimum: error: invalid JSON Schema: 'one' is not of type 'number'" in f
            for f in found
        )
        == 1
    )


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    write_project(tmp_path)
    path = tmp_path / SPEC_FILE
    path.write_text(path.read_text(encoding="utf-8") + "broken: [unclosed\n", encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    (diag,) = info.value.diagnostics
    assert diag.file == SPEC_FILE and diag.line is not None and "invalid YAML" in diag.message


def test_world_file_error_is_located(tmp_path: Path) -> None:
    from tests.toyspec import WORLD_FILE

    world = {"tables": [{**WORLD_FILE["tables"][0], "generatr": "static"}], "views": WORLD_FILE["views"]}
    write_project(tmp_path, world=world)
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    rendered = [d.render() for d in info.value.diagnostics]
    assert (
        "specs/world/toy.yaml:19: tables[0].generatr: error: unknown field; remove it or check its spelling "
        "against the JSON Schema" in rendered
    ), rendered


def test_example_values_are_checked_against_the_tools(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["x-kopa"]["examples"] = {"name": ["사과"], "numOfRows": [2, 5, "3"], "type": ["json"]}
    found = errors_of(tmp_path, spec)
    assert found == [
        f"{SPEC_FILE}:135: x-kopa.examples.numOfRows[1]: error: 5 is greater than the maximum of 2 "
        "(tool toy_list_fruits); give a value the real API accepts",
        f"{SPEC_FILE}:136: x-kopa.examples.numOfRows[2]: error: '3' is not of type 'integer' "
        "(tool toy_list_fruits); give a value the real API accepts",
        f"{SPEC_FILE}:138: x-kopa.examples.type: error: no tool of platform 'toy' takes an argument 'type'; "
        "key examples by tool argument name (see generated/servers/<platform>/tools.json)",
    ]


def _two_fruit_lists() -> dict[str, Any]:
    """The toy spec with a second list whose page size goes to 5 where the first one's stops at 2: one argument
    name, two sets of valid values."""
    spec = spec_copy()
    second = spec_copy()["paths"]["/fruits"]
    second["get"]["operationId"] = "getFruits2"
    second["get"]["x-kopa"]["tool"] = "toy_list_more_fruits"
    size = next(p for p in second["get"]["parameters"] if p.get("name") == "numOfRows")
    size["schema"]["maximum"] = 5
    spec["paths"]["/fruits2"] = second
    return spec


def test_an_operations_own_examples_replace_the_platforms_there(tmp_path: Path) -> None:
    """A platform-wide page size of 5 is wrong for the list that stops at 2; that list's own example takes its
    place, is checked against it alone, and each tool reads its own values."""
    spec = _two_fruit_lists()
    spec["x-kopa"]["examples"] = {"name": ["사과"], "numOfRows": [5]}
    (found,) = errors_of(tmp_path, spec)
    assert found.startswith(f"{SPEC_FILE}:") and found.endswith(
        ": x-kopa.examples.numOfRows[0]: error: 5 is greater than the maximum of 2 "
        "(tool toy_list_fruits); give a value the real API accepts"
    ), found
    spec["paths"]["/fruits"]["get"]["x-kopa"]["examples"] = {"numOfRows": [2]}
    platform = load_project(write_project(tmp_path, spec)).platforms[0]
    assert platform.examples("toy_list_fruits") == {"name": ["사과"], "numOfRows": [2]}
    assert platform.examples("toy_list_more_fruits") == {"name": ["사과"], "numOfRows": [5]}


def test_an_operations_own_examples_are_checked_at_their_line(tmp_path: Path) -> None:
    spec = _two_fruit_lists()
    spec["paths"]["/fruits"]["get"]["x-kopa"]["examples"] = {"numOfRows": [3], "colour": ["red"]}
    found = errors_of(tmp_path, spec)
    assert len(found) == 2, found
    assert found[0].endswith(
        "paths./fruits.get.x-kopa.examples.numOfRows[0]: error: 3 is greater than the maximum of 2 "
        "(tool toy_list_fruits); give a value the real API accepts"
    ), found
    assert found[1].endswith(
        "paths./fruits.get.x-kopa.examples.colour: error: tool 'toy_list_fruits' takes no argument 'colour'; "
        "key its examples by its argument names (see generated/servers/<platform>/tools.json)"
    ), found
    assert all(f.startswith(f"{SPEC_FILE}:") and f.split(":")[1].isdigit() for f in found), found

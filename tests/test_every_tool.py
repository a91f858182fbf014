"""Every tool of every platform, called through the official MCP client against the sandbox, with openapi-core
validating every HTTP exchange against the spec; JSON and XML wires give the same result."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from kopa_gen.client.validation import SpecValidator
from kopa_gen.compose import sandbox_client
from kopa_gen.mcp.generated import generated_module
from kopa_gen.project import Project
from kopa_gen.sandbox.emulator import Sandbox
from tests.conftest import repository_project
from tests.goldens import WRITTEN, golden_calls


def test_hand_written_golden_calls_name_real_tools(project: Project) -> None:
    """tests/calls.yaml may anchor any tool; what it lists must exist (the rest come from x-kopa.examples)."""
    for pid, calls in WRITTEN.items():
        assert set(calls) <= {op.tool for op in project.platform(pid).operations}, pid


async def run(
    sandbox: Sandbox, project: Project, pid: str, wire: str
) -> tuple[dict[str, Any], SpecValidator]:
    validator = SpecValidator(project.platform(pid))
    results: dict[str, Any] = {}
    async with sandbox_client(sandbox, pid, wire=wire) as http:  # type: ignore[arg-type]
        http.on_exchange = validator
        async with Client(
            generated_module(pid, root=project.root).create_server(http), mode="legacy"
        ) as client:
            for tool, case in golden_calls(project, pid).items():
                result = await client.call_tool(tool, case["args"])
                text = " ".join(getattr(c, "text", "") for c in result.content)
                assert not result.is_error, f"{tool}: {text}"
                data = result.structured_content
                assert data is not None
                if "record" in data:
                    assert data["record"], tool
                else:
                    assert data["total_count"] >= case.get("min_total", 1), (tool, data["total_count"])
                    assert (
                        len(data["rows"]) == min(data["page_size"], data["total_count"]) or data["page"] > 1
                    )
                results[tool] = data
    return results, validator


@pytest.mark.anyio
@pytest.mark.parametrize("pid", [p.id for p in repository_project().platforms])
async def test_every_tool_json_and_xml_agree_and_conform(
    project: Project, sandbox: Sandbox, pid: str
) -> None:
    as_json, v_json = await run(sandbox, project, pid, "json")
    as_xml, v_xml = await run(sandbox, project, pid, "xml")
    calls = len(golden_calls(project, pid))
    assert v_json.requests_checked >= calls and v_xml.requests_checked >= calls
    platform = project.platform(pid)
    formats = [platform.format(platform.operation(tool)) for tool in golden_calls(project, pid)]
    # an operation without a format switch answers its one format (XML), which the spec's JSON schemas do not describe
    json_answers = sum(1 for f in formats if f.param or f.extension or f.default == "json")
    assert v_json.responses_checked >= json_answers, "every JSON response was validated against the spec"
    assert as_json == as_xml


@pytest.mark.anyio
async def test_validator_catches_a_response_that_breaks_the_spec(project: Project, sandbox: Sandbox) -> None:
    import httpx
    from openapi_core.validation.response.exceptions import InvalidData

    validator = SpecValidator(project.platform("region"))
    async with sandbox_client(sandbox, "region") as http:
        request = http.request(
            project.platform("region").operation("region_list_legal_districts"), {}, "json"
        )
    bad = httpx.Response(
        200,
        headers={"content-type": "text/html;charset=UTF-8"},
        content=b'{"StanReginCd":[{"head":[{"totalCount":"many"}]},{"row":[]}]}',
    )
    with pytest.raises(InvalidData):
        validator(request, bad)

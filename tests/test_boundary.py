"""What a hostile model or client sends is answered, never raised: unpaired surrogates, NULs and control characters,
nesting deeper than any tool takes, integers too long to write, NaN, a megabyte tool name. Each is a tool error
naming the argument and the limit, the call log completes, and an eval whose model sends all of them finishes with
every line of episodes.jsonl strict JSON. Tools are read from the specs: one of every platform is attacked."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from kopa_gen.client.client import PlatformClient, RetryPolicy
from kopa_gen.client.errors import PlatformError
from kopa_gen.evaluate.rundir import read_episodes
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.language.kopa import Category
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.mcp.boundary import LIMITS
from kopa_gen.policies.double import ChatDouble, Reply, ToolCall
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig, sandbox_key
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.build import BuiltWorld


def deep(levels: int) -> Any:
    """A list nested `levels` deep, built without recursion."""
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def first_of(schema: dict[str, Any], kind: str) -> str | None:
    return next((n for n, p in schema.get("properties", {}).items() if p.get("type") == kind), None)


def attacks(tool: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(what, arguments, the argument the error must name) for one tool, from its input schema."""
    schema = tool["inputSchema"]
    text, number = first_of(schema, "string"), first_of(schema, "integer")
    out: list[tuple[str, Any, str]] = [
        ("nesting", {"x": deep(100_000)}, f"nested more than {LIMITS.depth} levels"),
        ("values", {"x": list(range(LIMITS.values + 1))}, f"more than {LIMITS.values:,} values"),
        ("NaN", {"x": float("nan")}, "x: nan is not a number JSON can carry"),
        ("a surrogate key", {"\udc80": 1}, "(key): character 1 is an unpaired surrogate (U+DC80)"),
    ]
    if text is not None:
        out += [
            ("surrogate", {text: "ab\ud800"}, f"{text}: character 3 is an unpaired surrogate (U+D800)"),
            ("NUL", {text: "a\x00bcdef"}, f"{text}: character 2 is a NUL (U+0000)"),
            ("escape", {text: "\x1b[31m"}, f"{text}: character 1 is a control character (U+001B)"),
            ("text", {text: "가" * (LIMITS.chars + 1)}, f"more than {LIMITS.chars:,} characters"),
        ]
    if number is not None:
        out.append(("huge integer", {number: 10**5000}, f"{number}: an integer of more than"))
    return out


@pytest.mark.anyio
async def test_hostile_arguments_are_tool_errors_naming_the_argument(
    project: Project, world: BuiltWorld
) -> None:
    platforms = sorted(p.id for p in project.platforms)
    async with Session.open(project, platforms, sandbox=SandboxConfig(limits=False)) as session:
        by_platform: dict[str, dict[str, Any]] = {}
        for tool in session.tools():
            owner = next(pid for pid, box in session.toolboxes.items() if tool["name"] in box.bindings)
            by_platform.setdefault(owner, tool)
        assert sorted(by_platform) == platforms
        sent = 0
        for tool in by_platform.values():
            for what, arguments, named in attacks(tool):
                outcome = await session.call(tool["name"], arguments)
                sent += 1
                assert outcome.is_error and outcome.error_code == "bad_arguments", (tool["name"], what)
                assert named in outcome.text, (tool["name"], what, outcome.text[:300])
                outcome.text.encode("utf-8")  # the answer itself is text
        assert len(session.calls) == sent
        assert all(c.error_code != "running" for c in session.calls), "every log record completes"


@pytest.mark.anyio
async def test_a_long_unknown_name_is_echoed_cut_and_announced(project: Project, world: BuiltWorld) -> None:
    async with Session.open(project, ["workspace"]) as session:
        outcome = await session.call("x" * 1_000_000 + "\ud800", {})
    assert outcome.is_error and outcome.error_code == "unknown_tool"
    assert "a name of 1,000,001 characters, cut here" in outcome.text
    assert len(outcome.text) < 2_000
    outcome.text.encode("utf-8")


@pytest.mark.anyio
async def test_a_nul_never_reaches_the_workspace(project: Project, world: BuiltWorld) -> None:
    """ "a\\x00bcdef" once stored with size 1 (SQLite's length() stops at a NUL): now it is refused, and clean text
    is stored with its true size."""
    async with Session.open(project, ["workspace"]) as session:
        refused = await session.call("workspace_write_file", {"path": "a.txt", "content": "a\x00bcdef"})
        stored = await session.call("workspace_write_file", {"path": "b.txt", "content": "a\tbcdef"})
        listing = await session.call("workspace_list_files", {})
    assert refused.is_error and "content: character 2 is a NUL" in refused.text
    assert not stored.is_error
    assert listing.structured is not None
    assert [(r["path"], r["size"]) for r in listing.structured["rows"]] == [("b.txt", 7)]


@pytest.fixture(scope="module")
def served(project: Project, world: BuiltWorld) -> Iterator[str]:
    """The sandbox on a loopback port (real HTTP), limits off."""
    sandbox = open_sandbox(project, SandboxConfig(limits=False))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(sandbox.app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.mark.anyio
async def test_the_sandbox_refuses_what_no_parameter_holds(project: Project, served: str) -> None:
    """Over HTTP a third-party client can send what the tool boundary refuses: a NUL or another control character,
    an integer of 5,000 digits (Python cannot read one past 4,300), a code with a line break after it (Python's
    `$` matched before it). For one operation of every platform each is the platform's own bad-parameter answer,
    never a 500 (the client raises the platform's error with its category)."""
    checked: list[str] = []
    for platform in project.platforms:
        ops = [op for op in platform.operations if op.kopa.shape != "file"]
        client = PlatformClient(
            platform,
            key=sandbox_key(platform),
            base_url=served + f"/{platform.id}{platform.base_path}",
            retry=RetryPolicy(attempts=1),
        )
        async with client:
            for kind, value in (("integer", "1" + "0" * 5000), ("string", "a\x00b"), ("string", "a\x07b")):
                op = next((op for op in ops if any(_free(p.schema, kind) for p in op.params)), None)
                if op is None:
                    continue
                param = next(p for p in op.params if _free(p.schema, kind))
                params = {p.name: _example(p.schema) for p in op.params if p.required} | {param.name: value}
                with pytest.raises(PlatformError) as caught:
                    await client.call(op, params)
                assert caught.value.category is Category.BAD_PARAM, (
                    platform.id,
                    op.operation_id,
                    caught.value,
                )
                checked.append(f"{platform.id}.{op.operation_id}.{param.name}")
            patterned = [
                (op, p) for op in ops for p in op.params if p.schema.get("pattern", "").endswith("$")
            ]
            if patterned and platform.kopa.answers.bad_value is not None:
                op, param = patterned[0]
                value = next(iter(param.schema.get("examples") or []), None)
                if value is not None:
                    params = {p.name: _example(p.schema) for p in op.params if p.required}
                    with pytest.raises(PlatformError) as caught:
                        await client.call(op, params | {param.name: f"{value}\n"})
                    assert caught.value.category is Category.BAD_PARAM, (platform.id, op.operation_id)
                    checked.append(f"{platform.id}.{op.operation_id}.{param.name}+newline")
    assert len(checked) >= len(project.platforms), checked


def _free(schema: dict[str, Any], kind: str) -> bool:
    return schema.get("type") == kind and not schema.get("enum")


def _example(schema: dict[str, Any]) -> Any:
    examples = schema.get("examples") or schema.get("enum") or [1 if schema.get("type") == "integer" else "1"]
    return examples[0]


def test_an_eval_whose_model_sends_all_of_it_finishes_in_strict_json(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    """The model behind a real HTTP endpoint sends every class at once, in parallel calls, then an answer with an
    unpaired surrogate in it. The episode ends answered with every call logged as a tool error, and
    episodes.jsonl is strict JSON (no NaN, every line UTF-8), which a resume reads back."""
    task = max((t for _, t in project.tasks), key=lambda t: (t.max_calls or 0, t.id))
    fixture = json.loads((project.fixtures_dir / task.domain / f"{task.id}.json").read_text(encoding="utf-8"))
    tool = fixture["steps"][0][0]["tool"]
    deep_json = "[" * 100_000 + "]" * 100_000
    calls = [
        ToolCall(tool, {"x": "\ud800"}),
        ToolCall(tool, '{"x": ' + deep_json + "}"),
        ToolCall(tool, '{"x": 1' + "0" * 5000 + "}"),
        ToolCall(tool, '{"x": NaN, "y": Infinity}'),
        ToolCall(tool, {"x": "a\x00b\x1b"}),
        ToolCall("t" * 1_000_000, {}),
    ]
    script = [Reply(tool_calls=calls), Reply(content="최종 답: \ud800 1")]
    with ChatDouble(script) as double:
        config = EvalConfig(
            policy="openai",
            out=tmp_path,
            rollouts=1,
            tasks=[task.id],
            answer_mode="text",
            endpoint=EndpointSettings(
                base_url=double.base_url, model="hostile", api_key_env="KOPA_TEST_NO_KEY", retries=0
            ),
        )
        (record,) = asyncio.run(run_eval(project, config))
        assert double.remaining == 0
    assert record["stop_reason"] == "answered", record["error"]
    assert record["final_message"] == "최종 답: \ufffd 1"
    assert len(record["calls"]) == len(calls)
    assert all(c["is_error"] for c in record["calls"])
    assert {c["error_code"] for c in record["calls"]} <= {"bad_arguments", "unknown_tool"}
    raw = (tmp_path / "episodes.jsonl").read_bytes()

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    for line in raw.decode("utf-8").splitlines():  # strict: UTF-8 and no NaN/Infinity
        json.loads(line, parse_constant=refuse)
    assert read_episodes(tmp_path / "episodes.jsonl").records[0]["key"] == record["key"]

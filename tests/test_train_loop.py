"""Our agent loop inside verl's real ToolAgentLoop machinery, on CPU: built the way AgentLoopWorker builds it
(hydra instantiate of our agent-loop YAML entry, tools from our tool-config YAML through verl's loader), with a
scripted token generator in place of the model and an offline tokenizer, against the sandbox."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl")

from omegaconf import OmegaConf
from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.tools.tool_registry import load_all_tools

from kopa_gen.evaluate.runner import EvalConfig, load_fixture, opened_platforms, run_episode
from kopa_gen.language.task import Task
from kopa_gen.policies.openai import openai_tools
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session, exposure, listed_tools
from kopa_gen.train import contract
from kopa_gen.train import tools as kopa_tools
from kopa_gen.train.agent_loop import KopaToolAgentLoop
from kopa_gen.train.harness import (
    LoopHarness,
    ScriptedGenerator,
    hermes_tool_calls,
    replay_script,
    row_kwargs,
)
from kopa_gen.train.reward import compute_score
from kopa_gen.world.build import BuiltWorld

ROOT = Path(__file__).resolve().parent.parent


def task_named(project: Project, pick: Callable[[Task], bool]) -> tuple[Task, dict[str, Any]]:
    task = next(t for _, t in project.tasks if pick(t))
    return task, load_fixture(project, task)


@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> list[Session]:
    closed: list[Session] = []
    original = Session.close

    async def spy(self: Session) -> None:
        closed.append(self)
        await original(self)

    monkeypatch.setattr(Session, "close", spy)
    return closed


def oracle_record(project: Project, task: Task, fixture: dict[str, Any], tmp: Path) -> dict[str, Any]:
    return asyncio.run(run_episode(project, EvalConfig(policy="oracle", out=tmp), task, fixture, 0, 0))


@pytest.mark.parametrize(
    "pick",
    [
        pytest.param(
            lambda t: {"RESPONSE", "ENVIRONMENT"} <= set(t.reward) and len(t.gold) >= 3, id="answer+state"
        ),
        pytest.param(lambda t: any(len(s.calls) > 1 for s in t.gold), id="parallel-calls"),
    ],
)
def test_oracle_script_through_verl_scores_one(
    project: Project, world: BuiltWorld, tmp_path: Path, closes: list[Session], pick: Callable[[Task], bool]
) -> None:
    task, fixture = task_named(project, pick)
    record = oracle_record(project, task, fixture, tmp_path)
    assert record["reward"] is True
    script = replay_script(record)
    rig = LoopHarness(project, tmp_path, fixture["platforms"])
    names = [tool["name"] for _, tool in kopa_tools.mcp_tools(project, fixture["platforms"])]
    server = ScriptedGenerator(rig.tok, script)
    loop, out = rig.play(server, row_kwargs(task, fixture, names))

    extra = out.extra_fields
    assert extra[contract.FINAL_MESSAGE] == record["final_message"]
    assert extra[contract.STATE_HASH] == record["state_hash"]
    calls = contract.calls_from_json(extra[contract.CALLS])
    assert [(c.tool, c.arguments, c.text) for c in calls] == [
        (c["tool"], c["arguments"], c["text"]) for c in record["calls"]
    ]
    assert json.loads(extra[contract.TURNS]) == record["turns"]
    assert extra[contract.STOP_REASON] == "answered"
    # the tool messages are the sandbox's answers, in full
    assert loop.agent_data is not None
    tool_msgs = [m["content"] for m in loop.agent_data.messages if m["role"] == "tool"]
    assert tool_msgs == [c["text"] for c in record["calls"]]
    assert any(not c.is_error and c.structured for c in calls)
    # the model saw the full tool schemas (nested keywords verl's own model would drop)
    prompt = rig.tok.decode(server.prompts[0])
    assert '"additionalProperties": false' in prompt
    # the session is closed and unregistered
    assert kopa_tools.SESSIONS == {} and loop.session is None and len(closes) >= 1
    # the reward over the loop's output is the eval reward
    info = {**row_kwargs(task, fixture, names)["extra_info"], **extra}
    got = compute_score(contract.data_source("bench"), "", contract.ground_truth(task, fixture), info)
    assert got["score"] == 1.0
    assert got["action"] == record["action"]["action"]


def test_search_mode_through_verl_finds_then_calls_and_scores_one(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    """An export in search mode: verl's loop with search_tools and call_tool in its tool config, the oracle's
    search-mode episode replayed through it (searches by title, calls through call_tool) gives eval's calls,
    turns, state and reward."""
    entry = {tool for p in project.platforms for tool in p.kopa.entry}
    task, fixture = task_named(
        project,
        lambda t: (
            not project.touches_held_out(t)
            and any(c.tool not in entry for step in t.gold for c in step.calls)
        ),
    )
    opened = opened_platforms(project, fixture, "search", project.held_out)
    config = EvalConfig(policy="oracle", out=tmp_path, tools_mode="search", withheld=project.held_out)
    record = asyncio.run(run_episode(project, config, task, fixture, 0, 0))
    assert record["reward"] is True
    script = replay_script(record)
    assert "search_tools" in script[0] + script[1] and any('"call_tool"' in turn for turn in script)
    rig = LoopHarness(project, tmp_path, opened, search=True)
    exposed, index = exposure(project, opened, task.tools, "search")
    names = [t["name"] for t in listed_tools(project, opened, exposed, index)]
    loop, out = rig.play(
        ScriptedGenerator(rig.tok, script), row_kwargs(task, fixture, names, "search", opened)
    )
    extra = out.extra_fields
    calls = contract.calls_from_json(extra[contract.CALLS])
    assert [(c.tool, c.arguments, c.text) for c in calls] == [
        (c["tool"], c["arguments"], c["text"]) for c in record["calls"]
    ]
    assert json.loads(extra[contract.TURNS]) == record["turns"]
    assert extra[contract.STATE_HASH] == record["state_hash"]
    assert loop.agent_data is not None  # the model read the search results and the tools' answers in full
    assert [m["content"] for m in loop.agent_data.messages if m["role"] == "tool"] == [
        c["text"] for c in record["calls"]
    ]
    info = {**row_kwargs(task, fixture, names, "search", opened)["extra_info"], **extra}
    got = compute_score(contract.data_source("bench"), "", contract.ground_truth(task, fixture), info)
    assert got["score"] == 1.0


def first_exposed(task: Task, rig: LoopHarness) -> str:
    """A tool the task exposes (its `tools`, else the first of its platforms)."""
    return task.tools[0] if task.tools else rig.tools[0].name


def test_malformed_calls_come_back_as_tool_messages(
    project: Project, world: BuiltWorld, tmp_path: Path, closes: list[Session]
) -> None:
    task, fixture = task_named(project, lambda t: "RESPONSE" in t.reward and t.answer is not None)
    rig = LoopHarness(project, tmp_path, fixture["platforms"])
    real = first_exposed(task, rig)
    script = [
        hermes_tool_calls([("no_such_tool", {}), (real, "not a json object")]) + "<|im_end|>",
        "<tool_call>\n{not json at all\n</tool_call><|im_end|>",  # the parser drops it: a plain answer
    ]
    loop, out = rig.play(
        ScriptedGenerator(rig.tok, script), row_kwargs(task, fixture, [t.name for t in rig.tools])
    )
    assert loop.agent_data is not None
    tool_msgs = [m["content"] for m in loop.agent_data.messages if m["role"] == "tool"]
    assert len(tool_msgs) == 2
    assert "unknown tool 'no_such_tool'" in tool_msgs[0]
    assert real in tool_msgs[1] and "JSON object" in tool_msgs[1]
    calls = contract.calls_from_json(out.extra_fields[contract.CALLS])
    assert [(c.tool, c.error_code) for c in calls] == [
        ("no_such_tool", "unknown_tool"),
        (real, "bad_arguments"),
    ]
    assert json.loads(out.extra_fields[contract.TURNS]) == [[0, 1]]
    assert out.extra_fields[contract.STOP_REASON] == "answered"
    assert kopa_tools.SESSIONS == {} and len(closes) == 1
    got = compute_score("kopa/bench", "", contract.ground_truth(task, fixture), dict(out.extra_fields))
    assert got["score"] == 0.0


def test_arguments_that_are_not_json_reach_the_session(
    project: Project, world: BuiltWorld, tmp_path: Path, closes: list[Session]
) -> None:
    """verl answers non-JSON arguments itself; ours go to the session, logged and counted as in eval."""
    task, fixture = task_named(project, lambda t: True)
    rig = LoopHarness(project, tmp_path, fixture["platforms"])
    real = first_exposed(task, rig)

    class Direct(KopaToolAgentLoop):
        async def _handle_generating_state(
            self, agent_data: Any, sampling_params: Any, ignore_termination: bool = False
        ) -> Any:
            if agent_data.assistant_turns == 0:
                response = await self._call_tool(FunctionCall(name=real, arguments="{broken"), {}, agent_data)
                self.direct = response[0].text
            return await super()._handle_generating_state(agent_data, sampling_params, ignore_termination)

    rig.entry = OmegaConf.create({"name": contract.AGENT_NAME, "_target_": f"{__name__}.Direct"})
    globals()["Direct"] = Direct
    loop, out = rig.play(
        ScriptedGenerator(rig.tok, ["정답: 모름<|im_end|>"]),
        row_kwargs(task, fixture, [t.name for t in rig.tools]),
    )
    assert "JSON object" in loop.direct  # type: ignore[attr-defined,unused-ignore]
    calls = contract.calls_from_json(out.extra_fields[contract.CALLS])
    assert [(c.tool, c.arguments, c.error_code) for c in calls] == [(real, "{broken", "bad_arguments")]
    assert out.extra_fields[contract.FINAL_MESSAGE] == "정답: 모름"


def test_budget_ends_the_trajectory_and_errors_still_close_the_session(
    project: Project, world: BuiltWorld, tmp_path: Path, closes: list[Session]
) -> None:
    task, fixture = task_named(project, lambda t: t.max_calls is not None)
    assert task.max_calls is not None
    rig = LoopHarness(project, tmp_path, fixture["platforms"])
    real = first_exposed(task, rig)
    # the harness runs at most 8 calls a turn: the budget is spent over as many turns as it takes
    sizes = [min(8, task.max_calls - k) for k in range(0, task.max_calls, 8)]
    script = [hermes_tool_calls([(real, {})] * n) + "<|im_end|>" for n in sizes[:-1]]
    script += [
        "생각 중" + hermes_tool_calls([(real, {})] * sizes[-1]) + "<|im_end|>",
        # the turn after the budget is used up: for submitting; another call ends the trajectory
        hermes_tool_calls([(real, {})]) + "<|im_end|>",
        "never reached<|im_end|>",
    ]
    kwargs = row_kwargs(task, fixture, [t.name for t in rig.tools])
    _, out = rig.play(ScriptedGenerator(rig.tok, script), kwargs)
    assert out.extra_fields[contract.STOP_REASON] == "budget"
    assert out.extra_fields[contract.FINAL_MESSAGE] == "생각 중"  # the last assistant text, as eval keeps it
    calls = json.loads(out.extra_fields[contract.CALLS])
    assert len(calls) == task.max_calls + 1 and calls[-1]["error_code"] == "budget"

    # the same, but the turn after the budget submits: the trajectory ends there, answered
    answer = (
        {"answer": "x"}
        if task.answer is None or task.answer.kind != "number"
        else {"answer": 1, "unit": "개"}
    )
    script[-2] = "제출합니다" + hermes_tool_calls([("submit_answer", answer)]) + "<|im_end|>"
    _, out = rig.play(ScriptedGenerator(rig.tok, script), kwargs)
    assert out.extra_fields[contract.STOP_REASON] == "answered"
    assert out.extra_fields[contract.FINAL_MESSAGE] == "제출합니다"
    assert json.loads(out.extra_fields[contract.CALLS])[-1]["tool"] == "submit_answer"

    # the generator fails mid-trajectory: the error propagates, the session is closed and unregistered
    with pytest.raises(RuntimeError, match="script is over"):
        rig.play(ScriptedGenerator(rig.tok, [hermes_tool_calls([(real, {})]) + "<|im_end|>"]), kwargs)
    assert kopa_tools.SESSIONS == {} and rig.last.session is None and len(closes) == 3


def test_tool_without_a_session_answers_with_an_error(project: Project, tmp_path: Path) -> None:
    tool_yaml = kopa_tools.write_tool_config(project, ["workspace"], tmp_path / "tools.yaml")
    tools = load_all_tools(str(tool_yaml), None)
    assert tools and all(isinstance(t, kopa_tools.KopaTool) for t in tools)

    class NoData:
        request_id = "nobody"

    response, reward, metrics = asyncio.run(tools[0].execute("i", {}, agent_data=NoData()))
    assert "no session" in (response.text or "") and reward == 0.0 and metrics == {"kopa_error": "no_session"}
    # the schema verl shows the model is the one `kopa-gen eval` shows (openai_tools over tools.json)
    session = Session.open(project, ["workspace"])
    assert tools[0].name == "submit_answer"  # the generic entry; each trajectory sees its task's schema
    assert [
        t.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for t in tools[1:]
    ] == openai_tools(session.tools())
    asyncio.run(session.close())


def test_full_determinism_gives_every_trajectory_its_own_request_id(project: Project, tmp_path: Path) -> None:
    """verl 0.9.1 names every trajectory `det-<priority>` under rollout.full_determinism; the session registry
    needs one id per trajectory."""
    rig = LoopHarness(project, tmp_path, [])
    rig.cfg.actor_rollout_ref.rollout.full_determinism = True

    async def ids() -> list[str]:
        loops = [rig.loop(ScriptedGenerator(rig.tok, [])) for _ in range(3)]
        return [loop._make_request_id(0, True) for loop in loops]

    made = asyncio.run(ids())
    assert len(set(made)) == 3 and all(i.startswith("det-0") for i in made)


def test_sessions_run_off_verls_event_loop(project: Project, tmp_path: Path) -> None:
    """Each trajectory's Session lives on a sandbox thread, so a tool call never blocks verl's event loop."""
    import threading

    task, fixture = task_named(project, lambda t: len(t.gold) >= 2)
    record = oracle_record(project, task, fixture, tmp_path)
    rig = LoopHarness(project, tmp_path, fixture["platforms"])
    names = [tool["name"] for _, tool in kopa_tools.mcp_tools(project, fixture["platforms"])]
    threads: set[str] = set()
    original = Session.call

    async def spy(self: Session, *args: Any, **kwargs: Any) -> Any:
        threads.add(threading.current_thread().name)
        return await original(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Session, "call", spy)
        loop, out = rig.play(
            ScriptedGenerator(rig.tok, replay_script(record)), row_kwargs(task, fixture, names)
        )
    assert loop.sandbox_loop is not None
    assert threads and all(name.startswith("kopa-sandbox-") for name in threads)
    assert out.extra_fields[contract.STATE_HASH] == record["state_hash"]

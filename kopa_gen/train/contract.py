"""What travels between the pieces of training with verl, in one place: the exported rows, the agent loop that
plays them, the tool adapters and the reward function. verl-free, so the CPU tests and `kopa-gen train export`
import it without the `train` extra.

One RL row (parquet, verl's RLHFDataset) — every nested payload is a JSON string, never a nested struct, because
Arrow unifies struct columns across rows and fills missing keys with None (../shared/reference/verl-0.9.md §1):

    data_source     "kopa/<task set>", e.g. "kopa/bench" or "kopa/edge"
    agent_name      AGENT_NAME (our ToolAgentLoop subclass, registered through the agent-loop YAML)
    prompt          [{"role": "system", "content": system_prompt(task, "submit")}, {"role": "user", "content": ...}]
    ability         the task's domain
    reward_model    {"style": "rule", "ground_truth": ground_truth(task, fixture)}
    extra_info      {"index": int, "split": "train"|"val", "task_id": str,
                     "tool_selection": [tool names the task exposes, then submit_answer],
                     "episode": episode_spec(task, fixture)}

After the loop, AgentLoopOutput.extra_fields carries FINAL_MESSAGE, STATE_HASH, CALLS (JSON string of the
session's CallRecords), TURNS (JSON string); verl merges extra_fields into the reward function's extra_info.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from kopa_gen.evaluate.submission import SUBMIT_TOOL, SubmitChannel
from kopa_gen.language.answers import answer_adapter
from kopa_gen.language.modes import TOOLS_MODES, ToolsMode
from kopa_gen.language.settings import TOOL_RESULT_CHARS
from kopa_gen.language.task import AnswerMode, Task
from kopa_gen.runtime.session import CallRecord

AGENT_NAME = "kopa_tool_agent"

# keys the agent loop writes into AgentLoopOutput.extra_fields (the reward function reads them from extra_info)
FINAL_MESSAGE = "kopa_final_message"
STATE_HASH = "kopa_state_hash"
CALLS = "kopa_calls"
TURNS = "kopa_turns"
STOP_REASON = "kopa_stop_reason"

# the tool-result budget (kopa_gen.language.settings.TOOL_RESULT_CHARS): the session renders every result within
# it (kopa_gen/mcp/render.py, cut at a row boundary with a note), and it is verl's
# rollout.multi_turn.max_tool_response_length (configs/grpo.yaml), so verl's own cut below never fires on a
# session's result; the SFT export keeps it as a guard with the same function
TOOL_CHARS = TOOL_RESULT_CHARS
TOOL_SIDE = "right"


def cut_tool_result(text: str, limit: int = TOOL_CHARS, side: str = TOOL_SIDE) -> str:
    """A tool result as the model sees it in RL: verl 0.9.1's rule in ToolAgentLoop._call_tool, character for
    character (left / right keep `limit` characters and mark the cut; middle keeps half of each end)."""
    if len(text) <= limit:
        return text
    if side == "left":
        return "(truncated)..." + text[-limit:]
    if side == "right":
        return text[:limit] + "...(truncated)"
    half = limit // 2
    return text[:half] + "...(truncated)..." + text[-half:]


def data_source(task_set: str) -> str:
    return f"kopa/{task_set}"


def ground_truth(task: Task, fixture: dict[str, Any]) -> str:
    """The task and its gold fixture, as the reward function needs them to score exactly as `kopa-gen eval`."""
    return json.dumps(
        {"task": task.model_dump(mode="json", by_alias=True, exclude_none=True), "fixture": fixture},
        ensure_ascii=False,
        sort_keys=True,
    )


def load_ground_truth(text: str) -> tuple[Task, dict[str, Any]]:
    data = json.loads(text)
    fixture: dict[str, Any] = data["fixture"]
    return Task.model_validate(data["task"]), fixture


def episode_spec(
    task: Task,
    fixture: dict[str, Any],
    seed: int = 0,
    mode: AnswerMode = "submit",
    tools_mode: ToolsMode = "task",
    platforms: Sequence[str] | None = None,
) -> str:
    """What the agent loop needs to open the task's Session exactly as `kopa-gen eval` does (run_episode):
    platforms (`platforms`, else the fixture's), call budget, exposed tools and how they meet the model, sandbox
    seed, the rows whose state it hashes at the end, and the answer mode with the answer's type (its kind and unit
    shape the `submit_answer` tool; the loop never shows the value, and only the reward reads it)."""
    return json.dumps(
        {
            "task_id": task.id,
            "platforms": list(platforms) if platforms is not None else fixture["platforms"],
            "max_calls": task.max_calls,
            "tools": task.tools,
            "tools_mode": tools_mode,
            "seed": seed,
            "state_scope": fixture.get("state_scope") or [],
            "answer_mode": mode,
            "answer": task.answer.model_dump(mode="json") if task.answer is not None else None,
        },
        ensure_ascii=False,
        sort_keys=True,
    )


def tools_mode_of(spec: dict[str, Any]) -> ToolsMode:
    """How an episode spec's tools meet the model (exports before the exposure modes: its task's list)."""
    mode = spec.get("tools_mode", "task")
    if mode not in TOOLS_MODES:
        raise ValueError(
            f"episode spec of {spec.get('task_id')!r}: tools_mode {mode!r} is none of {TOOLS_MODES}"
        )
    return cast(ToolsMode, mode)


def answer_mode(spec: dict[str, Any]) -> AnswerMode:
    """The answer mode of an episode spec (exports before the submit channel answered in text)."""
    return "submit" if spec.get("answer_mode", "text") == "submit" else "text"


def channel_of(spec: dict[str, Any]) -> SubmitChannel | None:
    """The `submit_answer` channel of an episode spec in submit mode, None in text mode."""
    if answer_mode(spec) != "submit":
        return None
    raw = spec.get("answer")
    return SubmitChannel(answer_adapter.validate_python(raw) if raw is not None else None)


def submit_tool_for(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The typed `submit_answer` tool (OpenAI format) the model sees in this episode, or None in text mode."""
    channel = channel_of(spec)
    if channel is None:
        return None
    tool = channel.tool()
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool["inputSchema"],
        },
    }


GENERIC_SUBMIT: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SUBMIT_TOOL,
        "description": "최종 답을 제출합니다 (에피소드마다 과제의 답 형식에 맞춘 스키마로 바뀝니다).",
        "parameters": {
            "type": "object",
            "properties": {
                "answer": {"description": "답"},
                "unit": {"type": "string", "description": "단위"},
            },
            "required": ["answer"],
        },
    },
}
"""The tool config's entry for `submit_answer`: verl registers tools once for the whole dataset, so the entry is
generic; the agent loop (and the prompt-length filter) show each trajectory its task's typed schema instead."""


def calls_json(calls: list[CallRecord]) -> str:
    return json.dumps([c.as_dict() for c in calls], ensure_ascii=False)


def calls_from_json(text: str) -> list[CallRecord]:
    return [CallRecord(**c) for c in json.loads(text)]


def fields_of_record(record: dict[str, Any]) -> dict[str, Any]:
    """The extra_fields our agent loop leaves for a trajectory, made from a `kopa-gen eval` episode record (what
    the reward function then reads from extra_info)."""
    return {
        FINAL_MESSAGE: record["final_message"],
        STATE_HASH: record["state_hash"],
        CALLS: calls_json([CallRecord(**c) for c in record["calls"]]),
        TURNS: json.dumps(record["turns"]),
        STOP_REASON: record["stop_reason"],
    }

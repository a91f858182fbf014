"""Our verl agent loop: verl's `ToolAgentLoop` playing one task in its own Session, as `kopa-gen eval` plays it.
Needs the `train` extra (verl).

Lifecycle of one trajectory (AgentLoopWorker builds a fresh loop object per sample, so `self` is per trajectory):
  1. `run` reads contract.episode_spec from `extra_info["episode"]`.
  2. `_handle_pending_state` (the first hook that sees `agent_data.request_id`) opens the Session exactly as
     `run_episode` does (platforms, call budget, exposed tools and their mode, `SandboxConfig(seed=...)`, no live
     calls) and registers it under the request id, where the tool adapters (kopa_gen.train.tools) find it. The
     Session lives on a sandbox thread (kopa_gen.train.offload): its SQLite work never blocks verl's event loop.
  3. verl's state machine runs; each tool-processing turn records which session calls it made (`turns`, as
     the openai policy records them). Unknown tools and arguments that are not JSON go to the session too (verl
     would answer them itself), so the call log, the budget and the ACTION score see them as in eval.
     With `stop_on_budget` (default) the trajectory ends after the turn that used the budget up (eval's
     `budget` stop); in submit mode one turn later, so that the model can still submit (as eval allows). A turn
     that submits an answer (`submit_answer`, typed by the task: the loop swaps the tool config's generic
     schema for the task's) ends the trajectory.
  4. After the loop the final message, state hash, calls, turns and stop reason go into `extra_fields`
     (contract keys); the session is closed and unregistered in a `finally`, also when the loop raises.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from pathlib import Path
from typing import Any

import yaml
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.tools.schemas import ToolResponse

from kopa_gen.evaluate.submission import SUBMIT_TOOL
from kopa_gen.policies.openai import decode_arguments
from kopa_gen.project import Project, load_project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.train import contract
from kopa_gen.train.offload import call_on, pool, run_on
from kopa_gen.train.tools import KopaTool, register_session, unregister_session

_PROJECTS: dict[str, Project] = {}
# rollout.full_determinism gives every trajectory of a worker the request id "det-<priority>"; a per-process
# sequence number after it keeps the ids deterministic and makes them unique (the session registry's key)
_DET_SEQUENCE = itertools.count()
SANDBOX_THREADS = 4

LOOP_TARGET = f"{__name__}.KopaToolAgentLoop"


def project_at(root: str | None) -> Project:
    """The project, loaded once per process (each Ray AgentLoopWorker loads it on its first trajectory)."""
    key = root or os.environ.get("KOPA_GEN_ROOT") or ""
    if key not in _PROJECTS:
        _PROJECTS[key] = load_project(Path(root) if root else None)
    return _PROJECTS[key]


def agent_loop_entry(
    project_root: str | None = None, stop_on_budget: bool = True, sandbox_threads: int = SANDBOX_THREADS
) -> dict[str, Any]:
    """The entry for `actor_rollout_ref.rollout.agent.agent_loop_config_path` (a YAML list of these). Without
    `project_root` the workers find the project through KOPA_GEN_ROOT (launch.worker_env sets it)."""
    entry: dict[str, Any] = {"name": contract.AGENT_NAME, "_target_": LOOP_TARGET}
    if project_root is not None:
        entry["project_root"] = project_root
    if not stop_on_budget:
        entry["stop_on_budget"] = False
    if sandbox_threads != SANDBOX_THREADS:
        entry["sandbox_threads"] = sandbox_threads
    return entry


def write_agent_loop_config(
    path: Path,
    project_root: str | None = None,
    stop_on_budget: bool = True,
    sandbox_threads: int = SANDBOX_THREADS,
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = agent_loop_entry(project_root, stop_on_budget, sandbox_threads)
    path.write_text(yaml.safe_dump([entry], sort_keys=False), "utf-8")
    return path


def episode_of(extra_info: Any) -> dict[str, Any]:
    """The row's contract.episode_spec, decoded."""
    if not isinstance(extra_info, dict) or "episode" not in extra_info:
        raise KeyError(f"{contract.AGENT_NAME}: extra_info has no 'episode' (contract.episode_spec)")
    raw = extra_info["episode"]
    spec: dict[str, Any] = json.loads(raw) if isinstance(raw, str) else dict(raw)
    return spec


class KopaToolAgentLoop(ToolAgentLoop):  # type: ignore[misc]  # verl is untyped
    """`sandbox_threads` > 0: the trajectory's Session runs on one of that many background threads
    (kopa_gen.train.offload), off verl's event loop; 0: inline, on verl's loop."""

    def __init__(
        self,
        *args: Any,
        project_root: str | None = None,
        stop_on_budget: bool = True,
        sandbox_threads: int = SANDBOX_THREADS,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.project_root = project_root
        self.stop_on_budget = stop_on_budget
        self.sandbox_loop: asyncio.AbstractEventLoop | None = (
            pool(sandbox_threads).pick() if sandbox_threads > 0 else None
        )
        self.session: Session | None = None
        self.request_id: str | None = None
        self.agent_data: AgentData | None = None
        self.episode: dict[str, Any] = {}
        self.turns: list[list[int]] = []
        self.stop_reason = "answered"
        self.prompt_messages = 0
        self.unparsed_content: str | None = None  # the last generation, when verl ended before parsing it
        self.grace = True  # submit mode: one turn after the budget is used up

    def _make_request_id(self, priority: int, full_determinism: bool) -> str:
        request_id: str = super()._make_request_id(priority, full_determinism)
        return f"{request_id}-{next(_DET_SEQUENCE)}" if full_determinism else request_id

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        self.episode = episode_of(kwargs.get("extra_info"))
        try:
            output: AgentLoopOutput = await super().run(sampling_params, **kwargs)
            session = self.session
            if session is None:  # verl ended before the pending state; cannot happen in 0.9.1
                raise RuntimeError(f"{contract.AGENT_NAME}: the trajectory never opened its session")
            output.extra_fields.update(
                {
                    contract.FINAL_MESSAGE: self.final_message(),
                    contract.STATE_HASH: await call_on(
                        self.sandbox_loop, session.state_hash, self.episode.get("state_scope") or []
                    ),
                    contract.CALLS: contract.calls_json(session.calls),
                    contract.TURNS: json.dumps(self.turns),
                    contract.STOP_REASON: self.stop_reason,
                }
            )
            return output
        finally:
            await self.close_session()

    async def close_session(self) -> None:
        if self.request_id is not None:
            unregister_session(self.request_id)
        session, self.session = self.session, None
        if session is not None:
            await run_on(self.sandbox_loop, session.close())

    async def _handle_pending_state(
        self, agent_data: AgentData, sampling_params: dict[str, Any]
    ) -> AgentState:
        spec = self.episode
        project = project_at(self.project_root)
        self.session = await call_on(
            self.sandbox_loop,
            Session.open,
            project,
            spec["platforms"],
            max_calls=spec.get("max_calls"),
            tools=spec.get("tools"),
            mode=contract.tools_mode_of(spec),
            sandbox=SandboxConfig(seed=int(spec.get("seed", 0))),
            channel=contract.channel_of(spec),
            # the budget is verl's own max_tool_response_length: results arrive rendered within it, as in eval
            result_chars=int(self.max_tool_response_length),
        )
        typed = contract.submit_tool_for(spec)
        if (
            typed is not None
        ):  # the task's own submit_answer schema, in place of the tool config's generic one
            shown = getattr(agent_data, "_active_tool_schemas", None) or self.tool_schemas
            agent_data._active_tool_schemas = [
                typed if s["function"]["name"] == SUBMIT_TOOL else s for s in shown
            ]
        self.request_id = agent_data.request_id
        register_session(agent_data.request_id, self.session, self.sandbox_loop)
        self.agent_data = agent_data
        self.prompt_messages = len(agent_data.messages)
        state: AgentState = await super()._handle_pending_state(agent_data, sampling_params)
        return state

    async def _handle_generating_state(
        self, agent_data: AgentData, sampling_params: dict[str, Any], ignore_termination: bool = False
    ) -> AgentState:
        before = len(agent_data.messages)
        state: AgentState = await super()._handle_generating_state(
            agent_data, sampling_params, ignore_termination
        )
        if state != AgentState.TERMINATED:
            return state
        if len(agent_data.messages) > before:
            self.stop_reason = "answered"
            return state
        # verl stopped on length or turn limits before parsing this generation; keep its text all the same
        active = self.active_tools(agent_data)
        content, _ = await self.tool_parser.extract_tool_calls(
            agent_data.response_ids, [t.tool_schema for t in active.values()]
        )
        self.unparsed_content = content
        self.stop_reason = "length" if len(agent_data.response_mask) >= self.response_length else "max_turns"
        return state

    async def _handle_processing_tools_state(self, agent_data: AgentData) -> AgentState:
        session = self.session
        first = len(session.calls) if session is not None else 0
        try:
            state: AgentState = await super()._handle_processing_tools_state(agent_data)
        finally:
            if session is not None:
                self.turns.append(list(range(first, len(session.calls))))
        if session is not None and session.submissions:  # the answer is in: the trajectory ends here
            self.stop_reason = "answered"
            return AgentState.TERMINATED
        if state == AgentState.TERMINATED:
            self.stop_reason = "length"
        elif self.stop_on_budget and session is not None and session.exhausted:
            if session.channel is not None and self.grace:  # one more turn, to submit what it has (as eval)
                self.grace = False
                return state
            self.stop_reason = "budget"
            state = AgentState.TERMINATED
        return state

    async def _call_tool(
        self, tool_call: FunctionCall, tools_kwargs: dict[str, Any], agent_data: AgentData
    ) -> tuple[ToolResponse, float, dict[str, Any]]:
        """Unknown tools and non-JSON arguments are answered by the session (logged, counted against the budget,
        the same tool error text as in eval); everything else takes verl's path into the adapter."""
        active = self.active_tools(agent_data)
        tool = active.get(tool_call.name)
        session = self.session
        if session is None or (tool is not None and not isinstance(tool, KopaTool)):
            result: tuple[ToolResponse, float, dict[str, Any]] = await super()._call_tool(
                tool_call, tools_kwargs, agent_data
            )
            return result
        try:
            json.loads(tool_call.arguments)
            valid = True
        except (ValueError, TypeError):
            valid = False
        if tool is not None and valid:
            result = await super()._call_tool(tool_call, tools_kwargs, agent_data)
            return result
        outcome = await run_on(
            self.sandbox_loop, session.call(tool_call.name, decode_arguments(tool_call.arguments))
        )
        return ToolResponse(text=self.truncate(outcome.text)), 0.0, {"kopa_error": outcome.error_code}

    def active_tools(self, agent_data: AgentData) -> dict[str, Any]:
        """The trajectory's tools after `tool_selection`, as verl reads them."""
        selected = getattr(agent_data, "_active_tools", None)
        tools: dict[str, Any] = self.tools if selected is None else selected
        return tools

    def truncate(self, text: str) -> str:
        """verl's max_tool_response_length rule (tool_agent_loop._call_tool), for the calls answered here."""
        return contract.cut_tool_result(
            text, int(self.max_tool_response_length), str(self.tool_response_truncate_side)
        )

    def clean(self, text: Any) -> str:
        """Assistant text as an OpenAI-compatible server would return it: special tokens removed, trimmed."""
        if isinstance(text, list):  # content parts
            text = "".join(
                str(p.get("text", "")) for p in text if isinstance(p, dict) and p.get("type") == "text"
            )
        out = str(text or "")
        for token in getattr(self.tokenizer, "all_special_tokens", []):
            if token:
                out = out.replace(token, "")
        return out.strip()

    def final_message(self) -> str:
        """As the openai policy decides it: the answering message's text when the model answered, else the last
        non-empty assistant text of the trajectory."""
        data = self.agent_data
        generated = data.messages[self.prompt_messages :] if data is not None else []
        contents = [self.clean(m.get("content")) for m in generated if m.get("role") == "assistant"]
        if self.unparsed_content is not None:
            contents.append(self.clean(self.unparsed_content))
        if self.stop_reason == "answered":
            return contents[-1] if contents else ""
        return next((c for c in reversed(contents) if c), "")

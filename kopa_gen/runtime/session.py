"""A Session is one isolated episode (a task rollout or a synthesis probe): its own sandbox (counters, faults,
workspace state), its own platform clients, the exposed tools, a call log and a call budget. Nothing is shared
between sessions except the read-only world."""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

from kopa_gen.client.client import PlatformClient, RetryPolicy
from kopa_gen.compose import platform_client
from kopa_gen.language.diagnostics import InfrastructureError
from kopa_gen.language.kopa import Category
from kopa_gen.language.modes import ToolsMode
from kopa_gen.mcp.boundary import check_arguments, echo_name
from kopa_gen.mcp.generated import generated_module
from kopa_gen.mcp.render import Rendering
from kopa_gen.mcp.search import (
    CALL_TOOL,
    SEARCH_TOOL,
    ToolIndex,
    call_tool,
    route,
    search_tool,
)
from kopa_gen.mcp.toolbox import ToolBox, ToolOutcome, Unparsed, not_json
from kopa_gen.project import Project
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.episode import digest
from kopa_gen.sandbox.local import open_sandbox


@functools.cache
def frozen_tools(path: Path) -> tuple[dict[str, Any], ...]:
    """A platform's tools.json, read once per process (it changes only with `kopa-gen build`)."""
    tools: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["tools"]
    return tuple(tools)


@dataclass(frozen=True)
class CallRecord:
    """One tool call as the policy made it and as the session answered it."""

    index: int
    tool: str
    arguments: Any
    is_error: bool
    text: str
    structured: dict[str, Any] | None
    error_code: str | None
    elapsed_ms: float

    def as_dict(self) -> dict[str, Any]:
        """The record's fields, sharing its values (`dataclasses.asdict` deep-copies every result row: a third
        of an oracle episode's time); for writing out, not for changing."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class AnswerChannel(Protocol):
    """The episode's committed-answer tool (kopa_gen/evaluate/submission.py: `submit_answer`), offered beside the
    platform tools. Given by whoever opens the session, so the runtime knows no answer types."""

    @property
    def name(self) -> str: ...

    def tool(self) -> dict[str, Any]:
        """The tool in MCP wire format."""
        ...

    def read(self, arguments: Any) -> Any:
        """The submitted value; ValueError (its message is the tool error) when the arguments do not fit."""
        ...

    def arguments_for(self, value: Any) -> dict[str, Any]:
        """The arguments that submit `value` (what a scripted policy sends)."""
        ...


SUBMITTED = "submitted"
"""The `structured` key of a submission's call record: the arguments as the channel read them."""


def _listing(project: Project, pid: str) -> Path:
    return project.root / "generated" / "servers" / pid / "tools.json"


@functools.lru_cache(maxsize=8)
def _index(listings: tuple[Path, ...]) -> ToolIndex:
    """The search index over the frozen tools of a set of platforms, built once per process (episodes over the
    same platforms share it)."""
    return ToolIndex.of([t for path in listings for t in frozen_tools(path)])


def exposure(
    project: Project, platforms: Sequence[str], tools: Sequence[str] | None, mode: ToolsMode
) -> tuple[frozenset[str] | None, ToolIndex | None]:
    """Which tools of `platforms` a model sees by name (None: all of them), and search mode's index over every
    tool of `platforms` (None in the other modes): `task` the given `tools` (all when None), `all` all, `search`
    the platforms' entry tools."""
    if mode == "search":
        # ranking does not depend on the platforms' order: one index per set (episodes open theirs task first)
        index = _index(tuple(sorted(_listing(project, pid) for pid in platforms)))
        return frozenset(tool for pid in platforms for tool in project.platform(pid).kopa.entry), index
    return (frozenset(tools) if tools is not None and mode == "task" else None), None


def title_query(index: ToolIndex, tool: str) -> dict[str, Any]:
    """The `search_tools` arguments the reference policies find `tool` with: its Korean title (what the tool says
    it does), else its name. The build holds every task validated in search mode to it finding each gold tool
    (kopa_gen/gold/run.py `search_problems`)."""
    listing = next((t for t in index.tools if t["name"] == tool), None)
    title = str((listing or {}).get("title") or "").strip()
    return {"query": title or tool}


def listed_tools(
    project: Project, platforms: Sequence[str], exposed: frozenset[str] | None, index: ToolIndex | None
) -> list[dict[str, Any]]:
    """The tools listed to the model (`exposure`), exactly as frozen in tools.json (MCP wire format), in
    platform order; in search mode `search_tools` and `call_tool` after them."""
    out: list[dict[str, Any]] = []
    for pid in platforms:
        out.extend(t for t in frozen_tools(_listing(project, pid)) if exposed is None or t["name"] in exposed)
    if index is not None:
        out += [search_tool(len(index.tools)), call_tool()]
    return out


@dataclass
class Session:
    """Use as `async with Session.open(project, ["dart", "workspace"], max_calls=12) as s: await s.call(...)`."""

    project: Project
    platforms: tuple[str, ...]
    sandbox: Sandbox
    toolboxes: dict[str, ToolBox]
    clients: list[PlatformClient]
    max_calls: int | None = None
    exposed: frozenset[str] | None = None
    channel: AnswerChannel | None = None
    calls: list[CallRecord] = field(default_factory=list)
    started: int = (
        0  # calls admitted so far, counted before they run so parallel calls cannot overrun the budget
    )
    submissions: list[Any] = field(default_factory=list)  # what the channel read from each valid submission
    # how results reach the model: compact, cut at the tool-result budget (kopa_gen/mcp/render.py)
    rendering: Rendering = field(default_factory=Rendering)
    stop_on_infrastructure: bool = False
    mode: ToolsMode = "task"  # how the tools meet the model (kopa_gen/mcp/search.py)
    index: ToolIndex | None = None  # search mode: every tool of the platforms opened, for search_tools
    surfaced: set[str] = field(default_factory=set)  # search mode: the tools some search has answered so far
    """Raise InfrastructureError after logging a call the environment failed (a sandbox error, a platform's 5xx or
    time-out past every retry): an eval ends such an episode at once and runs it again later. Off where failures
    are the point (EDGE's probes inject faults) and for a single call (it answers with the tool error)."""

    @classmethod
    def open(
        cls,
        project: Project,
        platforms: Sequence[str],
        *,
        max_calls: int | None = None,
        tools: Sequence[str] | None = None,
        mode: ToolsMode = "task",
        live: bool = False,
        sandbox: SandboxConfig | None = None,
        world_seed: int | None = None,
        retry: RetryPolicy | None = None,
        channel: AnswerChannel | None = None,
        result_chars: int | None = None,
        stop_on_infrastructure: bool = False,
    ) -> Session:
        """A fresh episode over `platforms` (live mode reaches the real services, except local platforms such as
        the workspace, which always live in the session's sandbox). `retry` overrides the clients' retry policy
        in the sandbox (EDGE probes turn retries off so that injected faults reach the posterior). `channel` adds
        the answer tool (submit mode); without it the episode ends with a text reply. `result_chars` is the
        tool-result budget (None: results are never cut). `mode` says which tools the model sees: `task` the given
        `tools` (every tool of `platforms` when None), `all` every tool of `platforms`, `search` their entry
        tools beside `search_tools` and `call_tool`, which reach every tool of `platforms`."""
        box = open_sandbox(project, sandbox, world_seed)
        toolboxes: dict[str, ToolBox] = {}
        clients: list[PlatformClient] = []
        for pid in platforms:
            client = platform_client(project, pid, live, box, retry)
            clients.append(client)
            toolboxes[pid] = generated_module(pid, root=project.root).create_toolbox(client)
        exposed, index = exposure(project, platforms, tools, mode)
        session = cls(project, tuple(platforms), box, toolboxes, clients, max_calls, exposed, channel)
        session.mode, session.index = mode, index
        session.rendering = Rendering(result_chars)
        session.stop_on_infrastructure = stop_on_infrastructure
        return session

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()

    def tools(self) -> list[dict[str, Any]]:
        """The exposed tools exactly as frozen in tools.json (MCP wire format); in search mode the entry tools,
        then `search_tools` and `call_tool`; then the answer tool."""
        out = listed_tools(self.project, self.platforms, self.exposed, self.index)
        if self.channel is not None:
            out.append(self.channel.tool())
        return out

    @property
    def exhausted(self) -> bool:
        return self.max_calls is not None and self.started >= self.max_calls

    def _toolbox(self, tool: str, hidden: bool = False) -> ToolBox | None:
        if not hidden and self.exposed is not None and tool not in self.exposed:
            return None
        return next((b for b in self.toolboxes.values() if tool in b.bindings), None)

    def wire(self, tool: str, arguments: Any) -> tuple[str, Any]:
        """The call a model makes to reach platform `tool`: the tool by name where it is listed, else (search
        mode) `call_tool` naming it."""
        if self.index is not None and self.exposed is not None and tool not in self.exposed:
            return CALL_TOOL, {"name": tool, "arguments": arguments}
        return tool, arguments

    async def reach(self, tool: str, arguments: Any) -> ToolOutcome:
        """Call a platform tool the way this session's model would (`wire`). What scripted policies use, so they
        run in every mode."""
        return await self.call(*self.wire(tool, arguments))

    def unfound(self, tools: Iterable[str]) -> list[str]:
        """Of `tools`, those a model here would have to search for before calling them: search mode's tools that
        are not listed and that no search has answered yet; each once, in order."""
        if self.index is None:
            return []
        listed = self.exposed or frozenset()
        return list(dict.fromkeys(t for t in tools if t not in listed and t not in self.surfaced))

    def search_for(self, tool: str) -> dict[str, Any]:
        """The `search_tools` arguments a scripted policy finds `tool` with (`title_query`)."""
        assert self.index is not None
        return title_query(self.index, tool)

    async def call(self, tool: str, arguments: Any) -> ToolOutcome:
        """Run one tool call. Every outcome, including an unknown tool or a used-up budget, is a ToolOutcome that
        goes back to the model; the call is logged either way. In search mode a `search_tools` call is logged and
        not counted in the budget; a `call_tool` call is logged as the tool it calls."""
        start = time.perf_counter()
        if self.channel is not None and tool == self.channel.name:
            return self._submit(arguments, start)
        hidden = False
        if self.index is not None and tool == SEARCH_TOOL:
            return self._search(arguments, start)
        if self.index is not None and tool == CALL_TOOL and not isinstance(arguments, Unparsed):
            routed = route(self.index, tool, arguments)
            if routed.answer is not None:
                return self._refused(tool, arguments, routed.answer, start)
            tool, arguments, hidden = routed.tool, routed.arguments, True
        box = self._toolbox(tool, hidden)
        over = self.exhausted
        if not over:
            self.started += 1
        # the log keeps the order calls were made, not the order they finished: parallel calls of one turn are
        # logged as the model listed them, so the same episode gives the same log
        index = len(self.calls)
        self.calls.append(CallRecord(index, tool, arguments, True, "(running)", None, "running", 0.0))
        if over:
            outcome = ToolOutcome(
                True,
                f"call budget of {self.max_calls} calls is used up; answer with what you have",
                None,
                "budget",
            )
        elif self.submissions:
            outcome = ToolOutcome(
                True, "the answer was submitted: the episode is over, no more calls run", None, "submitted"
            )
        elif isinstance(
            arguments, Unparsed
        ):  # said first: the name may be a casualty of the same broken text
            outcome = not_json(tool or "the tool call", arguments)
        elif box is None and self.index is not None:
            outcome = ToolOutcome(
                True,
                f"unknown tool {echo_name(tool)}; find tools with {SEARCH_TOOL} and call one with {CALL_TOOL} "
                '{"name": ..., "arguments": {...}}',
                None,
                "unknown_tool",
            )
        elif box is None:
            names = ", ".join(sorted(t["name"] for t in self.tools()))
            outcome = ToolOutcome(
                True, f"unknown tool {echo_name(tool)}; available tools: {names}", None, "unknown_tool"
            )
        else:
            try:
                outcome = await box.call(tool, arguments, self.rendering)
            except BaseException as exc:  # a bug or a cancellation: the log still says how the call ended
                code = "cancelled" if isinstance(exc, asyncio.CancelledError) else "crashed"
                text = f"{type(exc).__name__}: {exc}"
                elapsed = (time.perf_counter() - start) * 1000
                self.calls[index] = CallRecord(index, tool, arguments, True, text, None, code, elapsed)
                raise
        self.calls[index] = CallRecord(
            index=index,
            tool=tool,
            arguments=arguments,
            is_error=outcome.is_error,
            text=outcome.text,
            structured=outcome.structured,
            error_code=outcome.error_code,
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )
        if self.stop_on_infrastructure and outcome.category == Category.SERVER.value:
            raise InfrastructureError(f"call {index + 1} ({tool}): {outcome.text}")
        return outcome

    def _search(self, arguments: Any, start: float) -> ToolOutcome:
        """A `search_tools` call: logged, not counted in the budget (finding a tool is not a call of the chain),
        and refused, like any call, once the episode's answer is in."""
        assert self.index is not None
        if isinstance(arguments, Unparsed):
            return self._refused(SEARCH_TOOL, arguments, not_json(SEARCH_TOOL, arguments), start)
        if self.submissions:
            text = "the answer was submitted: the episode is over, no more calls run"
            return self._log(SEARCH_TOOL, arguments, ToolOutcome(True, text, None, "submitted"), start)
        answer = route(self.index, SEARCH_TOOL, arguments).answer
        assert answer is not None
        if answer.is_error:
            return self._refused(SEARCH_TOOL, arguments, answer, start)
        self.surfaced.update(str(t["name"]) for t in (answer.structured or {}).get("tools", []))
        return self._log(SEARCH_TOOL, arguments, answer, start)

    def _refused(self, tool: str, arguments: Any, refusal: ToolOutcome, start: float) -> ToolOutcome:
        """A malformed search-mode call: a tool error naming the fix, logged and counted like any failed call."""
        self.started += 1
        return self._log(tool, arguments, refusal, start)

    def _log(self, tool: str, arguments: Any, outcome: ToolOutcome, start: float) -> ToolOutcome:
        index = len(self.calls)
        elapsed = (time.perf_counter() - start) * 1000
        self.calls.append(
            CallRecord(
                index,
                tool,
                arguments,
                outcome.is_error,
                outcome.text,
                outcome.structured,
                outcome.error_code,
                elapsed,
            )
        )
        return outcome

    def _submit(self, arguments: Any, start: float) -> ToolOutcome:
        """A call of the answer tool. A valid one is a submission: logged, never refused by the call budget (the
        model must always be able to answer) and not counted in it. A malformed one is a tool error naming the
        expected shape and costs a call, like any failed call."""
        assert self.channel is not None
        index = len(self.calls)
        try:
            if isinstance(arguments, Unparsed):
                raise ValueError(not_json(self.channel.name, arguments).text)
            refused = check_arguments(arguments)
            if refused is not None:
                raise ValueError(f"invalid arguments for {self.channel.name}: {refused}")
            value = self.channel.read(arguments)
        except ValueError as exc:
            self.started += 1
            outcome = ToolOutcome(True, str(exc), None, "bad_submission", "bad_param")
        else:
            self.submissions.append(value)
            text = (
                "답이 제출되었습니다. 에피소드를 마칩니다."
                if len(self.submissions) == 1
                else "이미 답을 제출했습니다: 두 번째 제출로 이 에피소드는 실패로 채점됩니다."
            )
            outcome = ToolOutcome(False, text, {SUBMITTED: arguments})
        self.calls.append(
            CallRecord(
                index,
                self.channel.name,
                arguments,
                outcome.is_error,
                outcome.text,
                outcome.structured,
                outcome.error_code,
                (time.perf_counter() - start) * 1000,
            )
        )
        return outcome

    def state_hash(self, scope: Sequence[Mapping[str, Any]] | None = None) -> str:
        """SHA-256 over the canonical JSON of the episode's mutable state: the rows in `scope` (a fixture's
        `state_scope`: what the task's gold writes, text normalized), or everything when no scope is given."""
        return self.sandbox.episode.state_hash(scope)

    def state(self, scope: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], str]:
        """The scoped rows themselves (what ENVIRONMENT compared, for episode records) and their hash, read once."""
        rows = self.sandbox.episode.scoped(scope)
        return rows, digest(rows)

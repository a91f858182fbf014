"""The real-model policy: any OpenAI-compatible chat-completions endpoint with tools (vLLM, SGLang, hosted APIs),
spoken as plain HTTP with httpx.

One episode is a loop of model turns. Each turn sends the whole transcript and the session's tools; the tool calls
of a turn run concurrently through `Session.call`, whose outcome (tool errors included) goes back to the model as
a `tool` message. Nothing the model does ends the episode early except answering: malformed arguments, unknown
tools and a used-up budget are tool errors the session answers. What ends it otherwise is ours to decide: the
call budget, `max_turns`, the episode time-out, or the endpoint failing for good: stop reason `infrastructure`
when it never answered (connection, time-outs, 5xx, 429 after every retry; `kopa-gen eval` runs the episode
again on resume), `error` when it answered with something that is not a completion or a client error.

What every request carries and how the loop runs are settings (kopa_gen.language.settings: `EndpointSettings`
with its `GenerationSettings`, and `AgentSettings`); the tokens of each turn are kept when the server returns
`usage`. In `tool_mode: prompt` the tools are described in the system prompt and calls are read from the reply's
text (kopa_gen.policies.prompted), for servers without a tool-call parser.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kopa_gen.client import redaction
from kopa_gen.client.errors import redact
from kopa_gen.language.records import TurnUsage
from kopa_gen.language.settings import AgentSettings, EndpointSettings
from kopa_gen.mcp.boundary import encodable, escaped_surrogates
from kopa_gen.mcp.toolbox import parse_arguments
from kopa_gen.plugins import Registry
from kopa_gen.policies.base import Episode, TaskContext, register, system_prompt
from kopa_gen.runtime.session import Session

log = logging.getLogger(__name__)


def openai_tools(mcp_tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP tool descriptions (name, description, inputSchema) in the OpenAI function-calling format."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool["inputSchema"],
            },
        }
        for tool in mcp_tools
    ]


class _Function(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = ""
    # A string by the spec; some servers send an object, or nothing for a tool without parameters.
    arguments: str | dict[str, Any] | None = None


class _ToolCall(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str | None = None
    function: _Function


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    # null when the model only calls tools; a list of content parts on some servers.
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(extra="ignore")

    message: _Message
    # Informational only: whether the turn calls tools is decided by `tool_calls`, since servers disagree on
    # finish_reason ("tool_calls", "stop", "eos", "length" ...).
    finish_reason: str | None = None


class _Usage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)


class _Completion(BaseModel):
    model_config = ConfigDict(extra="ignore")

    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None

    @field_validator("usage", mode="before")
    @classmethod
    def _partial_usage(cls, value: Any) -> Any:
        """A `usage` that is not two counts (some servers send nulls or nothing) counts as none."""
        ok = isinstance(value, dict) and all(
            isinstance(value.get(k), int) for k in ("prompt_tokens", "completion_tokens")
        )
        return value if ok else None


@dataclass(frozen=True)
class Call:
    """One tool call of a model turn: its id (made up when the server sent none), the tool name, the arguments
    as the model wrote them, and the value the session is called with."""

    id: str
    tool: str
    raw: str | dict[str, Any] | None
    arguments: Any

    def wire(self) -> dict[str, Any]:
        """The call as it goes back into the transcript. Arguments stay a JSON string; malformed JSON is kept as a
        JSON string literal, because servers such as vLLM json-decode every history argument and would reject
        the whole next request."""
        if isinstance(self.raw, dict):
            text = json.dumps(self.raw, ensure_ascii=False)
        elif self.raw is None or not self.raw.strip():
            text = "{}"
        else:
            try:
                json.loads(self.raw)
                text = self.raw
            except (ValueError, RecursionError):
                text = json.dumps(self.raw, ensure_ascii=False)
        arguments = escaped_surrogates(text)
        return {"id": self.id, "type": "function", "function": {"name": self.tool, "arguments": arguments}}


def decode_arguments(raw: str | dict[str, Any] | None) -> Any:
    """What the session is called with: the decoded JSON value, `{}` for no arguments, or `Unparsed` (the raw
    text and the parser's position) when it is not JSON; the session answers that with a tool error saying so."""
    if raw is None or isinstance(raw, dict):
        return raw or {}
    if not raw.strip():
        return {}
    return parse_arguments(raw)


@dataclass(frozen=True)
class Turn:
    """One assistant message: its text and its tool calls, in the order the model gave them."""

    content: str
    calls: list[Call]
    finish_reason: str | None
    usage: TurnUsage | None = None

    def message(self) -> dict[str, Any]:
        if not self.calls:
            return {"role": "assistant", "content": self.content}
        # content may be null next to tool calls; an empty tool_calls list is left out, as servers prefer.
        return {
            "role": "assistant",
            "content": self.content or None,
            "tool_calls": [c.wire() for c in self.calls],
        }


def parse_turn(body: Any, turn: int) -> Turn:
    """The first choice of a chat-completion body. Raises `EndpointError` when the body is not a completion."""
    try:
        completion = _Completion.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise EndpointError(f"malformed chat completion: {where}: {first['msg']}") from exc
    choice = completion.choices[0]
    content = choice.message.content
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) for part in content if part.get("type") == "text")
    # A JSON body may carry unpaired surrogates (`"\ud800"`); what the model said goes back to it, into the
    # scorer and into the run folder, so it must encode: U+FFFD in its words, an escape in its arguments' JSON.
    content = encodable(content) if content else content
    calls: list[Call] = []
    seen: set[str] = set()
    for i, tc in enumerate(choice.message.tool_calls or []):
        call_id = encodable(tc.id) if tc.id and tc.id not in seen else f"call_{turn}_{i}"
        seen.add(call_id)
        raw = tc.function.arguments
        calls.append(Call(call_id, encodable(tc.function.name), raw, decode_arguments(raw)))
    usage = completion.usage
    counted = TurnUsage(**usage.model_dump()) if usage is not None else None
    return Turn(content or "", calls, choice.finish_reason, counted)


class EndpointError(Exception):
    """The endpoint failed for good (a non-retryable status, retries used up, or a body that is not a chat
    completion). Ends the episode with stop reason `error` (`EndpointDown`: `infrastructure`); the message is
    already redacted."""


class EndpointDown(EndpointError):
    """Every attempt failed for a reason of the endpoint's own (no connection, no response in time, 5xx, 429):
    the model was never heard, so the episode ends with stop reason `infrastructure` and `kopa-gen eval` runs
    it again on resume instead of counting it as the model's failure."""


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def bearer(api_key_env: str) -> tuple[str | None, dict[str, str]]:
    """The key in the environment variable `api_key_env` (None when unset) and the headers it makes: a Bearer
    token, or none at all (a local vLLM without `--api-key`)."""
    key = os.environ.get(api_key_env) or None
    redaction.register(key)  # from now on no output of this process carries it
    return key, ({"Authorization": f"Bearer {key}"} if key else {})


async def post_chat(
    client: httpx.AsyncClient,
    base_url: str,
    body: dict[str, Any],
    *,
    key: str | None,
    retries: int,
    backoff_s: float,
    call_timeout_s: float,
) -> Any:
    """POST one chat completion and return its JSON body. Time-outs, transport errors, 429 and 5xx are retried
    `retries` times with doubling back-off; what still fails raises `EndpointError`, redacted of `key`. Shared
    by the policy, EDGE's LLM scorer and writer, and the LLM judge."""
    url = f"{base_url}/chat/completions"
    failure = ""
    for attempt in range(retries + 1):
        if attempt:
            delay = backoff_s * 2 ** (attempt - 1)
            log.warning("chat completion failed (%s); retry %d in %.2fs", failure, attempt, delay)
            await asyncio.sleep(delay)
        try:
            async with asyncio.timeout(call_timeout_s):
                response = await client.post(url, json=body)
        except (TimeoutError, httpx.TimeoutException):
            failure = f"no response within {call_timeout_s:g}s"
            continue
        except httpx.TransportError as exc:
            failure = redact(f"{type(exc).__name__}: {exc}", [key or ""])
            continue
        if response.status_code == 200:
            try:
                return response.json()
            except ValueError as exc:
                raise EndpointError("chat completion is not JSON") from exc
        failure = (
            f"HTTP {response.status_code}: {redact(response.text, [key or ''])[:500]}"  # redacted, then cut
        )
        if not _retryable(response.status_code):
            raise EndpointError(f"chat completions at {base_url} failed: {failure}")
    raise EndpointDown(f"chat completions at {base_url} failed after {retries + 1} attempts: {failure}")


@register("openai")
class OpenAIPolicy:
    """A model behind an OpenAI-compatible `/chat/completions` endpoint.

    `endpoint.api_key_env` names the environment variable holding the key, read once per episode and sent as a
    Bearer token; when it is unset no Authorization header is sent (a local vLLM without `--api-key`). Each
    request may take `endpoint.timeout_s`; time-outs, transport errors, 429 and 5xx are retried
    `endpoint.retries` times with exponential backoff (`endpoint.backoff_s`, doubled each time); other statuses end the
    episode at once. The whole episode, backoff included, is bounded by `agent.episode_timeout_s`. Every request
    carries `endpoint.generation` (temperature, top-p, max tokens, seed, stop, extra body).
    """

    name: str = "openai"

    def __init__(self, *, endpoint: EndpointSettings, agent: AgentSettings | None = None) -> None:
        self.endpoint = endpoint
        self.agent = agent or AgentSettings()
        self.protocol: ToolProtocol = TOOL_PROTOCOLS.get(self.agent.tool_mode)()

    @property
    def base_url(self) -> str:
        return self.endpoint.base_url

    @property
    def model(self) -> str:
        return self.endpoint.model

    def system(self, ctx: TaskContext, session: Session) -> str:
        """The system prompt: every policy's, and in prompt mode the tools and how to call them."""
        tools = self.protocol.system_suffix(session.tools(), self.agent.parallel_tool_calls)
        return system_prompt(ctx.task, ctx.mode) + tools

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        episode = Episode(
            final_message="",
            messages=[
                {"role": "system", "content": self.system(ctx, session)},
                {"role": "user", "content": ctx.task.query},
            ],
        )
        key, headers = bearer(self.endpoint.api_key_env)
        try:
            async with (
                asyncio.timeout(self.agent.episode_timeout_s),
                httpx.AsyncClient(headers=headers, timeout=self.endpoint.timeout_s) as client,
            ):
                # Each (seed, rollout) samples differently and reproducibly where the server honours `seed`.
                seed = ctx.seed * 1000 + ctx.rollout
                await self._loop(_Endpoint(self, client, key, seed), session, episode)
        except TimeoutError:
            episode.stop_reason = "timeout"
            episode.error = f"episode time-out of {self.agent.episode_timeout_s:g}s reached"
        except EndpointDown as exc:
            episode.stop_reason = "infrastructure"
            episode.error = str(exc)
        except EndpointError as exc:
            episode.stop_reason = "error"
            episode.error = str(exc)
        if episode.stop_reason != "answered":
            episode.final_message = _last_content(episode.messages)
        return episode

    async def _loop(self, endpoint: _Endpoint, session: Session, episode: Episode) -> None:
        """Turns until the model answers: a turn without tool calls (its text is the final message), or, with an
        answer tool, a turn that submitted. When the call budget is used up the model gets one more turn, in which
        only the answer tool works, so that it can still submit what it has."""
        tools = openai_tools(session.tools())
        grace = session.channel is not None and self.agent.budget_grace
        for turn_no in range(self.agent.max_turns):
            turn = self.protocol.turn(await endpoint.complete(episode.messages, tools), turn_no)
            episode.usage.append(turn.usage)
            episode.messages.append(self.protocol.message(turn))
            if not turn.calls:
                episode.stop_reason = "answered"
                episode.final_message = turn.content
                return
            await _execute(session, turn.calls, episode, self.protocol)
            if session.submissions:
                episode.stop_reason = "answered"
                episode.final_message = turn.content
                return
            if session.exhausted:
                if grace:
                    grace = False
                    continue
                episode.stop_reason = "budget"
                return
        episode.stop_reason = "max_turns"


@register("closed-book")
class ClosedBookPolicy(OpenAIPolicy):
    """The same endpoint asked once, with no tools: what a model answers from memory. A task it solves does not
    need the APIs (its answer is a memorisable fact), which a sound benchmark avoids; run it on every model you
    evaluate to see how much of a score memory alone explains."""

    name: str = "closed-book"

    def system(self, ctx: TaskContext, session: Session) -> str:
        lines = [
            "당신은 한국 공공데이터에 관한 질문에 답하는 어시스턴트입니다. 도구는 없습니다: 알고 있는 지식만으로 답하세요.",
            f"오늘 날짜: {ctx.task.system.today.isoformat()}",
            "마지막 답변에는 '정답: ...' 형식으로 최종 답을 적으세요.",
        ]
        return "\n".join(lines)

    async def _loop(self, endpoint: _Endpoint, session: Session, episode: Episode) -> None:
        turn = parse_turn(await endpoint.complete(episode.messages, []), 0)
        episode.usage.append(turn.usage)
        episode.messages.append(turn.message())
        episode.stop_reason = "answered"
        episode.final_message = turn.content


async def _execute(session: Session, calls: list[Call], episode: Episode, protocol: ToolProtocol) -> None:
    """Run one turn's calls concurrently; tool messages follow in the order the model gave the calls. The turn's
    session-call indices are recorded even when the episode time-out cuts the turn short.

    Only the calls that fit the remaining budget run concurrently: the session checks its budget before a call
    and logs it after, so calls in flight together would all pass the check. The rest go one by one afterwards,
    and the session answers each with its budget tool error."""
    first = len(session.calls)
    room = len(calls) if session.max_calls is None else max(0, session.max_calls - session.started)
    try:
        outcomes = list(await asyncio.gather(*(session.call(c.tool, c.arguments) for c in calls[:room])))
        for c in calls[room:]:
            outcomes.append(await session.call(c.tool, c.arguments))
    finally:
        episode.turns.append(list(range(first, len(session.calls))))
    episode.messages += protocol.results(calls, [o.text for o in outcomes])


def _last_content(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message["role"] == "assistant" and message.get("content"):
            return str(message["content"])
    return ""


@dataclass
class _Endpoint:
    """One episode's connection to the chat-completions endpoint: request building, retries, redaction."""

    policy: OpenAIPolicy
    client: httpx.AsyncClient
    key: str | None
    seed: int = 0

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        p = self.policy
        body: dict[str, Any] = {"model": p.endpoint.model, "messages": messages}
        if tools:
            body |= p.protocol.request_fields(tools, p.agent.parallel_tool_calls)
        body |= p.endpoint.generation.body(self.seed)
        return await post_chat(
            self.client,
            p.endpoint.base_url,
            body,
            key=self.key,
            retries=p.endpoint.retries,
            backoff_s=p.endpoint.backoff_s,
            call_timeout_s=p.endpoint.timeout_s,
        )


class ToolProtocol(Protocol):
    """How tools reach the model and calls come back: `native` (the request's `tools`, the reply's `tool_calls`)
    or `prompt` (kopa_gen.policies.prompted)."""

    def system_suffix(self, tools: list[dict[str, Any]], parallel: bool) -> str:
        """What the system prompt gains (prompt mode: the tools and how to call them)."""
        ...

    def request_fields(self, tools: list[dict[str, Any]], parallel: bool) -> dict[str, Any]:
        """What a request carries for the tools."""
        ...

    def turn(self, body: Any, turn: int) -> Turn:
        """The model's turn read from a completion body."""
        ...

    def message(self, turn: Turn) -> dict[str, Any]:
        """The turn as it goes back into the transcript."""
        ...

    def results(self, calls: list[Call], texts: list[str]) -> list[dict[str, Any]]:
        """The messages that bring a turn's tool results back."""
        ...


TOOL_PROTOCOLS: Registry[Callable[[], ToolProtocol]] = Registry(
    "tool mode",
    "kopa_gen.policies",
    "register a ToolProtocol class in kopa_gen/policies/ with @TOOL_PROTOCOLS",
)
"""The tool protocols by `AgentSettings.tool_mode`: `native` here, `prompt` in kopa_gen/policies/prompted.py."""


@TOOL_PROTOCOLS.register("native")
class NativeTools:
    """Tools in the request's `tools` field, calls in the reply's `tool_calls` (a server with a tool parser)."""

    name = "native"

    def system_suffix(self, tools: list[dict[str, Any]], parallel: bool) -> str:
        return ""

    def request_fields(self, tools: list[dict[str, Any]], parallel: bool) -> dict[str, Any]:
        return {"tools": tools, "tool_choice": "auto", "parallel_tool_calls": parallel}

    def turn(self, body: Any, turn: int) -> Turn:
        return parse_turn(body, turn)

    def message(self, turn: Turn) -> dict[str, Any]:
        return turn.message()

    def results(self, calls: list[Call], texts: list[str]) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": call.id, "content": text}
            for call, text in zip(calls, texts, strict=True)
        ]

"""The OpenAI-compatible policy over real loopback HTTP against the chat-completions protocol double (not a model),
acting in a real sandbox Session on task fin-001."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from kopa_gen.language.settings import AgentSettings, EndpointSettings, GenerationSettings
from kopa_gen.policies.base import Episode, TaskContext, policy, system_prompt
from kopa_gen.policies.double import ChatDouble, Fail, Raw, Reply, Step, ToolCall
from kopa_gen.policies.openai import OpenAIPolicy
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.world.build import BuiltWorld

KEY_ENV = "KOPA_TEST_CHAT_KEY"
SAMSUNG = {"corp_name": "삼성전자"}
ACCOUNTS = {"corp_code": "00126380", "bsns_year": "2025", "reprt_code": "11011"}
ANSWER = "정답: 310,597,400,937,000원"


@pytest.fixture
def ctx(project: Project, world: BuiltWorld) -> TaskContext:
    task = next(t for _, t in project.tasks if t.id == "fin-001")
    return TaskContext(task, {})


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def model_at(
    base_url: str,
    *,
    api_key_env: str = KEY_ENV,
    retries: int = 3,
    call_timeout_s: float = 60.0,
    episode_timeout_s: float = 600.0,
    max_turns: int = 30,
    backoff_s: float = 0.01,
    **generation: Any,
) -> OpenAIPolicy:
    """The policy on `base_url` with these settings (the rest are the settings classes' defaults)."""
    endpoint = EndpointSettings(
        base_url=base_url,
        model="double-model",
        api_key_env=api_key_env,
        retries=retries,
        backoff_s=backoff_s,
        timeout_s=call_timeout_s,
        generation=GenerationSettings(**generation),
    )
    agent = AgentSettings(episode_timeout_s=episode_timeout_s, max_turns=max_turns)
    return OpenAIPolicy(endpoint=endpoint, agent=agent)


async def play(
    project: Project, ctx: TaskContext, script: list[Step], max_calls: int = 6, **options: Any
) -> tuple[Episode, Session, ChatDouble]:
    with ChatDouble(script) as double:
        agent = model_at(double.base_url, **options)
        async with Session.open(project, ["dart"], max_calls=max_calls) as session:
            episode = await agent.run(ctx, session)
    return episode, session, double


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.anyio
async def test_two_turn_chain_sends_schemas_and_returns_tool_results(
    project: Project, ctx: TaskContext
) -> None:
    script: list[Step] = [
        Reply(tool_calls=[ToolCall("dart_corp_code", SAMSUNG, id="c1")]),
        Reply(
            content="재무제표를 조회합니다.", tool_calls=[ToolCall("dart_major_accounts", ACCOUNTS, id="c2")]
        ),
        Reply(content=ANSWER),
    ]
    episode, session, double = await play(project, ctx, script)

    assert (episode.stop_reason, episode.final_message, episode.error) == ("answered", ANSWER, None)
    assert [(c.tool, c.arguments, c.is_error) for c in session.calls] == [
        ("dart_corp_code", SAMSUNG, False),
        ("dart_major_accounts", ACCOUNTS, False),
    ]
    assert episode.turns == [[0], [1]]
    first, second, third = double.bodies
    assert first["model"] == "double-model" and first["temperature"] == 0.0
    assert first["tool_choice"] == "auto" and first["parallel_tool_calls"] is True
    assert first["messages"] == [
        {"role": "system", "content": system_prompt(ctx.task)},
        {"role": "user", "content": ctx.task.query},
    ]
    sent = {t["function"]["name"]: t for t in first["tools"]}
    assert {t["type"] for t in first["tools"]} == {"function"}
    assert sent.keys() == {t["name"] for t in session.tools()}
    corp_tool = next(t for t in session.tools() if t["name"] == "dart_corp_code")
    assert sent["dart_corp_code"]["function"] == {
        "name": "dart_corp_code",
        "description": corp_tool["description"],
        "parameters": corp_tool["inputSchema"],
    }
    assert tool_messages(second) == [{"role": "tool", "tool_call_id": "c1", "content": session.calls[0].text}]
    assert "00126380" in session.calls[0].text
    assert tool_messages(third)[-1] == {
        "role": "tool",
        "tool_call_id": "c2",
        "content": session.calls[1].text,
    }
    assert third["messages"][-2] == {
        "role": "assistant",
        "content": "재무제표를 조회합니다.",
        "tool_calls": [
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "dart_major_accounts", "arguments": json.dumps(ACCOUNTS)},
            }
        ],
    }
    assert episode.messages == [*third["messages"], {"role": "assistant", "content": ANSWER}]


@pytest.mark.anyio
async def test_parallel_calls_of_one_turn_are_one_turn(project: Project, ctx: TaskContext) -> None:
    script: list[Step] = [
        Reply(
            tool_calls=[
                ToolCall("dart_corp_code", SAMSUNG, id="a"),
                ToolCall("dart_company", {"corp_code": "00126380"}, id="b"),
            ]
        ),
        Reply(content=ANSWER),
    ]
    episode, session, double = await play(project, ctx, script)

    assert episode.stop_reason == "answered" and episode.turns == [[0, 1]]
    by_tool = {c.tool: c for c in session.calls}
    assert not any(c.is_error for c in session.calls)
    assert tool_messages(double.bodies[1]) == [
        {"role": "tool", "tool_call_id": "a", "content": by_tool["dart_corp_code"].text},
        {"role": "tool", "tool_call_id": "b", "content": by_tool["dart_company"].text},
    ]


@pytest.mark.anyio
async def test_malformed_arguments_and_unknown_tools_are_tool_errors(
    project: Project, ctx: TaskContext
) -> None:
    broken = '{"corp_name": "삼성'
    script: list[Step] = [
        Reply(
            tool_calls=[
                ToolCall("dart_corp_code", broken, id="bad"),
                ToolCall("dart_stock_price", {"ticker": "005930"}, id="ghost"),
            ]
        ),
        Reply(content="도구 오류로 답할 수 없습니다."),
    ]
    episode, session, double = await play(project, ctx, script)

    assert episode.stop_reason == "answered" and episode.turns == [[0, 1]]
    codes = {c.tool: (c.error_code, c.arguments) for c in session.calls}
    assert codes == {
        "dart_corp_code": ("bad_arguments", broken),
        "dart_stock_price": ("unknown_tool", {"ticker": "005930"}),
    }
    bad, ghost = tool_messages(double.bodies[1])
    assert bad == {
        "role": "tool",
        "tool_call_id": "bad",
        "content": "the arguments of dart_corp_code are not valid JSON: Unterminated string starting at: the "
        'parser stopped at line 1, column 15 (character 14), near \'{"corp_name": "삼성\'; write them as one '
        'JSON object, e.g. {"name": "value", "count": 3}',
    }
    assert ghost["tool_call_id"] == "ghost" and ghost["content"].startswith("unknown tool 'dart_stock_price'")
    # Malformed arguments go back as a JSON string literal: servers that json-decode the history stay happy.
    echoed = double.bodies[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(echoed) == broken


@pytest.mark.anyio
async def test_odd_but_legal_responses(project: Project, ctx: TaskContext) -> None:
    """content null with tool calls, no ids, empty arguments, no tool_calls key, an unusual finish_reason."""
    call = {"type": "function", "function": {"name": "dart_corp_code", "arguments": ""}}
    turn = {"role": "assistant", "content": None, "tool_calls": [call]}
    answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "정답: "}, {"type": "text", "text": "모름"}],
    }
    script: list[Step] = [
        Raw({"choices": [{"message": turn, "finish_reason": "stop"}]}),
        Raw({"choices": [{"message": answer, "finish_reason": "eos"}]}),
    ]
    episode, session, double = await play(project, ctx, script)

    assert (episode.stop_reason, episode.final_message) == ("answered", "정답: 모름")
    assert session.calls[0].arguments == {}, "empty arguments mean no arguments"
    sent = double.bodies[1]["messages"][2]
    assert sent["content"] is None and sent["tool_calls"][0]["id"] == "call_0_0"
    assert sent["tool_calls"][0]["function"]["arguments"] == "{}"
    assert tool_messages(double.bodies[1])[0]["tool_call_id"] == "call_0_0"

    nothing = Raw(
        {"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "length"}]}
    )
    episode, _, _ = await play(project, ctx, [nothing])
    assert (episode.stop_reason, episode.final_message) == ("answered", "")

    episode, _, _ = await play(project, ctx, [Raw({"choices": []})])
    assert episode.stop_reason == "error" and episode.error is not None and "malformed" in episode.error


@pytest.mark.anyio
async def test_server_errors_and_rate_limits_are_retried(project: Project, ctx: TaskContext) -> None:
    episode, _, double = await play(project, ctx, [Fail(500), Fail(429), Reply(content=ANSWER)])
    assert (episode.stop_reason, episode.final_message) == ("answered", ANSWER)
    assert len(double.requests) == 3 and double.bodies[0] == double.bodies[2]

    episode, _, double = await play(project, ctx, [Fail(500, "overloaded")] * 5, retries=3)
    # the endpoint never answered: infrastructure, not the model's failure (the runner retries it on resume)
    assert episode.stop_reason == "infrastructure" and len(double.requests) == 4 and double.remaining == 1
    assert episode.error is not None and "after 4 attempts: HTTP 500" in episode.error
    assert "overloaded" in episode.error


@pytest.mark.anyio
async def test_unreachable_endpoint_is_retried_then_an_infrastructure_failure(
    ctx: TaskContext, project: Project
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        agent = model_at(f"http://127.0.0.1:{closed.getsockname()[1]}/v1", retries=1)
        async with Session.open(project, ["dart"]) as session:
            episode = await agent.run(ctx, session)
    assert episode.stop_reason == "infrastructure" and episode.error is not None
    assert "after 2 attempts: ConnectError" in episode.error and session.calls == []


@pytest.mark.anyio
async def test_client_errors_are_not_retried(project: Project, ctx: TaskContext) -> None:
    episode, _, double = await play(project, ctx, [Fail(400, "context too long"), Reply(content=ANSWER)])
    assert episode.stop_reason == "error" and len(double.requests) == 1
    assert episode.error is not None and "HTTP 400" in episode.error and "context too long" in episode.error


@pytest.mark.anyio
async def test_call_budget_ends_the_episode(project: Project, ctx: TaskContext) -> None:
    keep_calling = Reply(content="고유번호부터 찾겠습니다.", tool_calls=[ToolCall("dart_corp_code", SAMSUNG)])
    episode, session, double = await play(project, ctx, [keep_calling] * 3, max_calls=1)
    assert episode.stop_reason == "budget" and episode.final_message == "고유번호부터 찾겠습니다."
    assert len(session.calls) == 1 and len(double.requests) == 1 and episode.turns == [[0]]

    # Calls past the budget within one turn are answered by the session with a budget tool error.
    two = Reply(
        tool_calls=[ToolCall("dart_corp_code", SAMSUNG), ToolCall("dart_company", {"corp_code": "00126380"})]
    )
    episode, session, double = await play(project, ctx, [two, keep_calling], max_calls=1)
    assert episode.stop_reason == "budget" and episode.final_message == "" and len(double.requests) == 1
    assert sorted(str(c.error_code) for c in session.calls) == ["None", "budget"]


@pytest.mark.anyio
async def test_max_turns(project: Project, ctx: TaskContext) -> None:
    keep_calling = Reply(tool_calls=[ToolCall("dart_corp_code", SAMSUNG)])
    episode, session, double = await play(project, ctx, [keep_calling] * 5, max_turns=2)
    assert len(session.calls) == 2
    assert episode.stop_reason == "max_turns" and len(double.requests) == 2
    assert episode.turns == [[0], [1]] and episode.messages[-1]["role"] == "tool"


@pytest.mark.anyio
async def test_slow_responses_time_out_and_are_retried(project: Project, ctx: TaskContext) -> None:
    """A response slower than call_timeout_s counts as a transport failure: retried, then stop_reason
    infrastructure (the endpoint never answered; the runner retries the episode on resume)."""
    late = Reply(content="너무 늦은 답", delay_s=10)
    episode, _, double = await play(project, ctx, [late, Reply(content=ANSWER)], call_timeout_s=1, retries=1)
    assert (episode.stop_reason, episode.final_message) == ("answered", ANSWER)
    assert len(double.requests) == 2

    episode, _, double = await play(project, ctx, [late, late], call_timeout_s=1, retries=1)
    assert episode.stop_reason == "infrastructure" and len(double.requests) == 2
    assert episode.error is not None and "no response within 1s" in episode.error

    episode, _, _ = await play(project, ctx, [late], call_timeout_s=5, episode_timeout_s=0.4)
    assert episode.stop_reason == "timeout" and episode.error == "episode time-out of 0.4s reached"


@pytest.mark.anyio
async def test_api_key_is_sent_as_bearer_and_never_leaks(
    project: Project, ctx: TaskContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-kopa-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    script: list[Step] = [
        Reply(tool_calls=[ToolCall("dart_corp_code", SAMSUNG)]),
        Fail(401, f"invalid api key {key}"),
    ]
    episode, _, double = await play(project, ctx, script, api_key_env="OPENAI_API_KEY")
    assert [r.headers["authorization"] for r in double.requests] == [f"Bearer {key}"] * 2
    assert episode.stop_reason == "error" and episode.error is not None
    assert "HTTP 401" in episode.error and "invalid api key ***" in episode.error
    assert key not in episode.error and key not in json.dumps(episode.messages, ensure_ascii=False)

    _, _, double = await play(project, ctx, [Reply(content=ANSWER)])
    assert "authorization" not in double.requests[0].headers, "no key in the environment, no header"


def test_registered_by_name() -> None:
    made = policy("openai", endpoint=EndpointSettings(base_url="http://127.0.0.1:1/v1/", model="m"))
    assert (
        isinstance(made, OpenAIPolicy) and made.name == "openai" and made.base_url == "http://127.0.0.1:1/v1"
    )

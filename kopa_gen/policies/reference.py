"""Reference policies: the oracle (replays the gold chain, must score 1.0 everywhere) and scripted baselines that
reproduce the failure modes small models show on these APIs. They are algorithms over the task's gold chain,
named for what they do; none of them is, or pretends to be, a model.

- `oracle`: every gold call, resolving references against its own results; answers from them.
- `no-lookup`: skips the code lookups (the first step's lookup tools) and guesses a code of the right shape
  instead (the gold code with its last digit changed), then carries on.
- `first-page`: never pages: drops every page-number and page-size argument, so it sees only the first page
  at the platform's default size.
- `do-nothing`: answers at once without calling anything (must score 0 on every task).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kopa_gen.policies.base import Episode, TaskContext, register, system_prompt
from kopa_gen.runtime.answer import derive_answer
from kopa_gen.runtime.paths import PathError, evaluate
from kopa_gen.runtime.session import Session
from kopa_gen.spec.task import From, GoldCall

LOOKUP_TOOLS = frozenset(
    {"dart_corp_code", "fsc_get_corp_outline", "neis_search_schools", "region_list_legal_districts"}
)
PAGE_ARGS = frozenset(
    {"pageNo", "pIndex", "page_no", "page", "numOfRows", "pSize", "page_count", "page_size"}
)
UNKNOWN = "정답: 알 수 없습니다."

# (call, resolved args) -> args to send, or None to skip the call
Transform = Callable[[GoldCall, dict[str, Any]], dict[str, Any] | None]


def render_answer(value: Any) -> str:
    if isinstance(value, list):
        return "정답: " + ", ".join(str(v) for v in value)
    return f"정답: {value}"


async def replay(
    ctx: TaskContext, session: Session, transform: Transform, guess: Callable[[Any], Any]
) -> Episode:
    """Walk the gold chain in the session, resolving references against this episode's own results.
    A reference to a skipped call is filled by `guess` (applied to the fixture's resolved value)."""
    task = ctx.task
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(task)},
        {"role": "user", "content": task.query},
    ]
    gold_args = {call["id"]: call["args"] for step in ctx.fixture["steps"] for call in step}
    results: dict[str, Any] = {}
    turns: list[list[int]] = []
    for step in task.gold:
        planned: list[tuple[GoldCall, dict[str, Any]]] = []
        for call in step.calls:
            args: dict[str, Any] = {}
            for name, value in call.args.items():
                if not isinstance(value, From):
                    args[name] = value
                elif value.call in results:
                    try:
                        args[name] = evaluate(results[value.call], value.path)
                    except PathError:
                        args[name] = guess(gold_args[call.id].get(name))
                else:
                    args[name] = guess(gold_args[call.id].get(name))
            sent = transform(call, args)
            if sent is not None:
                planned.append((call, sent))
        if not planned:
            continue
        if session.exhausted:
            break
        first = len(session.calls)
        outcomes = await asyncio.gather(*(session.call(call.tool, args) for call, args in planned))
        turns.append(list(range(first, len(session.calls))))
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{first + k}",
                        "type": "function",
                        "function": {"name": c.tool, "arguments": a},
                    }
                    for k, (c, a) in enumerate(planned)
                ],
            }
        )
        for k, ((call, _), outcome) in enumerate(zip(planned, outcomes, strict=True)):
            messages.append({"role": "tool", "tool_call_id": f"call_{first + k}", "content": outcome.text})
            if not outcome.is_error and outcome.structured is not None:
                results[call.id] = outcome.structured
    final = UNKNOWN
    if task.answer_from is not None:
        try:
            final = render_answer(derive_answer(results, task.answer_from))
        except PathError:
            final = UNKNOWN
    elif task.answer is None:
        final = "작업 공간에 결과를 남겼습니다."
    messages.append({"role": "assistant", "content": final})
    return Episode(final, messages, turns, "budget" if session.exhausted else "answered")


def _keep(call: GoldCall, args: dict[str, Any]) -> dict[str, Any] | None:
    return args


def _same(value: Any) -> Any:
    return value


def wrong_code(value: Any) -> Any:
    """A code of the right shape that is not the right one: the last digit changed."""
    text = str(value)
    if text and text[-1].isdigit():
        return text[:-1] + str((int(text[-1]) + 1) % 10)
    return text + "0"


@register("oracle")
class Oracle:
    name = "oracle"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        return await replay(ctx, session, _keep, _same)


@register("no-lookup")
class NoLookup:
    name = "no-lookup"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        def skip_lookups(call: GoldCall, args: dict[str, Any]) -> dict[str, Any] | None:
            return None if call.tool in LOOKUP_TOOLS else args

        return await replay(ctx, session, skip_lookups, wrong_code)


@register("first-page")
class FirstPage:
    name = "first-page"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        def page_one(call: GoldCall, args: dict[str, Any]) -> dict[str, Any] | None:
            return {k: v for k, v in args.items() if k not in PAGE_ARGS}

        return await replay(ctx, session, page_one, _same)


@register("do-nothing")
class DoNothing:
    name = "do-nothing"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        messages = [
            {"role": "system", "content": system_prompt(ctx.task)},
            {"role": "user", "content": ctx.task.query},
            {"role": "assistant", "content": UNKNOWN},
        ]
        return Episode(UNKNOWN, messages, [], "answered")

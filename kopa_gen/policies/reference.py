"""Reference policies: the oracle, scripted baselines that reproduce the failure modes small models show on these
APIs, and adversarial ones that try to pass the grader without answering. They are algorithms over the task's
gold chain (kopa_gen/runtime/chain.py walks it), named for what they do; none of them is, or pretends to be, a
model, and none reads a gold value: they act on what their own calls return.

- `oracle`: every gold call, resolving references against its own results, paging to the end where the gold
  pages; answers from them. Must score 1.0 everywhere.
- `no-lookup`: skips the code lookups the chain starts with (first-step calls whose results later calls use) and
  fills each argument it would have looked up with the platform's documented example value (what a model that
  read the API guide but skipped the lookup sends), or leaves it out; then carries on.
- `first-page`: never pages and sends no page size: sees only the first page at the platform's default size.
- `list-all`: the oracle's calls, then answers (and writes) every candidate it saw where the answer is chosen.
- `dump`: the oracle's calls, then pastes its last tool results as the answer (and into files).
- `do-nothing`: answers at once without calling anything.
All but the oracle must score 0 (or nearly) on a sound benchmark; `kopa-gen demo` and the tests run them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kopa_gen.policies.base import Episode, TaskContext, register, system_prompt
from kopa_gen.runtime.answer import answer_pool, derive_answer, reference_pool
from kopa_gen.runtime.chain import Walk, Walker, walk_chain
from kopa_gen.runtime.functions import to_text
from kopa_gen.runtime.paths import PathError
from kopa_gen.runtime.session import Session
from kopa_gen.spec.task import From, GoldCall, Task, Template

UNKNOWN = "정답: 알 수 없습니다."
DONE = "작업 공간에 결과를 남겼습니다."


def render_answer(value: Any) -> str:
    if isinstance(value, list):
        return "정답: " + ", ".join(to_text(v) for v in value)
    return f"정답: {to_text(value)}"


def transcript(task: Task, walk: Walk, final: str) -> list[dict[str, Any]]:
    """The walk as an OpenAI-style transcript: one assistant turn of tool calls per walk turn."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(task)},
        {"role": "user", "content": task.query},
    ]
    for turn in walk.turns:
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{u.index}",
                        "type": "function",
                        "function": {"name": u.call.tool, "arguments": u.args},
                    }
                    for u in turn
                ],
            }
        )
        messages += [{"role": "tool", "tool_call_id": f"call_{u.index}", "content": u.text} for u in turn]
    messages.append({"role": "assistant", "content": final})
    return messages


Answerer = Callable[[Task, Walk], str]


def oracle_answer(task: Task, walk: Walk) -> str:
    if task.answer_from is None:
        return DONE
    try:
        return render_answer(derive_answer(walk.results, task.answer_from))
    except PathError:
        return UNKNOWN


async def play(
    ctx: TaskContext,
    session: Session,
    walker: Walker,
    answer: Answerer = oracle_answer,
    walk: Walk | None = None,
) -> Episode:
    """Walk the chain as `walker` says and answer with `answer`; `walk` (filled as the walk goes) lets the
    walker's callbacks see what was seen so far."""
    done = await walk_chain(session.project, ctx.task, session, walker, walk)
    final = answer(ctx.task, done)
    turns = [[u.index for u in turn] for turn in done.turns]
    return Episode(
        final, transcript(ctx.task, done, final), turns, "budget" if session.exhausted else "answered"
    )


@register("oracle")
class Oracle:
    name = "oracle"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        return await play(ctx, session, Walker())


def lookups(task: Task) -> set[str]:
    """The code lookups a chain starts with: first-step calls whose results later calls use."""
    later = {r.call for step in task.gold[1:] for c in step.calls for r in c.references()}
    return {c.id for c in task.gold[0].calls if c.id in later}


@register("no-lookup")
class NoLookup:
    name = "no-lookup"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        skipped = lookups(ctx.task)
        project = session.project

        def guess(tool: str, name: str) -> Any:
            examples = project.platform_of(tool).kopa.examples.get(name) or []
            return examples[0] if examples else None

        walker = Walker(skip=lambda call: call.id in skipped, fill=guess)
        return await play(ctx, session, walker)


@register("first-page")
class FirstPage:
    name = "first-page"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        return await play(ctx, session, Walker(follow_pages=False, drop_paging=True))


@register("list-all")
class ListAll:
    name = "list-all"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        walk = Walk()

        def every_candidate(call: GoldCall, name: str, resolved: Any) -> Any:
            value = call.args[name]
            seen: list[Any] = []
            for ref in value.sources() if isinstance(value, From | Template) else []:
                seen += [v for v in reference_pool(walk.results, ref) if v not in seen]
            return ", ".join(to_text(v) for v in seen) if seen else resolved

        def answer(task: Task, done: Walk) -> str:
            found = answer_pool(done.results, task.answer_from) if task.answer_from is not None else []
            return "정답: " + ", ".join(to_text(v) for v in found) if found else DONE

        return await play(ctx, session, Walker(write_value=every_candidate), answer, walk)


@register("dump")
class Dump:
    name = "dump"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        walk = Walk()

        def last_results(call: GoldCall, name: str, resolved: Any) -> Any:
            return _last_text(walk)

        def answer(task: Task, done: Walk) -> str:
            return _last_text(done) or UNKNOWN

        return await play(ctx, session, Walker(write_value=last_results), answer, walk)


def _last_text(walk: Walk) -> str:
    """The text of the last two successful tool results, as a model pastes them."""
    reads = [u for u in walk.units if not u.is_error and u.result is not None]
    return "\n".join(u.text for u in reads[-2:])


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

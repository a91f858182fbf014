"""Reference policies: the oracle, scripted baselines that reproduce the failure modes small models show on these
APIs, and adversarial ones that try to pass the grader without answering. They are algorithms over the task's
gold chain (kopa_gen/runtime/chain.py walks it), named for what they do; none of them is, or pretends to be, a
model, and none reads a gold value: they act on what their own calls return (the answer's kind and unit, which
the submit tool's schema and the question give a model too, shape their submissions).

Baselines:
- `oracle`: every gold call, resolving references against its own results, paging to the end where the gold
  pages; answers from them. Must score 1.0 everywhere.
- `no-lookup`: skips the code lookups the chain starts with (first-step calls whose results later calls use) and
  fills each argument it would have looked up with the platform's documented example value, or leaves it out.
- `first-page`: never pages and sends no page size: sees only the first page at the platform's default size.
- `shortcut`: the gold chain, but where a later step picks rows by a value or an extreme that the API can filter
  or sort by (a declared filter parameter or sort order), it asks the API for them and reads one page instead of
  every page. It passes where the API offers the shortcut: a task that claims paging matters should not.
Adversaries (a sound benchmark scores them 0):
- `list-all`: the oracle's calls, then answers (and writes) every candidate it saw where the answer is chosen.
- `all-candidates`: the oracle's calls, then answers every candidate of every step, upstream choices included.
- `pool-guess`: the oracle's calls, then one candidate of the answer's pool at random (seeded by task, seed and
  rollout); `kopa-gen eval` prints its exact expectation (kopa_gen/evaluate/guess.py).
- `first-row` / `last-row`: wherever the chain picks one value among several, they take the first (last)
  candidate instead, and answer the first (last) candidate of the answer's pool.
- `dump`: the oracle's calls, then pastes its last tool results as the answer (and into files).
- `do-nothing`: answers at once without calling anything.

In submit mode each policy submits through the session's `submit_answer` tool (several candidates: several
submissions); in text mode it ends its reply with a `최종 답:` line.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kopa_gen.language.functions import to_text
from kopa_gen.language.pathsyntax import Extreme, Filter, Lit, Path, parse
from kopa_gen.language.task import EACH, AnswerMode, From, GoldCall, Task, Template
from kopa_gen.mcp.search import SEARCH_TOOL
from kopa_gen.policies.base import Episode, TaskContext, register, system_prompt
from kopa_gen.runtime.answer import answer_pool, derive_answer, reference_pool, source_value
from kopa_gen.runtime.chain import Walk, Walker, walk_chain
from kopa_gen.runtime.paths import PathError
from kopa_gen.runtime.session import Session

UNKNOWN = "최종 답: 알 수 없습니다."
DONE = "작업 공간에 결과를 남겼습니다."
FINAL = "최종 답: "


def listed(values: list[Any]) -> str:
    """Values on one line, as the text-mode prompt asks: commas between them, semicolons when one holds a comma."""
    texts = [to_text(v) for v in values]
    return ("; " if any("," in t for t in texts) else ", ").join(texts)


def render_answer(value: Any) -> str:
    """A value as the final line of a text-mode reply."""
    if isinstance(value, list):
        return FINAL + listed(value)
    return FINAL + to_text(value)


@dataclass
class Reply:
    """How a policy answers: `text` is its final message (text mode; in submit mode the message beside the
    submissions), `submit` the values it submits, one `submit_answer` call each."""

    text: str
    submit: list[Any] = field(default_factory=list)


def one(value: Any) -> Reply:
    return Reply(render_answer(value), [value])


NO_ANSWER = Reply(UNKNOWN)


def transcript(task: Task, walk: Walk, mode: AnswerMode = "submit") -> list[dict[str, Any]]:
    """The walk as an OpenAI-style transcript: one assistant turn of tool calls per turn of the walk (in search
    mode, a turn of searches before a turn that needs tools no search has shown yet), each call as it was made."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(task, mode)},
        {"role": "user", "content": task.query},
    ]
    for turn in walk_turns(walk):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": args}}
                    for index, name, args, _ in turn
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": f"call_{index}", "content": text} for index, *_, text in turn
        ]
    return messages


def walk_turns(walk: Walk) -> list[list[tuple[int, str, Any, str]]]:
    """The walk's turns as the model made them, each call (log position, tool, arguments, result text)."""
    out: list[list[tuple[int, str, Any, str]]] = []
    for number, turn in enumerate(walk.turns):
        searches = walk.lookups.get(number)
        if searches:
            out.append([(s.index, SEARCH_TOOL, s.arguments, s.text) for s in searches])
        out.append([(u.index, *(u.sent or (u.call.tool, u.args)), u.text) for u in turn])
    return out


Answerer = Callable[[Task, Walk], Reply]


def oracle_answer(task: Task, walk: Walk) -> Reply:
    if task.answer_from is None:
        return Reply(DONE, [DONE])
    try:
        return one(derive_answer(walk.results, task.answer_from))
    except PathError:
        return NO_ANSWER


async def deliver(
    ctx: TaskContext, session: Session, reply: Reply, messages: list[dict[str, Any]]
) -> Episode:
    """End the episode with `reply`: in submit mode one turn of `submit_answer` calls with the reply's text beside
    them, in text mode the reply's text."""
    turns: list[list[int]] = []
    channel = session.channel
    if ctx.mode == "submit" and channel is not None and reply.submit:
        # one turn: the reply's text beside its submit_answer calls (the episode ends with that turn)
        first = len(session.calls)
        calls = [channel.arguments_for(v) for v in reply.submit]
        outcomes = [await session.call(channel.name, args) for args in calls]
        turns.append(list(range(first, len(session.calls))))
        ids = [f"call_{first + k}" for k in range(len(calls))]
        messages.append(
            {
                "role": "assistant",
                "content": reply.text,
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": channel.name, "arguments": a}}
                    for i, a in zip(ids, calls, strict=True)
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": i, "content": o.text} for i, o in zip(ids, outcomes, strict=True)
        ]
    else:
        messages.append({"role": "assistant", "content": reply.text})
    return Episode(reply.text, messages, turns, "budget" if session.exhausted else "answered")


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
    episode = await deliver(ctx, session, answer(ctx.task, done), transcript(ctx.task, done, ctx.mode))
    episode.turns[:0] = [[index for index, *_ in turn] for turn in walk_turns(done)]
    return episode


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
            examples = project.platform_of(tool).examples(tool).get(name) or []
            return examples[0] if examples else None

        walker = Walker(skip=lambda call: call.id in skipped, fill=guess)
        return await play(ctx, session, walker)


@register("first-page")
class FirstPage:
    name = "first-page"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        return await play(ctx, session, Walker(follow_pages=False, drop_paging=True))


def _listed(values: list[Any]) -> Reply:
    if not values:
        return Reply(DONE)
    return Reply(FINAL + listed(values), list(values))


def _candidates_of(walk: Walk, value: Any) -> list[Any]:
    seen: list[Any] = []
    for ref in value.sources() if isinstance(value, From | Template) else []:
        if ref.call != EACH:
            seen += [v for v in reference_pool(walk.results, ref) if v not in seen]
    return seen


@register("list-all")
class ListAll:
    name = "list-all"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        walk = Walk()

        def every_candidate(call: GoldCall, name: str, resolved: Any) -> Any:
            seen = _candidates_of(walk, call.args[name])
            return ", ".join(to_text(v) for v in seen) if seen else resolved

        def answer(task: Task, done: Walk) -> Reply:
            found = answer_pool(done.results, task.answer_from) if task.answer_from is not None else []
            return _listed(found)

        return await play(ctx, session, Walker(write_value=every_candidate), answer, walk)


@register("all-candidates")
class AllCandidates:
    """Every candidate of every step: the values each reference of the chain chose among (upstream choices
    included), then the answer's pool, all of them answered."""

    name = "all-candidates"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        walk = Walk()

        def every_candidate(call: GoldCall, name: str, resolved: Any) -> Any:
            seen = _candidates_of(walk, call.args[name])
            return ", ".join(to_text(v) for v in seen) if seen else resolved

        def answer(task: Task, done: Walk) -> Reply:
            found: list[Any] = []
            for step in task.gold:
                for call in step.calls:
                    for ref in call.references():
                        if ref.call != EACH:
                            found += [v for v in reference_pool(done.results, ref) if v not in found]
            if task.answer_from is not None:
                found += [v for v in answer_pool(done.results, task.answer_from) if v not in found]
            return _listed(found)

        return await play(ctx, session, Walker(write_value=every_candidate), answer, walk)


@register("pool-guess")
class PoolGuess:
    """The gold calls, then one candidate of the answer's pool drawn at random (reproducible per task, seed and
    rollout). Its exact expectation is what the pool alone gives away."""

    name = "pool-guess"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        rng = random.Random(f"pool-guess:{ctx.task.id}:{ctx.seed}:{ctx.rollout}")

        def answer(task: Task, done: Walk) -> Reply:
            if task.answer_from is None:
                return oracle_answer(task, done)
            found = answer_pool(done.results, task.answer_from)
            return one(rng.choice(found)) if found else NO_ANSWER

        return await play(ctx, session, Walker(), answer)


class _RowPicker:
    """first-row / last-row: wherever a reference picks one value among candidates (a template's references too),
    take the first (`at=0`) or the last (`at=-1`) candidate instead; answer the first (last) candidate of the
    answer's pool."""

    name = "first-row"
    at = 0

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        walk = Walk()

        def chosen(ref: From) -> Any:
            found = reference_pool(walk.results, ref)
            return found[self.at] if found else source_value(walk.results, ref)

        def pick(call: GoldCall, name: str, resolved: Any) -> Any:
            value = call.args[name]
            if isinstance(value, Template):  # each placeholder's reference picks too
                if any(ref.call == EACH for ref in value.with_.values()):
                    return resolved
                try:
                    texts = {k: to_text(chosen(ref)) for k, ref in value.with_.items()}
                    return value.template.format_map(texts)
                except (PathError, KeyError, ValueError, IndexError):
                    return resolved
            if not isinstance(value, From) or value.call == EACH:
                return resolved
            found = reference_pool(walk.results, value)
            return found[self.at] if found else resolved

        def answer(task: Task, done: Walk) -> Reply:
            if task.answer_from is None:
                return oracle_answer(task, done)
            found = answer_pool(done.results, task.answer_from)
            return one(found[self.at]) if found else NO_ANSWER

        walker = Walker(read_value=pick, write_value=pick)
        return await play(ctx, session, walker, answer, walk)


@register("first-row")
class FirstRow(_RowPicker):
    name = "first-row"
    at = 0


@register("last-row")
class LastRow(_RowPicker):
    name = "last-row"
    at = -1


@register("shortcut")
class Shortcut:
    """Asks the API to do the picking: where a later reference selects rows of a call the gold pages through, by
    `field=value` (or `field~=value`) that the operation filters by a parameter the gold does not already send, or
    by `field=@max/@min` that the operation has a sort order on, the call is sent with that parameter and read for
    one page. A task where no call can be shortened this way gets no episode at all (an empty reply, no calls):
    the policy has no route of its own, and replaying the gold would score a bypass that does not exist."""

    name = "shortcut"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        project = session.project
        readers = _readers(ctx.task)
        if not any(_shortcut(project, call, readers) is not None for call in ctx.task.calls()):
            messages = [
                {"role": "system", "content": system_prompt(ctx.task, ctx.mode)},
                {"role": "user", "content": ctx.task.query},
                {"role": "assistant", "content": UNKNOWN},
            ]
            return Episode(UNKNOWN, messages, [], "answered")  # no shortcut: nothing of its own to try

        def plan(call: GoldCall, args: dict[str, Any]) -> tuple[dict[str, Any], bool]:
            found = _shortcut(project, call, readers)
            if found is None:
                return args, True
            drop, add = found
            return {**{k: v for k, v in args.items() if k not in drop}, **add}, False

        return await play(ctx, session, Walker(plan=plan))


def _shortcut(
    project: Any, call: GoldCall, readers: dict[str, list[Path]]
) -> tuple[set[str], dict[str, Any]] | None:
    """How the API would pick for `call`: (arguments to drop, arguments to set), or None when the gold does not
    page `call` (one page has nothing to bypass) or no reader's first filter is one the operation filters or sorts
    by (and the call does not already send)."""
    if call.pages is None:
        return None
    platform = project.platform_of(call.tool)
    source = platform.operation(call.tool).kopa.source
    paging = project.page_params(call.tool)
    if source is None:
        return None
    for path in readers.get(call.id, []):
        first = _first_filter(path)
        if first is None:
            continue
        column = _show_field(first.field)
        if isinstance(first.value, Extreme) and source.sort is not None:
            for key, orders in source.sort.orders.items():
                top = orders[0] if orders else None
                if top is not None and top.column == column and top.desc == (first.value.which == "max"):
                    add: dict[str, Any] = {source.sort.param: key}
                    if paging is not None:
                        add[paging[1]] = 1
                    return set(paging or ()), add
        if isinstance(first.value, Lit) and first.op in ("=", "~="):
            wanted = "eq" if first.op == "=" else "contains"
            for f in source.filters:
                sent = call.args.get(f.param)
                if (
                    sent is not None
                    and not isinstance(sent, From | Template)
                    and str(sent) == str(first.value.value)
                ):
                    continue  # the gold already asks the API for it
                if f.column == column and (f.match == wanted or (wanted == "eq" and f.match == "contains")):
                    return set(), {f.param: str(first.value.value)}
    return None


def bypass(project: Any, task: Task, call: GoldCall) -> dict[str, Any] | None:
    """The arguments with which the API itself picks everything the references of `call` read, where the gold
    pages through `call`: every reference starts with the same filter the operation applies (or the same extreme
    it sorts to). None where one reference reads more than that (a group, a count, another row)."""
    paths = _readers(task).get(call.id, [])
    found = [_shortcut(project, call, {call.id: [p]}) for p in paths]
    if not found or any(f is None for f in found) or any(f != found[0] for f in found):
        return None
    first = found[0]
    assert first is not None
    return first[1]


def _readers(task: Task) -> dict[str, list[Path]]:
    """For each gold call, the parsed paths of the references that read its result (and of the answer)."""
    refs = [r for step in task.gold for c in step.calls for r in c.references()]
    if task.answer_from is not None:
        refs += task.answer_from.sources()
    out: dict[str, list[Path]] = {}
    for ref in refs:
        try:
            expr = parse(ref.path.strip()) if ref.path.strip() else None
        except PathError:
            continue
        while expr is not None and not isinstance(expr, Path):
            expr = getattr(expr, "input", None) or getattr(expr, "head", None)
        if isinstance(expr, Path):
            out.setdefault(ref.call, []).append(expr)
    return out


def _first_filter(path: Path) -> Filter | None:
    """The first selector on the result's `rows`, when it is a filter."""
    if not path.steps or path.steps[0].name != "rows" or not path.steps[0].selectors:
        return None
    first = path.steps[0].selectors[0]
    return first if isinstance(first, Filter) and first.op is not None else None


def _show_field(field: Path) -> str:
    return ".".join(step.name for step in field.steps)


@register("dump")
class Dump:
    name = "dump"

    async def run(self, ctx: TaskContext, session: Session) -> Episode:
        walk = Walk()

        def last_results(call: GoldCall, name: str, resolved: Any) -> Any:
            return _last_text(walk)

        def answer(task: Task, done: Walk) -> Reply:
            text = _last_text(done)
            return Reply(text, [text]) if text else NO_ANSWER

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
            {"role": "system", "content": system_prompt(ctx.task, ctx.mode)},
            {"role": "user", "content": ctx.task.query},
            {"role": "assistant", "content": UNKNOWN},
        ]
        return Episode(UNKNOWN, messages, [], "answered")

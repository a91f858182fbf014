"""Walking a task's gold chain in a Session: the one executor behind the build (fixtures), the oracle and the
scripted baselines, so they cannot drift apart.

A gold step is one turn: its calls (and the items of a `for_each` fan-out) go out in parallel. A `pages: all`
call then reads its remaining pages one turn each, the way an agent pages after seeing `total_count`. Arguments
are resolved against this walk's own results only. How a walk differs from the gold walk is a `Walker`: the
baselines skip calls, drop paging, or fill what they cannot resolve; the build walks strictly and turns every
problem into a diagnostic with its place in the task file.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kopa_gen.language.task import EACH, From, GoldCall, Task, Template
from kopa_gen.mcp.search import SEARCH_TOOL
from kopa_gen.project import Project
from kopa_gen.runtime.answer import arg_value, reference_pool, source_value
from kopa_gen.runtime.paths import PathError, select
from kopa_gen.runtime.session import Session


@dataclass(frozen=True)
class Problem:
    """Why the walk could not do what the gold says, at a field path of the task file."""

    loc: tuple[str | int, ...]
    message: str


@dataclass
class Unit:
    """One request the walk made: a gold call, one item of its fan-out, one page of it."""

    call: GoldCall
    key: str  # 'c', 'c[2]' (fan-out item), 'c@3' (page), 'c[2]@3'
    args: dict[str, Any]
    item: Any = None
    item_index: int | None = None
    page: int | None = None
    follow: bool = True  # read the remaining pages of a `pages: all` call (a planned shortcut may not)
    index: int = -1  # position in the session's call log
    result: dict[str, Any] | None = None  # what the platform answered to this request
    merged: dict[str, Any] | None = None  # `pages: all`: the first page's result with every page's rows
    text: str = ""
    is_error: bool = False
    sent: tuple[str, Any] | None = (
        None  # the tool and arguments as called (search mode: `call_tool` naming it)
    )


@dataclass
class Lookup:
    """A search made before a turn (search mode): for a tool that is not listed and that no search showed yet."""

    arguments: dict[str, Any]  # of the `search_tools` call
    index: int  # position in the session's call log
    text: str


@dataclass
class Walker:
    """How a walk departs from the gold. The defaults walk the gold exactly (the oracle)."""

    follow_pages: bool = True  # read `pages: all` calls to the end
    drop_paging: bool = False  # send no page-number or page-size argument (see only the first page)
    skip: Callable[[GoldCall], bool] = lambda call: False  # calls never made
    # (tool, argument) -> a value for an argument whose reference cannot be resolved; None leaves it out
    fill: Callable[[str, str], Any] = lambda tool, name: None
    # (call, argument, resolved value or None) -> the value to send for a referenced argument of a write call
    write_value: Callable[[GoldCall, str, Any], Any] | None = None
    # (call, argument, resolved value) -> the value to send for a referenced argument of a read call (a policy
    # that chooses its own candidate where the gold picks one)
    read_value: Callable[[GoldCall, str, Any], Any] | None = None
    # (call, arguments) -> the arguments to send instead and whether to read the remaining pages (a policy that
    # asks the API to sort or filter where the gold reads every page)
    plan: Callable[[GoldCall, dict[str, Any]], tuple[dict[str, Any], bool]] | None = None
    strict: bool = False  # the build: a reference that does not resolve or a call that fails is a Problem
    # a result whose first page says it holds more rows than this is not read further (EDGE's builder, which
    # refuses such a result: 30,000 addresses were read page by page before it did)
    max_rows: int | None = None


@dataclass
class Walk:
    results: dict[str, Any] = field(default_factory=dict)  # by gold call id, as later references see them
    turns: list[list[Unit]] = field(default_factory=list)
    lookups: dict[int, list[Lookup]] = field(
        default_factory=dict
    )  # turn number -> the searches just before it
    handoffs: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def units(self) -> list[Unit]:
        return [u for turn in self.turns for u in turn]


def is_write(project: Project, tool: str) -> bool:
    return project.platform_of(tool).operation(tool).kopa.effect == "write"


def coerce(project: Project, tool: str, name: str, value: Any) -> Any:
    """A referenced value in the type the argument takes (results carry numbers as strings and the path
    language hands numbers on as numbers): text for a string argument, an int for an integer one."""
    from kopa_gen.language.functions import coerce_arg
    from kopa_gen.language.platform import tool_params

    platform = project.platform_of(tool)
    kind = next(
        (
            p.schema.get("type", "string")
            for p in tool_params(platform.kopa, platform.operation(tool))
            if p.name == name
        ),
        None,
    )
    return coerce_arg(kind, value)


def handoff(base: Any, ref: From, item: Any, results: Mapping[str, Any]) -> dict[str, int]:
    """What a hand-off chose among: `distinct`, the distinct values the reference picked its value from (its
    pool: every row a filter or an extreme looked at); `rows`, the rows behind the step (the source's total_count
    for a list result, else the largest list its path picked from)."""
    distinct = len({json.dumps(v, sort_keys=True, default=str) for v in reference_pool(results, ref, item)})
    if isinstance(base, dict) and isinstance(base.get("total_count"), int):
        return {"distinct": max(1, distinct), "rows": int(base["total_count"])}
    try:
        env = {name: source_value(results, r, item) for name, r in ref.with_.items()}
        rows = select(base, ref.path, env).candidates
    except PathError:
        rows = 1
    return {"distinct": max(1, distinct), "rows": rows}


class _Resolver:
    def __init__(self, project: Project, walk: Walk, walker: Walker) -> None:
        self.project = project
        self.walk = walk
        self.walker = walker

    def note(self, call: GoldCall, arg: str, value: Any, item: Any) -> None:
        for ref in value.sources() if isinstance(value, From | Template) else []:
            if ref.call == EACH:
                continue
            base = self.walk.results.get(ref.call)
            self.walk.handoffs.append(
                {"from": ref.call, "to": call.id, "arg": arg, **handoff(base, ref, item, self.walk.results)}
            )

    def args(
        self, call: GoldCall, item: Any, loc: tuple[str | int, ...], write: bool, first: bool
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in call.args.items():
            referenced = isinstance(value, From | Template)
            try:
                resolved: Any = arg_value(self.walk.results, value, item)
            except PathError as exc:
                if self.walker.strict:
                    self.walk.problems.append(Problem((*loc, "args", name), str(exc)))
                resolved = None
                if not (write and self.walker.write_value is not None):
                    resolved = self.walker.fill(call.tool, name)
            else:
                if referenced:
                    resolved = coerce(self.project, call.tool, name, resolved)
                    if first:
                        self.note(call, name, value, item)
            if write and referenced and self.walker.write_value is not None:
                resolved = self.walker.write_value(call, name, resolved)
            elif not write and referenced and resolved is not None and self.walker.read_value is not None:
                resolved = self.walker.read_value(call, name, resolved)
            if resolved is not None:
                out[name] = resolved
        return out


def _items(walk: Walk, call: GoldCall, walker: Walker, loc: tuple[str | int, ...]) -> list[Any] | None:
    """The fan-out items of a for_each call (None for an ordinary call)."""
    if call.for_each is None:
        return None
    ref = call.for_each
    try:
        base = walk.results.get(ref.call, None)
        if base is None:
            raise PathError(f"no result for call {ref.call!r}")
        env = {name: source_value(walk.results, r) for name, r in ref.with_.items()}
        found = select(base, ref.path, env)
    except PathError as exc:
        if walker.strict:
            walk.problems.append(Problem((*loc, "for_each"), str(exc)))
        return []
    # a selection of several values fans out over them; one value that is a list, over its items
    one_list = not found.many and len(found.values) == 1 and isinstance(found.values[0], list)
    items = list(found.values[0]) if one_list else list(found.values)
    rows = len(base.get("rows") or []) if isinstance(base, dict) else len(items)
    walk.handoffs.append(
        {
            "from": ref.call,
            "to": call.id,
            "arg": "for_each",
            "distinct": len(items),
            "rows": max(rows, len(items)),
        }
    )
    return items


async def _send(session: Session, walk: Walk, units: list[Unit]) -> None:
    """One turn of `units`; in search mode, first one turn of searches for the tools it needs and has not found
    (as a model must: it knows no name that is not listed or shown by a search)."""
    wanted = session.unfound(u.call.tool for u in units)
    if wanted:
        first = len(session.calls)
        queries = [session.search_for(tool) for tool in wanted]
        found = await asyncio.gather(*(session.call(SEARCH_TOOL, q) for q in queries))
        walk.lookups[len(walk.turns)] = [
            Lookup(query, first + k, outcome.text)
            for k, (query, outcome) in enumerate(zip(queries, found, strict=True))
        ]
    sent = [session.wire(unit.call.tool, unit.args) for unit in units]
    first = len(session.calls)
    outcomes = await asyncio.gather(*(session.call(*call) for call in sent))
    for k, (unit, call, outcome) in enumerate(zip(units, sent, outcomes, strict=True)):
        unit.index, unit.sent = first + k, call
        unit.text = outcome.text
        unit.is_error = outcome.is_error or outcome.structured is None
        unit.result = None if unit.is_error else outcome.structured


def _pages_left(result: dict[str, Any]) -> int:
    total, size = result.get("total_count"), result.get("page_size")
    if not isinstance(total, int) or not isinstance(size, int) or size <= 0:
        return 0
    return max(0, math.ceil(total / size) - 1)


async def walk_chain(
    project: Project, task: Task, session: Session, walker: Walker | None = None, walk: Walk | None = None
) -> Walk:
    """Walk the task's gold chain in `session` as `walker` says (into `walk` when given, so callbacks can read
    it as it grows); stops early when the session's budget is spent."""
    walker = walker or Walker()
    walk = walk if walk is not None else Walk()
    resolver = _Resolver(project, walk, walker)
    for i, step in enumerate(task.gold):
        units: list[Unit] = []
        for j, call in enumerate(step.calls):
            if walker.skip(call):
                continue
            loc: tuple[str | int, ...] = ("gold", i, "calls", j)
            write = is_write(project, call.tool)
            paging = project.page_params(call.tool)
            items = _items(walk, call, walker, loc)
            for k, item in enumerate(items if items is not None else [None]):
                args = resolver.args(call, item, loc, write, first=k == 0 or items is None)
                if paging is not None and walker.drop_paging:
                    args = {n: v for n, v in args.items() if n not in paging}
                follow = True
                if walker.plan is not None:
                    args, follow = walker.plan(call, args)
                key = call.id if items is None else f"{call.id}[{k}]"
                key += "@1" if call.pages else ""
                units.append(
                    Unit(
                        call, key, args, item, None if items is None else k, 1 if call.pages else None, follow
                    )
                )
        if not units:
            continue
        if session.exhausted:
            break
        await _send(session, walk, units)
        walk.turns.append(units)
        await _more_pages(project, session, walk, walker, units)
        _collect(walk, walker, step.calls, units, i)
    return walk


async def _more_pages(
    project: Project, session: Session, walk: Walk, walker: Walker, units: list[Unit]
) -> None:
    """The remaining pages of every `pages: all` unit, one turn each (rows appended to the first page's)."""
    if not walker.follow_pages:
        return
    for unit in list(units):
        if unit.call.pages != "all" or unit.result is None or not unit.follow:
            continue
        paging = project.page_params(unit.call.tool)
        if paging is None:
            continue
        page_arg, size_arg = paging
        total = unit.result.get("total_count")
        if walker.max_rows is not None and isinstance(total, int) and total > walker.max_rows:
            continue
        rows = list(unit.result.get("rows") or [])
        size = unit.result.get("page_size")
        for page in range(2, 2 + _pages_left(unit.result)):
            if session.exhausted:
                break
            args = dict(unit.args, **{page_arg: page})
            if size_arg not in args and isinstance(size, int):
                args[size_arg] = size
            base_key = unit.key.split("@")[0]
            more = Unit(unit.call, f"{base_key}@{page}", args, unit.item, unit.item_index, page)
            await _send(session, walk, [more])
            walk.turns.append([more])
            if more.result is None:
                break
            rows += more.result.get("rows") or []
        unit.merged = dict(unit.result, rows=rows)


def _collect(walk: Walk, walker: Walker, calls: list[GoldCall], units: list[Unit], step: int) -> None:
    """Each gold call's result as later references see it (a fan-out: [{each, result}, ...])."""
    for j, call in enumerate(calls):
        mine = [u for u in units if u.call is call]
        if not mine:
            continue
        if walker.strict:
            for u in mine:
                if u.is_error:
                    walk.problems.append(
                        Problem(
                            ("gold", step, "calls", j), f"gold call {u.key} ({call.tool}) failed: {u.text}"
                        )
                    )
        seen = [(u, u.merged or u.result) for u in mine]
        if call.for_each is None:
            if seen[0][1] is not None:
                walk.results[call.id] = seen[0][1]
        else:
            walk.results[call.id] = [{"each": u.item, "result": r} for u, r in seen if r is not None]

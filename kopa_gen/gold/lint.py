"""The task lint: what makes a gold chain a real chain and a gold answer the chain's own. Run by `kopa-gen build`
on every task; each problem is an error at its place in the task file, saying what to write instead.

Static (from the spec and the platforms):
- platforms: every tool the task uses or exposes belongs to a platform whose key the task holds (`system.keys`;
  local platforms such as the workspace need none), every key names a platform, and the exposed tools include
  every gold tool;
- `pages: all` only on a tool that pages; `compare` names only arguments of the tool; alternatives only read.
After executing the gold chain in the sandbox:
- every gold call's result is used by a later call or the answer (write calls and `state: true` excepted);
- no literal hand-off: a literal argument that is not in the query (nor a documented enum value, nor paging) but
  equals or appears in an earlier gold result must be a reference; a write call's literal must be in the query;
  a path never selects rows by an identifier (a column whose values are all distinct) the query does not give;
- the declared answer `value` is exactly what the chain gives (aliases only add spellings);
- `max_calls` is at least the gold chain's number of calls; ENVIRONMENT tasks write something.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, assert_never

from kopa_gen.language.answers import (
    Answer,
    CodeAnswer,
    DateAnswer,
    ListAnswer,
    NumberAnswer,
    TextAnswer,
    code_key,
)
from kopa_gen.language.functions import first_number, maybe_number, to_date, to_text
from kopa_gen.language.normalize import find_dates, find_numbers, normalize_text
from kopa_gen.language.platform import tool_params
from kopa_gen.language.task import EACH, From, GoldCall, Task, Template, answer_sources, arg_sources
from kopa_gen.project import Project
from kopa_gen.runtime.answer import source_value
from kopa_gen.runtime.chain import Problem, Walk, is_write
from kopa_gen.runtime.paths import PathError, filter_uses

Loc = tuple[str | int, ...]


def static_problems(project: Project, task: Task) -> list[Problem]:
    out: list[Problem] = []
    known = {p.id for p in project.platforms}
    for k, key in enumerate(task.system.keys):
        if key not in known:
            out.append(
                Problem(("system", "keys", k), f"unknown platform {key!r}; known: {', '.join(sorted(known))}")
            )
    used: list[tuple[Loc, str]] = []
    for i, step in enumerate(task.gold):
        for j, call in enumerate(step.calls):
            used.append((("gold", i, "calls", j, "tool"), call.tool))
            used += [
                (("gold", i, "calls", j, "alternatives", a, "tool"), alt.tool)
                for a, alt in enumerate(call.alternatives)
            ]
            out += _call_shape(project, call, ("gold", i, "calls", j))
    used += [(("tools", k), tool) for k, tool in enumerate(task.tools or [])]
    for loc, tool in used:
        platform = project.platform_of(tool)
        if not platform.kopa.local and platform.id not in task.system.keys:
            out.append(
                Problem(
                    loc,
                    f"{tool} is a {platform.id} tool, but system.keys does not hold {platform.id}; add it",
                )
            )
    if task.tools is not None:
        missing = sorted({c.tool for c in task.calls()} - set(task.tools))
        if missing:
            out.append(
                Problem(("tools",), f"the exposed tools lack the gold tools {', '.join(missing)}; add them")
            )
    return out


def _call_shape(project: Project, call: GoldCall, loc: Loc) -> list[Problem]:
    out: list[Problem] = []
    op = project.platform_of(call.tool).operation(call.tool)
    if call.pages and (op.kopa.shape == "record" or project.page_params(call.tool) is None):
        out.append(Problem((*loc, "pages"), f"{call.tool} does not page; remove `pages`"))
    names = _arg_names(project, call.tool)
    for name in call.compare or []:
        if name not in names:
            out.append(
                Problem(
                    (*loc, "compare"),
                    f"{name!r} is not an argument of {call.tool}; known: {', '.join(names)}",
                )
            )
    for name in call.args:
        if name not in names:
            out.append(
                Problem(
                    (*loc, "args", name), f"{call.tool} has no argument {name!r}; known: {', '.join(names)}"
                )
            )
    for a, alt in enumerate(call.alternatives):
        if is_write(project, alt.tool):
            out.append(
                Problem(
                    (*loc, "alternatives", a, "tool"), f"{alt.tool} writes; an alternative must only read"
                )
            )
    return out


def _arg_names(project: Project, tool: str) -> list[str]:
    platform = project.platform_of(tool)
    return [p.name for p in tool_params(platform.kopa, platform.operation(tool))]


def _enum(project: Project, tool: str, name: str) -> list[str]:
    platform = project.platform_of(tool)
    for p in tool_params(platform.kopa, platform.operation(tool)):
        if p.name == name:
            return [str(v) for v in p.schema.get("enum", [])]
    return []


# ------------------------------------------------------------------------------------------ after the walk


class _Query:
    """What the user gave: the query, the preset context and today, as the lint compares literals with it."""

    def __init__(self, task: Task) -> None:
        text = f"{task.query}\n{task.system.context}"
        self.flat = normalize_text(text).replace(" ", "")
        self.numbers = {Decimal(m.exact) for m in find_numbers(text)}
        self.dates = {d.value for d in find_dates(text, task.system.today.year)} | {task.system.today}

    def gives(self, value: Any) -> bool:
        text = to_text(value).strip()
        if not text:
            return True
        key = normalize_text(text).replace(" ", "")
        if key and key in self.flat:
            return True
        number = maybe_number(text)
        if number is not None and number in self.numbers:
            return True
        try:
            return to_date(text) in self.dates
        except PathError:
            return False


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    elif value is not None and not isinstance(value, bool):
        yield path, value


def _bookkeeping(project: Project, tool: str | None) -> set[str]:
    """The result fields of `tool` that number rows or page them (meaning role `meta`, or `order` that nobody
    counts along): a literal equal to a row number ('22' beside the 22nd row) is no hand-off."""
    meaning = project.meaning(project.platform_of(tool).id) if tool is not None else None
    if meaning is None or tool is None:
        return set()
    names = {*meaning.fields, *(meaning.tools[tool].fields if tool in meaning.tools else {})}
    out = set()
    for name in names:
        field = meaning.field(tool, name)
        if field is not None and (field.role == "meta" or (field.role == "order" and field.ask is None)):
            out.add(name)
    return out


def _found_in(
    project: Project, tools: dict[str, str], results: dict[str, Any], text: str
) -> tuple[str, str] | None:
    """Where an earlier result holds `text` (equal, or inside a longer text when `text` has 4+ characters),
    row numbers and paging fields apart."""
    for call_id, result in results.items():
        skip = _bookkeeping(project, tools.get(call_id))
        for path, leaf in _leaves(result):
            if path.rsplit(".", 1)[-1] in skip:
                continue
            s = to_text(leaf).strip()
            if s == text or (len(text) >= 4 and not text.isdigit() and text in s):
                return call_id, path
    return None


def walk_problems(project: Project, task: Task, walk: Walk, answer_value: Any) -> list[Problem]:
    """The lint over an executed gold chain (`walk`, walked strictly) and the value `answer_from` gave."""
    out: list[Problem] = []
    query = _Query(task)
    used: set[str] = set()
    for call in task.calls():
        used |= {r.call for r in call.references()}
    if task.answer_from is not None:
        used |= {r.call for r in answer_sources(task.answer_from)}
    order = [c.id for c in task.calls()]
    tools = {c.id: c.tool for c in task.calls()}
    for i, step in enumerate(task.gold):
        for j, call in enumerate(step.calls):
            loc: Loc = ("gold", i, "calls", j)
            if call.id not in used and not call.state and not is_write(project, call.tool):
                out.append(
                    Problem(
                        loc,
                        f"the result of gold call {call.id!r} is never used; reference it from a later call or the "
                        "answer, remove the call, or mark it `state: true` if it is kept for its effect",
                    )
                )
            earlier = {k: v for k, v in walk.results.items() if order.index(k) < order.index(call.id)}
            out += _literals(project, call, loc, query, earlier, tools)
            out += _filters(task, call, loc, query, walk.results)
    if task.answer_from is not None:
        for k, ref in enumerate(answer_sources(task.answer_from)):
            out += _ref_filters(
                ref,
                ("answer_from",) if isinstance(task.answer_from, From) else ("answer_from", k),
                query,
                walk.results,
                None,
            )
    if task.answer is not None and task.answer_from is not None:
        mismatch = answer_mismatch(task.answer, answer_value)
        if mismatch:
            out.append(Problem(("answer", "value"), mismatch))
    calls = len(walk.units)
    if task.max_calls < calls:
        out.append(
            Problem(
                ("max_calls",),
                f"max_calls {task.max_calls} is below the gold chain's {calls} calls; give at least {calls}",
            )
        )
    if "ENVIRONMENT" in task.reward and not any(is_write(project, u.call.tool) for u in walk.units):
        out.append(
            Problem(("reward",), "ENVIRONMENT needs a gold call that writes (doing nothing must fail)")
        )
    return out


def _said(project: Project, tool: str, name: str, value: Any, query: _Query) -> bool:
    """Whether the query says the literal as its meaning words it (meaning.yaml `say` / `labels`): a city
    code the query gives as its city's name ('창원시' for TAGO's 38010)."""
    meaning = project.meaning(project.platform_of(tool).id)
    param = meaning.param(tool, name) if meaning is not None else None
    words = param.phrase(value) if param is not None else None
    return bool(words) and words != to_text(value).strip() and query.gives(words)


def _literals(
    project: Project, call: GoldCall, loc: Loc, query: _Query, earlier: dict[str, Any], tools: dict[str, str]
) -> list[Problem]:
    out: list[Problem] = []
    paging = project.page_params(call.tool) or ()
    write = is_write(project, call.tool)
    for name, value in call.args.items():
        if isinstance(value, From | Template) or name in paging or isinstance(value, bool):
            continue
        enum = _enum(project, call.tool, name)
        for item in value if isinstance(value, list) else [value]:
            text = to_text(item).strip()
            if query.gives(text) or text in enum or _said(project, call.tool, name, item, query):
                continue
            if write:
                out.append(
                    Problem(
                        (*loc, "args", name),
                        f"literal {text!r} written by {call.tool} is not in the query; derive it from the results "
                        "with a reference ({from, path}) or a template ({template, with})",
                    )
                )
                continue
            where = _found_in(project, tools, earlier, text)
            if where is not None:
                out.append(
                    Problem(
                        (*loc, "args", name),
                        f"literal {text!r} is not in the query but is in the result of {where[0]!r} at "
                        f"{where[1]}: hand it over as a reference, e.g. {{from: {where[0]}, path: ...}}",
                    )
                )
    return out


def _filters(task: Task, call: GoldCall, loc: Loc, query: _Query, results: dict[str, Any]) -> list[Problem]:
    out: list[Problem] = []
    if call.for_each is not None:
        out += _ref_filters(call.for_each, (*loc, "for_each"), query, results, None)
    for name, value in call.args.items():
        for ref in arg_sources(value):
            if ref.call != EACH:
                out += _ref_filters(ref, (*loc, "args", name), query, results, None)
    return out


def _ref_filters(ref: From, loc: Loc, query: _Query, results: dict[str, Any], item: Any) -> list[Problem]:
    """A `[field=literal]` filter that picks rows by an identifier (every row's value distinct) the query does not
    give is a hidden hand-off: the author knew which row to take."""
    base = results.get(ref.call)
    if base is None:
        return []
    try:
        env = {name: source_value(results, r) for name, r in ref.with_.items()}
        uses = filter_uses(base, ref.path, env)
    except PathError:
        return []
    out: list[Problem] = []
    for use in uses:
        # codes of three characters or fewer are the API's vocabulary (meal kind 3, fs_div CFS, lstgYn Y)
        if use.op != "=" or len(use.literal) <= 3 or query.gives(use.literal):
            continue
        column = [to_text(v).strip() for v in use.column if v is not None and to_text(v).strip()]
        if len(column) >= 2 and len(set(column)) == len(column):
            numbers = [n for n in (maybe_number(v) for v in column) if n is not None]
            literal = maybe_number(use.literal)
            extreme = (
                literal is not None
                and len(numbers) == len(column)
                and literal in (max(numbers), min(numbers))
            )
            hint = (
                "use [field=@max] / [field=@min] for the extreme"
                if extreme
                else "select by what the query says ([field] keeps rows where it is not blank), or hand the value "
                "over with {name} and `with:`"
            )
            out.append(
                Problem(
                    (*loc, "path"),
                    f"[{use.field}={use.literal}] picks a row by an identifier the query does not give; {hint}",
                )
            )
    return out


def answer_mismatch(answer: Answer, value: Any) -> str | None:
    """Why the declared answer is not the chain's value (None when it is): the `value` itself must match; aliases
    only add spellings a reply may use."""
    if isinstance(answer, ListAnswer):
        if not isinstance(value, list):
            return "a list answer needs a list value: a path ending in | list, or op: list"
        if len(value) != len(answer.items):
            return f"the chain gives {len(value)} items {value!r}, the answer declares {len(answer.items)}"
        pairs = list(zip(answer.items, value, strict=True))
        if not answer.ordered:
            remaining = list(value)
            for item in answer.items:
                hit = next((v for v in remaining if answer_mismatch(item, v) is None), None)
                if hit is None:
                    return f"item {item.model_dump(mode='json')} is not among the chain's values {value!r}"
                remaining.remove(hit)
            return None
        for k, (item, v) in enumerate(pairs):
            problem = answer_mismatch(item, v)
            if problem:
                return f"item {k}: {problem}"
        return None
    if isinstance(value, list):
        return f"the chain gives a list {value!r}; declare kind: list or reduce it to one value"
    if isinstance(answer, NumberAnswer):
        try:
            number = first_number(value) if not isinstance(value, bool) else None
        except PathError:
            number = None
        declared = Decimal(repr(answer.value)) if isinstance(answer.value, float) else Decimal(answer.value)
        if number is None:
            return f"the chain gives {value!r}, which is no number; declare kind: text"
        if number != declared:
            return f"declared value {answer.value} is not what the chain gives ({to_text(number)}); write value: {to_text(number)}"
        return None
    if isinstance(answer, DateAnswer):
        try:
            day = to_date(value)
        except PathError:
            return f"the chain gives {value!r}, which is no date"
        if day != answer.value:
            return f"declared date {answer.value} is not what the chain gives ({day}); write value: {day}"
        return None
    if isinstance(answer, TextAnswer):
        if normalize_text(answer.value) != normalize_text(to_text(value)):
            return (
                f"declared value {answer.value!r} is not what the chain gives ({to_text(value)!r}); write value: "
                f"{to_text(value)!r} (aliases only add spellings)"
            )
        return None
    if isinstance(answer, CodeAnswer):
        if answer.key() != code_key(to_text(value)):
            return f"declared code {answer.value!r} is not what the chain gives ({to_text(value)!r}); write value: {to_text(value)!r}"
        return None
    assert_never(answer)


def state_scope(project: Project, walk: Walk) -> list[dict[str, Any]]:
    """The rows the gold writes (table and key, in first-write order): what ENVIRONMENT compares."""
    scope: list[dict[str, Any]] = []
    tables = {t.name: t for t in project.world.episode}
    for unit in walk.units:
        op = project.platform_of(unit.call.tool).operation(unit.call.tool)
        if op.kopa.effect != "write" or op.kopa.write is None or unit.is_error:
            continue
        table = tables[op.source.table]
        key = {col: unit.args.get(op.kopa.write.values[col]) for col in table.key}
        entry = {"table": table.name, "key": key}
        if entry not in scope:
            scope.append(entry)
    return scope

"""The ACTION axis: how well the agent's tool calls did the chain's work. Reported for every episode, never a
reward (docs/evaluation.md has the definitions with worked examples).

    ACTION = (Corr + Eff) / 2,   Eff = (CR + MPC) / 2          (the paper's; `action_gated` = (Corr + Corr x Eff) / 2)

Corr  the mean over gold calls (its pages together; a fan-out item on its own) of the share of what the chain's
      references read from it that the agent fetched, by any route:
      - the rows they read (a filter's or an extreme's rows; the fixture's `calls[id].evidence.rows`, row keys),
        returned by any successful call of the same tool: a sorted query, an exact-name query or a larger page
        counts as well as the gold's;
      - the total (`total_count`): a call of the tool with the gold's compared arguments that returned it;
      - the record: a call of the tool that returned the same record;
      - when the references read every row of a long list (`rows: "all"`), a write, a fan-out item, or a call with
        no evidence recorded: argument matching as before, page by page (the agent's calls with the compared
        arguments must together have read every row of each gold page), the share of pages covered;
      - a call whose values only feed later calls (not the answer) counts in full when every call it feeds does:
        the agent already held the value (a lookup skipped).
CR    min(1, gold units / agent calls): gold units count pages and fan-out items; every agent call counts (errors
      included); 0 without calls.
MPC   over gold steps of two or more calls: the share whose calls were all credited and whose covering agent calls
      share one model turn; 1.0 when there is no such step, 0 without calls.

Argument matching (`match_calls`): a unit takes the earliest agent call not yet taken that did not return an error,
has the unit's tool (or one of its alternatives') and equal values on its compared arguments (the fixture's
`compare`; paging arguments never compare as values); a unit of a tool that pages is matched by the rows it
covers (page, page size and total of the agent's calls), so a larger page may cover several gold pages.

Value equality (`canonical`): None is the same as an absent argument; strings are NFC-normalized and stripped;
ints, floats and numeric strings ('2025', '-3.5'; not '005930', whose leading zero makes it an identifier)
compare as exact decimal numbers; a list, or a string containing a comma, is a set of its items (a set of one
item equals that item); booleans equal only booleans; objects compare key by key. Odd agent arguments (not an
object, unexpected types, deep nesting) never raise: they simply do not match.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from kopa_gen.runtime.evidence import covered_rows, row_key

GoldUnit = Mapping[str, Any]
"""One executed gold call as written in a fixture: {id, key, tool, args, compare, paging, alternatives}."""

_NUMBER = re.compile(r"[+-]?(?:0|[1-9]\d*)(?:\.\d+)?")
_ABSENT: Hashable = ("absent",)


class CallLike(Protocol):
    """What ACTION needs from an agent call (kopa_gen.runtime.session.CallRecord fits)."""

    @property
    def index(self) -> int: ...
    @property
    def tool(self) -> str: ...
    @property
    def arguments(self) -> Any: ...
    @property
    def is_error(self) -> bool: ...


@dataclass(frozen=True)
class ActionScore:
    """The ACTION axis of one episode; `matched` pairs each credited gold call with the first agent call that
    covered it. `action` is the paper's (Corr + Eff) / 2; `action_gated` the stricter (Corr + Corr x Eff) / 2,
    where efficiency counts only as far as the calls were correct."""

    corr: float
    cr: float
    mpc: float
    eff: float
    action: float
    matched: list[tuple[str, int]]
    action_gated: float = 0.0


def _scalar(text: str) -> Hashable:
    text = unicodedata.normalize("NFC", text).strip()
    if _NUMBER.fullmatch(text):
        return ("num", Decimal(text))
    return ("str", text)


def _as_set(items: list[Hashable]) -> Hashable:
    members = frozenset(items)
    if len(members) == 1:
        return next(iter(members))
    return ("set", members)


def canonical(value: Any) -> Hashable:
    """The comparison form of an argument value: two values are equal for ACTION when these are equal."""
    if value is None:
        return _ABSENT
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("num", Decimal(value))
    if isinstance(value, float):
        return ("num", Decimal(repr(value))) if math.isfinite(value) else ("float", repr(value))
    if isinstance(value, str):
        if "," in value:
            return _as_set([_scalar(part) for part in value.split(",") if part.strip()])
        return _scalar(value)
    if isinstance(value, list | tuple):
        return _as_set([canonical(item) for item in value])
    if isinstance(value, Mapping):
        return ("map", frozenset((str(k), canonical(v)) for k, v in value.items()))
    # Not a JSON value: equal only to itself (identity, so no user __repr__ or __eq__ ever runs).
    return ("other", id(value))


def _args(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def _same(gold_tool: Any, gold_args: Any, names: Sequence[str] | None, call: CallLike) -> bool:
    if call.tool != gold_tool:
        return False
    want = _args(gold_args)
    got = _args(call.arguments)
    try:
        return all(
            canonical(want.get(n)) == canonical(got.get(n)) for n in (names if names is not None else want)
        )
    except RecursionError:  # absurdly nested agent arguments: no match rather than a crash
        return False


def _fits(unit: GoldUnit, call: CallLike) -> bool:
    """The call is the unit's tool with the unit's compared values, or one of its alternatives."""
    if call.is_error:
        return False
    if _same(unit.get("tool"), unit.get("args"), _names(unit), call):
        return True
    for alt in unit.get("alternatives") or []:
        if isinstance(alt, Mapping) and _same(alt.get("tool"), alt.get("args"), alt.get("compare"), call):
            return True
    return False


def _names(unit: GoldUnit) -> list[str]:
    declared = unit.get("compare")
    if isinstance(declared, list):
        return [str(n) for n in declared]
    paging = unit.get("paging") or {}
    skip = set(paging.get("params") or [])
    return [str(k) for k in _args(unit.get("args")) if k not in skip]


def _covers(call: CallLike) -> tuple[int, int] | None:
    """The rows [start, end) an agent call read, from its own result."""
    return covered_rows(getattr(call, "structured", None))


def _group(unit: GoldUnit) -> str:
    """Pages of one gold call (and one fan-out item) share the agent calls that read them."""
    return str(unit.get("key", unit.get("id"))).split("@")[0]


def match_calls(gold_steps: Sequence[Sequence[GoldUnit]], calls: Sequence[CallLike]) -> list[tuple[str, int]]:
    """Greedy matching of gold units (chain order) to agent calls (call order); see the module docstring."""
    owner: dict[int, str] = {}
    matched: list[tuple[str, int]] = []
    for step in gold_steps:
        for unit in step:
            key = str(unit.get("key", unit.get("id")))
            group = _group(unit)
            paging = unit.get("paging") or {}
            rows = paging.get("rows") if isinstance(paging, Mapping) else None
            if isinstance(rows, list) and len(rows) == 2:
                used = _cover(unit, (int(rows[0]), int(rows[1])), calls, owner, group)
                if used:
                    for p in used:
                        owner[p] = group
                    matched.append((key, calls[used[0]].index))
                continue
            for position, call in enumerate(calls):
                if position not in owner and _fits(unit, call):
                    owner[position] = group
                    matched.append((key, call.index))
                    break
    return matched


def _cover(
    unit: GoldUnit, rows: tuple[int, int], calls: Sequence[CallLike], owner: Mapping[int, str], group: str
) -> list[int]:
    """Positions of the agent calls that together read rows [start, end) of the unit's call; [] when they do not."""
    start, end = rows
    usable = [
        (p, c)
        for p, c in enumerate(calls)
        if owner.get(p, group) == group and _fits(unit, c) and _covers(c) is not None
    ]
    if start >= end:  # nothing to read (no rows): any call with the right arguments saw it all
        return [usable[0][0]] if usable else []
    needed, used = start, []
    for p, c in sorted(usable, key=lambda pc: _covers(pc[1]) or (0, 0)):
        lo, hi = _covers(c) or (0, 0)
        if lo <= needed < hi:
            used.append(p)
            needed = hi
            if needed >= end:
                return sorted(used)
    return []


def _turn_lookup(turns: Sequence[Sequence[int]]) -> dict[int, int]:
    """Agent call index -> the first turn that lists it."""
    lookup: dict[int, int] = {}
    for number, turn in enumerate(turns):
        for index in turn:
            lookup.setdefault(index, number)
    return lookup


CallInfo = Mapping[str, Any]
"""A fixture's `calls[id]`: {evidence: {rows: [row keys] | "all", total: bool, record: key | null, ignore: [fields
left out of row keys]} | null,
feeds: [ids of calls that read it], answer: bool (the answer reads it)}."""


def _group_key(unit: GoldUnit) -> str:
    """The logical call a unit belongs to: pages of one call (and of one fan-out item) are one."""
    return str(unit.get("key", unit.get("id"))).split("@")[0]


class _Rows:
    """Row keys of each agent call's result, computed once per call and only for tools that need them."""

    def __init__(self, calls: Sequence[CallLike]) -> None:
        self.calls = calls
        self.keys: dict[tuple[int, tuple[str, ...]], set[str]] = {}

    def of(self, position: int, ignore: tuple[str, ...] = ()) -> set[str]:
        if (position, ignore) not in self.keys:
            result = getattr(self.calls[position], "structured", None)
            rows = result.get("rows") if isinstance(result, Mapping) else None
            keys = {row_key(r, ignore) for r in rows} if isinstance(rows, list) else set()
            self.keys[position, ignore] = keys
        return self.keys[position, ignore]


def _by_rows(
    units: Sequence[GoldUnit], evidence: Mapping[str, Any], calls: Sequence[CallLike], rows: _Rows
) -> tuple[float, list[int]]:
    """How much of what a gold call's references read (its rows, its total, its record) the agent fetched, by
    any arguments, as a share; and the agent calls that fetched it."""
    tool = units[0].get("tool")
    usable = [p for p, c in enumerate(calls) if c.tool == tool and not c.is_error]
    used: list[int] = []
    parts = found = 0
    wanted = evidence.get("rows")
    ignore = tuple(str(f) for f in evidence.get("ignore") or ())
    if isinstance(wanted, list) and wanted:
        missing = set(wanted)
        for p in usable:
            got = missing & rows.of(p, ignore)
            if got:
                used.append(p)
                missing -= got
        parts += len(wanted)
        found += len(wanted) - len(missing)
    record = evidence.get("record")
    if record:
        parts += 1
        structured = [(p, getattr(calls[p], "structured", None) or {}) for p in usable]
        hit = next(
            (p for p, r in structured if isinstance(r, Mapping) and row_key(r.get("record")) == record), None
        )
        if hit is not None:
            found += 1
            used.append(hit)
    if evidence.get("total"):
        parts += 1
        total = units[0].get("total_count")
        hit = next(
            (
                p
                for p in usable
                if _same(units[0].get("tool"), units[0].get("args"), _names(units[0]), calls[p])
                and (getattr(calls[p], "structured", None) or {}).get("total_count") == total
            ),
            None,
        )
        if hit is not None:
            found += 1
            used.append(hit)
    return (found / parts if parts else 1.0), sorted(set(used))


def _paging(units: Sequence[GoldUnit]) -> set[str]:
    paging = units[0].get("paging") if units else None
    return set(paging.get("params") or []) if isinstance(paging, Mapping) else set()


def _same_request(a: CallLike, b: CallLike, paging: set[str]) -> bool:
    """The same tool with the same arguments apart from paging: pages of one request."""
    if a.tool != b.tool:
        return False

    def strip(args: Any) -> dict[str, Any]:
        return {k: v for k, v in (args or {}).items() if k not in paging}

    return strip(a.arguments) == strip(b.arguments)


def score_action(
    gold_steps: Sequence[Sequence[GoldUnit]],
    calls: Sequence[CallLike],
    turns: Sequence[Sequence[int]],
    infos: Mapping[str, CallInfo] | None = None,
) -> ActionScore:
    """ACTION for one episode: the fixture's gold steps (and its per-call `calls` information: what each call's
    references read, who reads it), the session's call log and the call indices of each model turn."""
    total = n_gold_calls(gold_steps)
    if not calls:
        corr = 1.0 if total == 0 else 0.0
        empty = float(total == 0)
        return ActionScore(corr, empty, empty, empty, corr, [], corr)
    infos = infos or {}
    groups: dict[str, list[GoldUnit]] = {}
    for step in gold_steps:
        for unit in step:
            groups.setdefault(_group_key(unit), []).append(unit)

    def evidence_of(key: str, units: Sequence[GoldUnit]) -> Mapping[str, Any] | None:
        info = infos.get(str(units[0].get("id")))
        evidence = info.get("evidence") if info is not None and "[" not in key else None
        return evidence if isinstance(evidence, Mapping) and evidence.get("rows") != "all" else None

    by_rows = {k for k, units in groups.items() if evidence_of(k, units) is not None}
    args_steps = [[u for u in step if _group_key(u) not in by_rows] for step in gold_steps]
    by_args = dict(match_calls(args_steps, calls))  # unit key -> agent call index, argument matching
    position = {c.index: p for p, c in enumerate(calls)}
    rows = _Rows(calls)
    covering: dict[str, list[int]] = {}  # group -> positions of the agent calls that covered it
    credit: dict[str, float] = {}  # group -> the share of it the agent fetched
    matched: list[tuple[str, int]] = []
    for key, units in groups.items():
        evidence = evidence_of(key, units)
        if evidence is not None:
            share, used = _by_rows(units, evidence, calls, rows)
        else:
            hits = [by_args.get(str(u.get("key", u.get("id")))) for u in units]
            used = [position[h] for h in hits if h is not None]
            share = len(used) / len(units)
        credit[key] = share
        covering[key] = sorted(set(used))
        if used:
            matched.append((key, calls[min(used)].index))
    # a call whose values only feed later calls is credited when every call it feeds is: the agent held them
    for key in reversed(list(groups)):
        info = infos.get(str(groups[key][0].get("id")))
        if credit[key] == 1.0 or info is None or info.get("answer") or "[" in key:
            continue
        feeds = [k for k in groups if str(groups[k][0].get("id")) in (info.get("feeds") or [])]
        if feeds and all(credit[k] == 1.0 for k in feeds):
            credit[key] = 1.0
            covering[key] = []
    credited = {k for k, share in credit.items() if share == 1.0}
    corr = sum(credit.values()) / len(groups) if groups else 1.0
    cr = min(1.0, total / len(calls))
    turn_of = _turn_lookup(turns)
    parallel = [step for step in gold_steps if len({_group_key(u) for u in step}) >= 2]
    together = 0
    for step in parallel:
        keys = list(dict.fromkeys(_group_key(u) for u in step))
        if not all(k in credited for k in keys):
            continue
        # a call listed in no turn is a turn of its own: key it apart from every numbered turn; a paged call is
        # in every turn that sent one of its pages (the rows read may sit on a later page than the one sent
        # together with the step's other calls)
        options = [
            {
                turn_of.get(c.index, -1 - c.index)
                for p in covering[k]
                for c in calls
                if _same_request(c, calls[p], _paging(groups[k]))
            }
            for k in keys
            if covering[k]
        ]
        together += len(options) < 2 or bool(set.intersection(*options))
    mpc = together / len(parallel) if parallel else 1.0
    eff = (cr + mpc) / 2
    return ActionScore(
        corr=corr,
        cr=cr,
        mpc=mpc,
        eff=eff,
        action=(corr + eff) / 2,
        matched=matched,
        action_gated=(corr + corr * eff) / 2,
    )


def n_gold_calls(gold_steps: Sequence[Sequence[GoldUnit]]) -> int:
    return sum(len(step) for step in gold_steps)

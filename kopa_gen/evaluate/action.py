"""The ACTION axis: how closely the agent's tool calls follow the gold chain. Reported for every episode, never a
reward (docs/evaluation.md has the definitions with worked examples).

    ACTION = (Corr + Corr × Eff) / 2,   Eff = (CR + MPC) / 2

Efficiency counts only as far as the calls were correct: no correct call, no ACTION at all.

Gold units are the fixture's executed gold calls (a fan-out item and a page each count as one), taken in chain
order. A unit is matched by the earliest agent call not yet taken that did not return an error, has the unit's
tool (or one of its alternatives' tools) and equal values on its compared arguments (the fixture's `compare`:
the task's `compare` list, else every argument; paging arguments are never compared as values). A unit of a tool
that pages is matched by the rows it covers instead: the agent's successful calls with the same compared
arguments must together have read every row of the gold page ([start, end) from page, page size and total),
so a larger page may cover several gold pages and two page-1 calls never cover page 2.

Corr  matched units / gold units.
CR    min(1, gold units / agent calls), every agent call counted (errors included); 0 without calls.
MPC   over gold steps of two or more units: the share whose units were all matched by calls of one model turn;
      1.0 when there is no such step, 0 without calls.

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
    """The ACTION axis of one episode; `matched` pairs each matched gold unit key with an agent call index."""

    corr: float
    cr: float
    mpc: float
    eff: float
    action: float
    matched: list[tuple[str, int]]


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


def covered_rows(result: Any) -> tuple[int, int] | None:
    """The rows [start, end) a list result's page holds, from its page, page size and total; None otherwise."""
    if not isinstance(result, Mapping):
        return None
    page, size, total = result.get("page"), result.get("page_size"), result.get("total_count")
    if not (isinstance(page, int) and isinstance(size, int) and isinstance(total, int)):
        return None
    start = (page - 1) * size
    return min(start, total), min(start + size, total)


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


def score_action(
    gold_steps: Sequence[Sequence[GoldUnit]], calls: Sequence[CallLike], turns: Sequence[Sequence[int]]
) -> ActionScore:
    """ACTION for one episode: the fixture's gold steps, the session's call log and the call indices of each
    model turn."""
    total = n_gold_calls(gold_steps)
    if not calls:
        corr = 1.0 if total == 0 else 0.0
        return ActionScore(corr, float(total == 0), float(total == 0), float(total == 0), corr, [])
    matched = match_calls(gold_steps, calls)
    corr = len(matched) / total if total else 1.0
    cr = min(1.0, total / len(calls))
    by_key = dict(matched)
    turn_of = _turn_lookup(turns)
    parallel = [step for step in gold_steps if len(step) >= 2]
    together = 0
    for step in parallel:
        indices = [by_key.get(str(u.get("key", u.get("id")))) for u in step]
        if any(index is None for index in indices):
            continue
        # A call listed in no turn is a turn of its own: key it apart from every numbered turn.
        together += len({turn_of.get(i, -1 - i) for i in indices if i is not None}) == 1
    mpc = together / len(parallel) if parallel else 1.0
    eff = (cr + mpc) / 2
    return ActionScore(corr=corr, cr=cr, mpc=mpc, eff=eff, action=(corr + corr * eff) / 2, matched=matched)


def n_gold_calls(gold_steps: Sequence[Sequence[GoldUnit]]) -> int:
    return sum(len(step) for step in gold_steps)

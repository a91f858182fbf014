"""The ACTION axis: how closely the agent's tool calls follow the gold chain. Never a reward on its own.

    ACTION = (Corr + Eff) / 2,   Eff = (CR + MPC) / 2

The paper names the three parts without defining them; these are our definitions (docs/evaluation.md has
worked examples).

Corr (call correctness)
    matched gold calls / gold calls. Gold calls are taken in chain order (step by step, in order within a
    step); each takes the earliest agent call not yet taken that did not return an error, has the same tool
    and equal values on the gold call's compared arguments (the task's `compare` list; default: every gold
    argument). Greedy and one-to-one: an agent call matches at most one gold call. Arguments the gold call
    does not compare are ignored, so extra optional arguments are free.
CR (call-count ratio)
    min(1, gold calls / agent calls), counting every agent call, errors included. No agent calls: 1.0 when
    the gold has none, else 0.0.
MPC (matched parallel calls)
    Over gold steps with two or more calls: the share whose calls were all matched and whose matched agent
    calls all came from one model turn. 1.0 when the gold has no such step. An agent call that appears in no
    turn counts as a turn of its own.

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
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kopa_gen.spec.task import Task

GoldCall = Mapping[str, Any]
"""One gold call as written in a fixture: {id, tool, args (resolved), ...}."""

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
    """The ACTION axis of one episode; `matched` pairs each matched gold call id with the agent call index."""

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


def _argument(arguments: Mapping[Any, Any], name: str) -> Hashable:
    return canonical(arguments.get(name))


def _call_matches(gold: GoldCall, names: Sequence[str], call: CallLike) -> bool:
    if call.is_error or call.tool != gold.get("tool"):
        return False
    gold_args = gold.get("args")
    gold_args = gold_args if isinstance(gold_args, Mapping) else {}
    arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
    try:
        return all(_argument(gold_args, name) == _argument(arguments, name) for name in names)
    except RecursionError:  # absurdly nested agent arguments: no match rather than a crash
        return False


def _compared_names(gold: GoldCall, compared: Mapping[str, Sequence[str]] | None) -> Sequence[str]:
    call_id = str(gold.get("id"))
    if compared is not None and call_id in compared:
        return compared[call_id]
    gold_args = gold.get("args")
    return [str(k) for k in gold_args] if isinstance(gold_args, Mapping) else []


def match_calls(
    gold_steps: Sequence[Sequence[GoldCall]],
    compared: Mapping[str, Sequence[str]] | None,
    calls: Sequence[CallLike],
) -> list[tuple[str, int]]:
    """Greedy one-to-one matching of gold calls (chain order) to agent calls (call order); see Corr above."""
    taken: set[int] = set()
    matched: list[tuple[str, int]] = []
    for step in gold_steps:
        for gold in step:
            names = _compared_names(gold, compared)
            for position, call in enumerate(calls):
                if position not in taken and _call_matches(gold, names, call):
                    taken.add(position)
                    matched.append((str(gold.get("id")), call.index))
                    break
    return matched


def _turn_lookup(turns: Sequence[Sequence[int]]) -> dict[int, int]:
    """Agent call index -> the first turn that lists it."""
    lookup: dict[int, int] = {}
    for number, turn in enumerate(turns):
        for index in turn:
            lookup.setdefault(index, number)
    return lookup


def score_action(
    gold_steps: Sequence[Sequence[GoldCall]],
    compared: Mapping[str, Sequence[str]] | None,
    calls: Sequence[CallLike],
    turns: Sequence[Sequence[int]],
) -> ActionScore:
    """ACTION for one episode: gold steps from the fixture, the task's compared arguments per gold call id
    (None: compare every gold argument), the session's call log and the call indices of each model turn."""
    gold_total = sum(len(step) for step in gold_steps)
    matched = match_calls(gold_steps, compared, calls)
    corr = len(matched) / gold_total if gold_total else 1.0

    # No agent calls: 1.0 only if the gold has none either.
    cr = min(1.0, gold_total / len(calls)) if calls else float(gold_total == 0)

    by_gold = dict(matched)
    turn_of = _turn_lookup(turns)
    parallel = [step for step in gold_steps if len(step) >= 2]
    together = 0
    for step in parallel:
        indices = [by_gold.get(str(gold.get("id"))) for gold in step]
        if any(index is None for index in indices):
            continue
        # A call listed in no turn is a turn of its own: key it apart from every numbered turn.
        turn_keys = {turn_of.get(index, -1 - index) for index in indices if index is not None}
        together += len(turn_keys) == 1
    mpc = together / len(parallel) if parallel else 1.0
    if not calls and n_gold_calls(gold_steps):
        mpc = 0.0  # nothing done earns no efficiency credit: doing nothing scores ACTION 0

    eff = (cr + mpc) / 2
    return ActionScore(corr=corr, cr=cr, mpc=mpc, eff=eff, action=(corr + eff) / 2, matched=matched)


def n_gold_calls(gold_steps: Sequence[Sequence[GoldCall]]) -> int:
    return sum(len(step) for step in gold_steps)


def compared_arguments(task: Task) -> dict[str, list[str]]:
    """The `compare` lists a task spec sets, by gold call id (calls without one compare every argument)."""
    return {
        call.id: list(call.compare) for step in task.gold for call in step.calls if call.compare is not None
    }

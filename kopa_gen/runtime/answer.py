"""Values from the gold results: one reference (`From`, with its `with` references), a text built from several
(`Template`), or several combined (`Combine`: a list, arithmetic, or an argmax / argmin). The build
(fixtures), the reference policies and EDGE all call these, so the answer a fixture records is the answer the
oracle gives; `answer_pool` is what a grader weighs a stated answer against."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from kopa_gen.language.functions import measure, to_text
from kopa_gen.language.task import Combine, From, Template, answer_sources
from kopa_gen.runtime.paths import PathError, evaluate, plain_number, pool

__all__ = [
    "answer_pool",
    "answer_sources",
    "arg_value",
    "derive_answer",
    "reference_pool",
    "render_template",
    "source_value",
]

Results = Mapping[str, Any]


def _base(results: Results, source: From, item: Any = None) -> Any:
    if source.call == "each":
        return item
    if source.call not in results:
        raise PathError(f"no result for call {source.call!r}")
    return results[source.call]


def _env(results: Results, source: From, item: Any) -> dict[str, Any]:
    return {name: source_value(results, ref, item) for name, ref in source.with_.items()}


def source_value(results: Results, source: From, item: Any = None) -> Any:
    """One reference's value: its path evaluated against its call's result (`each`: the fan-out item), its `with`
    references first. A PathError when a call has no result or the path does not fit."""
    return evaluate(_base(results, source, item), source.path, _env(results, source, item))


def reference_pool(results: Results, source: From, item: Any = None) -> list[Any]:
    """The candidates one reference chose its value from (kopa_gen.runtime.paths.pool). A list result's
    `total_count` competes with the number of rows on the page (what a reader of the first page would count)."""
    try:
        base = _base(results, source, item)
        found = pool(base, source.path, _env(results, source, item))
    except PathError:
        return []
    if source.path.strip() == "total_count" and isinstance(base, dict) and isinstance(base.get("rows"), list):
        seen = len(base["rows"])
        found += [seen] if seen not in found else []
    return found


def render_template(results: Results, template: Template, item: Any = None) -> str:
    """The template with each {name} replaced by its reference's value as text."""
    values = {name: to_text(source_value(results, ref, item)) for name, ref in template.with_.items()}
    try:
        return template.template.format_map(values)
    except (KeyError, ValueError, IndexError) as exc:
        raise PathError(f"template {template.template!r}: {exc}") from exc


def arg_value(results: Results, value: Any, item: Any = None) -> Any:
    """An argument as a gold call sends it: a literal as it is, a reference or a template resolved (PathError when
    it cannot be)."""
    if isinstance(value, From):
        return source_value(results, value, item)
    if isinstance(value, Template):
        return render_template(results, value, item)
    return value


def derive_answer(results: Results, answer_from: From | Combine) -> Any:
    """The answer value: a From's value; for a Combine, the values in order (list), or the arithmetic its op
    names (sum, diff, absdiff, product, ratio, percent, change, avg, max, min; rounded half up to `digits` when
    given), or the label of the largest / smallest value (argmax / argmin; a tie is an error unless the task
    declares `tie_break`). Raises PathError when a path does not fit, a divisor is zero or a tie has no rule."""
    if isinstance(answer_from, From):
        return source_value(results, answer_from)
    values = [source_value(results, source) for source in answer_from.of]
    op = answer_from.op
    if op == "list":
        return values
    numbers = [measure(v) for v in values]
    if op in ("argmax", "argmin"):
        best = (max if op == "argmax" else min)(numbers)
        at = [i for i, n in enumerate(numbers) if n == best]
        assert answer_from.labels is not None  # the spec requires labels for argmax / argmin
        if len(at) > 1 and answer_from.tie_break is None:
            tied = ", ".join(to_text(source_value(results, answer_from.labels[i])) for i in at)
            raise PathError(
                f"{op}: a tie at {to_text(best)} between {tied}; no single answer (declare `tie_break: first` "
                "or `last` and say in the query how a tie is decided)"
            )
        return source_value(results, answer_from.labels[at[-1] if answer_from.tie_break == "last" else at[0]])
    result = _arithmetic(op, numbers)
    if answer_from.digits is not None:
        result = result.quantize(Decimal(1).scaleb(-answer_from.digits), rounding=ROUND_HALF_UP)
    return plain_number(result)


def _arithmetic(op: str, numbers: list[Decimal]) -> Decimal:
    first, second = numbers[0], numbers[-1]
    if op in ("ratio", "percent", "change") and second == 0:
        raise PathError(f"op {op}: the second value is 0; no ratio")
    match op:
        case "sum":
            return sum(numbers, Decimal(0))
        case "diff":
            return first - second
        case "absdiff":
            return abs(first - second)
        case "product":
            out = Decimal(1)
            for n in numbers:
                out *= n
            return out
        case "ratio":
            return first / second
        case "percent":
            return first / second * 100
        case "change":
            return (first - second) / second * 100
        case "avg":
            return sum(numbers, Decimal(0)) / len(numbers)
        case "max":
            return max(numbers)
        case "min":
            return min(numbers)
    raise AssertionError(f"op {op} is not arithmetic")


def answer_pool(results: Results, answer_from: From | Combine) -> list[Any]:
    """Every value the chain offered where the answer was chosen, the answer included, distinct and in order:
    the rows a path picked from, every label of an argmax, each combined value and the combination."""
    out: list[Any] = []

    def add(values: list[Any]) -> None:
        out.extend(v for v in values if v not in out)

    if isinstance(answer_from, From):
        add(reference_pool(results, answer_from))
        return out
    chosen_among = answer_from.labels if answer_from.labels is not None else answer_from.of
    for source in chosen_among:
        add(reference_pool(results, source))
    if answer_from.op != "list":
        with contextlib.suppress(PathError):
            add([derive_answer(results, answer_from)])
    return out

"""Values from the gold results: one reference (`From`, with its `with` references), a text built from several
(`Template`), or several combined (`Combine`: list, sum, diff, absdiff, max, min, argmax, argmin). The build
(fixtures), the reference policies and EDGE all call these, so the answer a fixture records is the answer the
oracle gives; `answer_pool` is what a grader weighs a stated answer against."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, assert_never

from kopa_gen.language.functions import to_text
from kopa_gen.language.task import Combine, From, Template, answer_sources
from kopa_gen.runtime.paths import PathError, api_number, evaluate, plain_number, pool

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
    """The answer value: a From's value; for a Combine, the values in order (list), their sum, the first minus
    the second (diff) or its absolute value (absdiff), the largest / smallest (max / min), or the label of the
    largest / smallest value (argmax / argmin; a tie goes to the first). Raises PathError when a path does not
    fit."""
    if isinstance(answer_from, From):
        return source_value(results, answer_from)
    values = [source_value(results, source) for source in answer_from.of]
    match answer_from.op:
        case "list":
            return values
        case "sum":
            return plain_number(sum((api_number(v) for v in values), Decimal(0)))
        case "diff" | "absdiff":
            first, second = (api_number(v) for v in values)
            diff = first - second
            return plain_number(abs(diff) if answer_from.op == "absdiff" else diff)
        case "max" | "min":
            numbers = [api_number(v) for v in values]
            return plain_number(max(numbers) if answer_from.op == "max" else min(numbers))
        case "argmax" | "argmin":
            numbers = [api_number(v) for v in values]
            pick = max if answer_from.op == "argmax" else min
            best = pick(range(len(numbers)), key=numbers.__getitem__)
            assert answer_from.labels is not None  # the spec requires labels for argmax / argmin
            return source_value(results, answer_from.labels[best])
        case _:
            assert_never(answer_from.op)


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

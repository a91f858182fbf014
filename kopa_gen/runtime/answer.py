"""The gold answer's value, derived from the gold results by a task's `answer_from`: one path (`From`), or several
combined (`Combine`: list, sum, diff, argmax, argmin). The build (fixtures) and the replay policies both call
`derive_answer`, so the answer a fixture records is the answer the oracle gives."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, assert_never

from kopa_gen.runtime.paths import PathError, api_number, evaluate, plain_number
from kopa_gen.spec.task import Combine, From, answer_sources

__all__ = ["answer_sources", "derive_answer", "source_value"]


def source_value(results: Mapping[str, Any], source: From) -> Any:
    """One source's value: its path evaluated against its call's result (a PathError when the call has none)."""
    if source.call not in results:
        raise PathError(f"no result for call {source.call!r}")
    return evaluate(results[source.call], source.path)


def derive_answer(results: Mapping[str, Any], answer_from: From | Combine) -> Any:
    """The answer value: a From's value; for a Combine, the values in order (list), their sum, the first minus
    the second (diff; numbers read like paths read them, integral results as int), or the label of the largest /
    smallest value (argmax / argmin; a tie goes to the first). Raises PathError when a path does not fit."""
    if isinstance(answer_from, From):
        return source_value(results, answer_from)
    values = [source_value(results, source) for source in answer_from.of]
    match answer_from.op:
        case "list":
            return values
        case "sum":
            return plain_number(sum((api_number(v) for v in values), Decimal(0)))
        case "diff":
            first, second = (api_number(v) for v in values)
            return plain_number(first - second)
        case "argmax" | "argmin":
            numbers = [api_number(v) for v in values]
            pick = max if answer_from.op == "argmax" else min
            best = pick(range(len(numbers)), key=numbers.__getitem__)
            assert answer_from.labels is not None  # the spec requires labels for argmax / argmin
            return answer_from.labels[best]
        case _:
            assert_never(answer_from.op)

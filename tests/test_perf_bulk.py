"""The indexed search over a bulk file (kopa_gen/client/bulk.py) finds exactly the rows that testing every row
against the filters finds, in file order, for every file operation's local filters and a prefix filter."""

from __future__ import annotations

import random

import pytest

from kopa_gen.client.bulk import BulkRows, matches
from kopa_gen.envelopes.base import JSON
from kopa_gen.language.kopa import Filter
from kopa_gen.project import Project

from .conftest import repository_project


def file_ops() -> list[tuple[str, str]]:
    return [
        (p.id, op.operation_id)
        for p in repository_project().platforms
        for op in p.operations
        if op.kopa.shape == "file" and op.kopa.local_filters
    ]


def _rows(columns: list[str], n: int, rng: random.Random) -> list[JSON]:
    """Rows whose values repeat, nest in one another, carry spaces and are sometimes empty."""
    words = ["삼성", "삼성전자", "전자", "현대", " 현대", "A1", "A12", "", "0059", "005930", "00126380"]
    return [
        {c: rng.choice(words) + rng.choice(["", "", str(rng.randint(0, 9))]) for c in columns}
        for _ in range(n)
    ]


@pytest.mark.parametrize(("platform_id", "operation_id"), file_ops())
def test_indexed_search_equals_a_scan(project: Project, platform_id: str, operation_id: str) -> None:
    op = project.platform(platform_id).operation(operation_id)
    filters = list(op.kopa.local_filters)
    columns = sorted({f.column for f in filters})
    filters.append(Filter(param="_prefix", column=columns[0], match="prefix"))
    rng = random.Random(3)
    rows = _rows(columns, 400, rng)
    bulk = BulkRows(rows)
    bulk.prepare(filters)
    values = [*sorted({str(r[c]) for r in rows for c in columns}), "없는값", "삼", "1", " 현대 ", "A"]
    searched = 0
    for _ in range(600):
        params = {f.param: rng.choice(values) for f in rng.sample(filters, rng.randint(0, 2))}
        want = [r for r in rows if matches(r, filters, params)]
        got = bulk.search(filters, params)
        assert [id(r) for r in got] == [id(r) for r in want], params
        searched += bool(want)
    assert searched > 100  # most searches found something: the comparison is not between empty lists
    again = {filters[0].param: values[3]}
    assert bulk.search(filters, again) == bulk.search(filters, again)  # a remembered search answers the same

"""Records that cross packages are validated at the reader's edge: every committed fixture has the shape the
readers expect, and a fixture of another shape fails naming the file and the field."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.language.records import RecordError, check_fixture
from tests.conftest import ROOT, repository_project


def test_every_committed_fixture_has_the_record_shape() -> None:
    files = sorted((ROOT / "generated" / "fixtures").glob("*/*.json"))
    assert len(files) == len(repository_project().tasks)
    for path in files:
        check_fixture(json.loads(path.read_text(encoding="utf-8")), path)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.pop("answer_pool"), "answer_pool"),
        (lambda d: d["stats"].update(turns="two"), "stats.turns"),
        (lambda d: d["calls"][next(iter(d["calls"]))].update(reads=[]), "calls."),
        (lambda d: d["steps"][0][0].pop("result_sha256"), "steps.0.0.result_sha256"),
    ],
)
def test_a_fixture_of_another_shape_fails_at_the_reader(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], field: str
) -> None:
    project = repository_project()
    _, task = project.tasks[0]
    data = json.loads((project.fixtures_dir / task.domain / f"{task.id}.json").read_text(encoding="utf-8"))
    change(data)
    folder = tmp_path / "fixtures" / task.domain
    folder.mkdir(parents=True)
    (folder / f"{task.id}.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    moved = dataclasses.replace(project, fixtures=tmp_path / "fixtures")
    with pytest.raises(RecordError, match=rf"{task.id}\.json: fixture field {field}"):
        load_fixture(moved, task)

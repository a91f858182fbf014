"""The held-out split (specs/domains.yaml `held_out`) and the contamination audit, from the outside: the split
the repository declares, a broken declaration, what edge synth and eval do with it, and the audit of a training
set written beside the benchmark."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kopa_gen.cli import main
from kopa_gen.cli.run import split_of
from kopa_gen.language.diagnostics import SpecError
from kopa_gen.project import load_project
from tests.conftest import repository_project
from tests.toyspec import write_project


def test_the_repository_declares_a_held_out_split_of_known_platforms() -> None:
    project = repository_project()
    assert project.held_out and set(project.held_out) <= {p.id for p in project.platforms}
    held = split_of(project, "held-out")
    seen = split_of(project, "seen")
    assert len(held.tasks) + len(seen.tasks) == len(project.tasks)
    for _, task in held.tasks:
        gold = {project.platform_of(c.tool).id for c in task.calls()} | {
            project.platform_of(t).id for t in task.tools or []
        }
        assert gold & set(project.held_out)
    for _, task in seen.tasks:
        assert not {project.platform_of(c.tool).id for c in task.calls()} & set(project.held_out)


def test_an_unknown_held_out_platform_is_an_error_naming_the_place(tmp_path: Path) -> None:
    write_project(tmp_path)
    domains = {"domains": [{"id": "finance", "name": "금융"}], "held_out": {"platforms": ["toy", "tago"]}}
    (tmp_path / "specs" / "domains.yaml").write_text(yaml.safe_dump(domains, allow_unicode=True), "utf-8")
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    (problem,) = [d.render() for d in info.value.diagnostics]
    assert problem == "specs/domains.yaml: held_out.platforms.1: error: unknown platform 'tago'; known: toy"


def test_edge_synth_withholds_the_split_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    import kopa_gen.edge.commands as commands

    seen: list[tuple[str, ...]] = []

    async def capture(project: Any, graph: Path, out: Path, config: Any, *rest: Any) -> int:
        seen.append(config.exclude)
        return 0

    monkeypatch.setattr(commands, "edge_synth", capture)
    held = repository_project().held_out
    assert main(["edge", "synth", "--graph", "g.json", "--out", "o"]) == 0
    assert main(["edge", "synth", "--graph", "g.json", "--out", "o", "--exclude-platforms", "tago"]) == 0
    assert main(["edge", "synth", "--graph", "g.json", "--out", "o", "--include-held-out"]) == 0
    assert seen == [held, (*held, "tago"), ()]


def _training_set(tmp_path: Path) -> Path:
    """Two benchmark tasks copied as a training set: one with its query kept word for word, one reworded."""
    project = repository_project()
    (file_a, a), (file_b, b) = project.tasks[0], project.tasks[-1]
    out = tmp_path / "set"
    for file, task, query in (
        (file_a, a, a.query),
        (file_b, b, "완전히 다른 질문입니다. " + "가나다라" * 10),
    ):
        data = yaml.safe_load((project.root / file).read_text("utf-8"))
        data["id"] = f"{task.id.split('-')[0]}-9{task.id.split('-')[1][1:]}"
        data["query"] = query
        folder = out / "tasks" / task.domain
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{data['id']}.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    return out


def test_the_audit_counts_query_tool_and_edge_overlap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    project = repository_project()
    (_, a), (_, b) = project.tasks[0], project.tasks[-1]
    training = _training_set(tmp_path)
    assert main(["audit", "contamination", "--task-dir", str(training), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["training_tasks"] == 2 and doc["benchmark_tasks"] == len(project.tasks)
    assert [a.id, a.id.split("-")[0] + "-9" + a.id.split("-")[1][1:]] in doc["queries"]["exact"]
    assert len(doc["queries"]["exact"]) == 1
    gold = {c.tool for _, t in project.tasks for c in t.calls()}
    copied = {c.tool for c in a.calls()} | {c.tool for c in b.calls()}
    assert doc["tools"]["gold"] == len(gold) and doc["tools"]["seen"] == len(copied & gold)
    # each copied task's own hand-offs are seen; the benchmark has at least those occurrences
    assert doc["edges"]["seen"] >= 1 and doc["edges"]["seen"] <= doc["edges"]["occurrences"]
    shutil.rmtree(training)

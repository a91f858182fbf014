"""`kopa-gen task show`: one page per task, from the outside (the command line on the toy project and on a
benchmark task read from the specs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kopa_gen.cli import main
from tests.conftest import repository_project
from tests.test_lint import BASE
from tests.toyspec import write_project


def _toy(tmp_path: Path, task: dict[str, object]) -> None:
    write_project(tmp_path)
    folder = tmp_path / "specs" / "tasks" / "finance"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fin-001.yaml").write_text(yaml.safe_dump(task, allow_unicode=True, sort_keys=False), "utf-8")
    assert main(["--root", str(tmp_path), "build"]) == 0


def test_the_page_shows_the_chain_the_answer_its_pool_and_every_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _toy(tmp_path, BASE)
    capsys.readouterr()
    assert main(["--root", str(tmp_path), "task", "show", "fin-001"]) == 0
    page = capsys.readouterr().out
    assert "query: 사과가 들어간 과일 가운데 가장 비싼 과일의 가격은?" in page
    assert "  fruit = toy_list_fruits\n    name = 사과\n" in page
    # the toy's 사과 search finds 사과 (1,200) and 청사과 (1,500)
    assert "→ 2 rows read of total_count 2" in page
    assert "[0] code=F01 · name=사과 · price=1200" in page
    assert '"value": 1500' in page and "chosen among" in page
    assert "oracle 1 · do-nothing 0" in page and "pool-guess" in page


def test_a_broken_draft_is_shown_with_its_problems_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _toy(tmp_path, BASE)
    drafts = tmp_path / "drafts" / "tasks" / "finance"
    drafts.mkdir(parents=True)
    wrong = {**BASE, "answer": {"kind": "number", "value": 1200, "unit": "원"}}
    (drafts / "fin-001.yaml").write_text(yaml.safe_dump(wrong, allow_unicode=True, sort_keys=False), "utf-8")
    capsys.readouterr()
    code = main(["--root", str(tmp_path), "task", "show", "fin-001", "--task-dir", str(tmp_path / "drafts")])
    page = capsys.readouterr().out
    assert code == 1
    assert "build:" in page and "error:" in page and "1500" in page


def test_a_benchmark_task_shows(capsys: pytest.CaptureFixture[str]) -> None:
    task_id = repository_project().tasks[0][1].id
    assert main(["task", "show", task_id, "--no-policies"]) == 0
    page = capsys.readouterr().out
    assert page.startswith(f"{task_id} · ") and "hand-offs" in page and "answer:" in page


def test_task_fixtures_makes_a_draft_folder_playable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _toy(tmp_path, BASE)
    drafts = tmp_path / "drafts"
    (drafts / "tasks" / "finance").mkdir(parents=True)
    wrong = {**BASE, "id": "fin-002", "answer": {"kind": "number", "value": 1200, "unit": "원"}}
    for name, spec in (("fin-001", BASE), ("fin-002", wrong)):
        text = yaml.safe_dump(spec, allow_unicode=True, sort_keys=False)
        (drafts / "tasks" / "finance" / f"{name}.yaml").write_text(text, "utf-8")
    root = ["--root", str(tmp_path)]
    run = [*root, "eval", "--policy", "oracle", "--task-dir", str(drafts), "--tasks", "fin-001"]
    assert main([*run, "--out", str(tmp_path / "run1")]) == 2
    assert "kopa-gen task fixtures --task-dir" in capsys.readouterr().err
    # the broken draft is reported at its file and left without a fixture; the good one is written
    assert main([*root, "task", "fixtures", "--task-dir", str(drafts)]) == 1
    out = capsys.readouterr()
    assert "fin-002.yaml" in out.err and "1 written" in out.out and "1 task(s) did not build" in out.out
    assert (drafts / "fixtures" / "finance" / "fin-001.json").exists()
    assert not (drafts / "fixtures" / "finance" / "fin-002.json").exists()
    assert main([*run, "--out", str(tmp_path / "run2")]) == 0

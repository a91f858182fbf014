"""`kopa-gen score`: one candidate answer (and call log) for one task, scored as eval scores it, printed as JSON;
bad input is one line on stderr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.cli import main
from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld


def score(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(["score", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def gold_calls(project: Project, task_id: str, tmp_path: Path) -> Path:
    """The task's gold calls as a call log file (what a perfect agent sent), one turn per gold step."""
    task = next(t for _, t in project.tasks if t.id == task_id)
    steps = load_fixture(project, task)["steps"]
    calls = [{"tool": u["tool"], "arguments": u["args"]} for step in steps for u in step]
    turns, k = [], 0
    for step in steps:
        turns.append(list(range(k, k + len(step))))
        k += len(step)
    path = tmp_path / f"{task_id}.json"
    path.write_text(json.dumps({"calls": calls, "turns": turns}, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_right_answer_with_the_gold_calls_scores_every_axis(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = next(t for _, t in project.tasks if {"RESPONSE", "ENVIRONMENT"} <= set(t.reward))
    assert task.answer is not None
    value = load_fixture(project, task)["answer_value"]
    code, verdict, _ = score(
        capsys, task.id, "--answer", f"정답: {value}", "--calls", str(gold_calls(project, task.id, tmp_path))
    )
    assert code == 0 and verdict["reward"] is True
    assert verdict["environment"] is True and verdict["action"]["action"] == 1.0
    assert verdict["state"] and all(entry["row"] is not None for entry in verdict["state"])


def test_a_wrong_answer_is_explained(
    project: Project, world: BuiltWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    task = next(
        t for _, t in project.tasks if t.reward == ["RESPONSE"] and t.answer and t.answer.kind == "number"
    )
    code, verdict, _ = score(capsys, task.id, "--answer", "정답: 1,444~1,446")
    assert code == 1 and verdict["reward"] is False
    assert verdict["response"]["reason"] == "states several values (a list or a range), not one"
    assert verdict["action"]["action"] == 0.0 and verdict["calls"] == []


def test_bad_input_is_one_line(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task_id = project.tasks[0][1].id
    code, _, err = score(capsys, "zzz-999", "--answer", "x")
    assert (
        code == 2
        and err.startswith("kopa-gen score: error: unknown task 'zzz-999'; known: ")
        and err.count("\n") == 1
    )
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    code, _, err = score(capsys, task_id, "--answer", "x", "--calls", str(broken))
    assert (
        code == 2
        and err
        == f"kopa-gen score: error: call log {broken} is neither JSON nor JSON Lines (line 1: Expecting property name enclosed in double quotes)\n"
    )
    code, _, err = score(capsys, task_id, "--answer", "x", "--calls", str(tmp_path / "missing.json"))
    assert (
        code == 2
        and err
        == f"kopa-gen score: error: cannot read call log {tmp_path / 'missing.json'}: No such file or directory\n"
    )
    shapeless = tmp_path / "shapeless.json"
    shapeless.write_text('{"calls": [{"name": "x"}]}', encoding="utf-8")
    code, _, err = score(capsys, task_id, "--answer", "x", "--calls", str(shapeless))
    assert code == 2 and "must hold a list of calls" in err and err.count("\n") == 1


def test_environment_reads_files_as_a_careful_reader_and_ignores_scratch(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the rows the gold writes count, text normalised (CRLF, a trailing newline); scratch files elsewhere
    are ignored; a silent agent with the right files has not finished."""
    task = next(t for _, t in project.tasks if t.reward == ["ENVIRONMENT"])
    log = json.loads(gold_calls(project, task.id, tmp_path).read_text(encoding="utf-8"))

    def writes(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            c for c in calls if project.platform_of(c["tool"]).operation(c["tool"]).kopa.effect == "write"
        ]

    first = writes(log["calls"])[0]
    text_args = [k for k, v in first["arguments"].items() if isinstance(v, str)]
    for call in writes(log["calls"]):
        for name in text_args:  # every text argument but the key gets a Windows line end
            if name != "path":
                call["arguments"][name] += "\r\n"
    log["calls"].append({**first, "arguments": {**first["arguments"], "path": "scratch/notes.txt"}})
    log["turns"].append([len(log["calls"]) - 1])
    path = tmp_path / "messy.json"
    path.write_text(json.dumps(log, ensure_ascii=False), encoding="utf-8")
    code, verdict, _ = score(
        capsys, task.id, "--answer", "작업 공간에 적어 두었습니다.", "--calls", str(path)
    )
    assert code == 0 and verdict["environment"] is True and verdict["reward"] is True
    code, verdict, _ = score(capsys, task.id, "--answer", "", "--calls", str(path))
    assert code == 1 and verdict["environment"] is True and verdict["reward"] is False
    assert verdict["reason"] == "no final message: the episode did not finish"
    for name in text_args:
        if name != "path":
            first["arguments"][name] = "0,0"
    path.write_text(json.dumps(log, ensure_ascii=False), encoding="utf-8")
    code, verdict, _ = score(capsys, task.id, "--answer", "적었습니다.", "--calls", str(path))
    assert code == 1 and verdict["environment"] is False and verdict["reward"] is False

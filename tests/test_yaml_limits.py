"""YAML that would take the machine is refused with its place, in specs, tasks and the other YAML files a command
reads: a recursive alias (was a RecursionError traceback), an alias bomb (was 51 s and a MemoryError at 6 GB),
nesting past the limit. Aliases within the limit keep working (the project's own specs use hundreds)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kopa_gen.cli import main
from kopa_gen.language.diagnostics import SpecError
from kopa_gen.language.source import MAX_DEPTH, MAX_VALUES
from kopa_gen.project import load_project
from tests.conftest import ROOT
from tests.toyspec import write_project

SPEC_FILE = "specs/platforms/toy/openapi.yaml"
BOMB = "lol0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"lol{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
)  # 9 ** 10 values from ten lines
RECURSIVE = "loop: &self [1, *self]\n"
DEEP = "deep: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"


def spec_errors(tmp_path: Path, tail: str) -> list[str]:
    write_project(tmp_path)
    path = tmp_path / SPEC_FILE
    path.write_text(path.read_text(encoding="utf-8") + tail, encoding="utf-8")
    start = time.perf_counter()
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    assert time.perf_counter() - start < 30, "refused before anything expands it"
    return [d.render() for d in info.value.diagnostics]


def test_an_alias_bomb_in_a_spec_is_refused_at_its_line(tmp_path: Path) -> None:
    (error,) = spec_errors(tmp_path, BOMB)
    lines = (tmp_path / SPEC_FILE).read_text(encoding="utf-8").splitlines()
    where = next(n for n, line in enumerate(lines, 1) if line.startswith("lol6:"))
    assert error.startswith(f"{SPEC_FILE}:{where}: lol6: error: its aliases (*name) make the file stand for ")
    assert f"more than {MAX_VALUES:,}" in error


def test_a_recursive_alias_and_deep_nesting_are_located(tmp_path: Path) -> None:
    (error,) = spec_errors(tmp_path, RECURSIVE)
    assert ": loop: error: a YAML alias makes this value contain itself" in error
    (error,) = spec_errors(tmp_path, DEEP)
    assert f"error: nested more than {MAX_DEPTH} levels deep" in error and ": deep[0][0]" in error


def test_aliases_within_the_limit_still_load(tmp_path: Path) -> None:
    write_project(tmp_path)
    path = tmp_path / SPEC_FILE
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "x-shared: &shared {a: 1}\nx-again: *shared\n", encoding="utf-8")
    assert load_project(tmp_path).platforms


def test_a_task_file_and_a_corpus_given_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path)
    task = project / "specs" / "tasks" / "toy" / "bomb.yaml"
    task.parent.mkdir(parents=True, exist_ok=True)
    task.write_text(BOMB, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_project(project)
    assert any("bomb.yaml:" in d.render() and "more than" in d.render() for d in info.value.diagnostics)

    corpus = tmp_path / "corpus.yaml"
    corpus.write_text(RECURSIVE, encoding="utf-8")
    argv = ["--root", str(ROOT), "judge", "calibrate", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    assert main([*argv, "--corpus", str(corpus)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{corpus}:1: loop: error: a YAML alias makes" in err, err

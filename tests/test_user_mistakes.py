"""A user's mistake is one line and exit status 2, with the right diagnosis, never a traceback: a fault rate that is
not a share, `--out` naming a file, a folder where a run keeps a file, a run.json that is not one."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from kopa_gen.cli import main
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.project import Project
from tests.conftest import ROOT


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["--root", str(ROOT), *argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("rate", ["2", "nan", "-1", "inf", "-inf", "1.0000001", "half"])
def test_a_fault_rate_that_is_no_share(rate: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--root", str(ROOT), "sandbox", "serve", f"--faults={rate}"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1, err
    assert "argument --faults:" in err and ("from 0 to 1" in err or "not a number" in err), err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["edge", "synth", "--max-guess", "2"], "--max-guess"),
        (["edge", "graph", "--epsilon", "nan"], "--epsilon"),
        (["edge", "graph", "--fault-rate", "-0.1"], "--fault-rate"),
    ],
)
def test_an_edge_probability_that_is_no_share(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """EDGE's guess bound, exploration floor and fault rate are shares: 2 would switch the guess filter off."""
    with pytest.raises(SystemExit) as stopped:
        main(["--root", str(ROOT), *argv])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1, err
    assert f"argument {flag}:" in err and "from 0 to 1" in err, err


def test_a_line_break_in_a_wrong_argument_stays_on_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--root", str(ROOT), "build", "--no-such-option", "12345678\n", "x\r\ny"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1, err
    assert "unrecognized arguments: --no-such-option 12345678\\n x\\r\\ny" in err, err


@pytest.fixture(scope="module")
def finished(project: Project, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder of one finished episode, as an eval leaves it."""
    out = tmp_path_factory.mktemp("finished") / "run"
    config = EvalConfig(policy="oracle", out=out, tasks=["fin-003"], rollouts=1)
    assert [r["reward"] for r in asyncio.run(run_eval(project, config))] == [1.0]
    return out


EVAL = ("eval", "--policy", "oracle", "--tasks", "fin-003", "--rollouts", "1", "--out")


def test_out_naming_a_file(finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "a-file"
    afile.write_text("x", encoding="utf-8")
    code, err = run(capsys, *EVAL, str(afile))
    assert code == 2 and err.count("\n") == 1 and f"{afile} is a file, not a run folder" in err, err
    code, err = run(capsys, *EVAL, str(afile / "run"))
    assert code == 2 and err.count("\n") == 1 and f"{afile} is a file, so {afile / 'run'} cannot" in err, err
    code, err = run(capsys, "report", str(finished), "--out", str(afile))
    assert code == 2 and err.count("\n") == 1 and f"--out {afile} is a file" in err, err
    code, err = run(capsys, "report", str(finished), "--out", str(afile / "report"))
    assert code == 2 and err.count("\n") == 1 and f"--out {afile / 'report'} cannot be made" in err, err


@pytest.mark.parametrize("name", ["episodes.jsonl", "run.json", ".eval.lock"])
def test_a_folder_where_the_run_keeps_a_file(
    name: str, finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    target = out / name
    target.unlink()
    target.mkdir()
    code, err = run(capsys, *EVAL, str(out))
    assert code == 2 and err.count("\n") == 1, err
    assert f"{target} is a folder where the run keeps its {name} file" in err, err


@pytest.mark.parametrize("garbage", [b"garbage{", b"[1, 2]", b"\xff\xfe", b"[" * 100_000])
def test_a_run_json_that_is_not_one_is_not_called_older(
    garbage: bytes, finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    (out / "run.json").write_bytes(garbage)
    for argv in ((*EVAL, str(out)), ("report", str(out))):
        code, err = run(capsys, *argv)
        assert code == 2 and err.count("\n") == 1, err
        assert f"{out / 'run.json'} is not a run manifest" in err and "older" not in err, err

"""Run folders never mix or stick: one task set, one policy and one plan per folder (recorded in run.json and
enforced, naming the difference), a model endpoint that was down is a failed-infrastructure episode that a resume
retries, one writer at a time, and a torn last line of episodes.jsonl is skipped with a warning and its episode run
again."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kopa_gen.cli import default_run_folder, main
from kopa_gen.evaluate.rundir import RunFolderError, locked, public_url, read_episodes, read_manifest
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.language.settings import EndpointSettings, GenerationSettings
from kopa_gen.policies.double import ChatDouble, Fail, Reply
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT

TASKS = ["fin-001", "fin-003"]


def task_set(project: Project, folder: Path, query_suffix: str = "") -> Path:
    """A task dir holding copies of benchmark tasks (as `kopa-gen edge synth` lays one out); a suffix on the
    queries makes a different set with the same task ids."""
    for task_id in TASKS:
        spec = next(path for path, t in project.tasks if t.id == task_id)
        domain = next(t.domain for _, t in project.tasks if t.id == task_id)
        (folder / "tasks" / domain).mkdir(parents=True, exist_ok=True)
        (folder / "fixtures" / domain).mkdir(parents=True, exist_ok=True)
        text = (ROOT / spec).read_text(encoding="utf-8")
        if query_suffix:
            data = yaml.safe_load(text)
            data["query"] = f"{query_suffix} {data['query']}"
            text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
        (folder / "tasks" / domain / f"{task_id}.yaml").write_text(text, encoding="utf-8")
        shutil.copy(
            project.fixtures_dir / domain / f"{task_id}.json",
            folder / "fixtures" / domain / f"{task_id}.json",
        )
    return folder


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--root", str(ROOT), *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def oracle(out: Path, **kwargs: Any) -> EvalConfig:
    return EvalConfig(**{"policy": "oracle", "out": out, "rollouts": 1, "tasks": TASKS, **kwargs})


def test_a_task_dir_gets_its_own_default_folder() -> None:
    assert default_run_folder("oracle", None) == Path("runs/oracle")
    assert default_run_folder("oracle", "runs/edge/tasks") == Path("runs/oracle-edge")
    assert default_run_folder("qwen", "/data/sets/fan-v2") == Path("runs/qwen-fan-v2")


def test_a_synthesized_set_runs_in_its_own_folder_with_its_patterns(
    project: Project,
    world: BuiltWorld,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kopa_gen.evaluate.report import RunData, render_report

    synthesized = task_set(project, tmp_path / "edge" / "tasks")
    patterns = {"fin-001": {"pattern": "seq"}, "fin-003": {"pattern": "fan"}}
    (synthesized / "synth.json").write_text(json.dumps(patterns), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(
        capsys, "eval", "--policy", "oracle", "--task-dir", str(synthesized), "--rollouts", "1"
    )
    assert code == 0 and "episodes: runs/oracle-edge/episodes.jsonl" in out
    run = json.loads((tmp_path / "runs/oracle-edge/run.json").read_text(encoding="utf-8"))
    assert run["task_set"]["kind"] == "task-dir" and run["task_set"]["path"] == str(synthesized.resolve())
    records = read_episodes(tmp_path / "runs/oracle-edge/episodes.jsonl").records
    assert sorted((r["task"], r["pattern"]) for r in records) == [("fin-001", "seq"), ("fin-003", "fan")]
    html = render_report({"edge": RunData(records, read_manifest(tmp_path / "runs/oracle-edge"))}).html
    assert 'aria-label="pass@1 by pattern"' in html and "task dir " in html


def test_run_json_records_what_ran(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    asyncio.run(run_eval(project, oracle(tmp_path / "run", seeds=[0, 1])))
    run = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert run["task_set"]["kind"] == "benchmark" and len(run["task_set"]["hash"]) == 64
    assert sorted(run["tasks"]) == TASKS and all(len(h) == 64 for h in run["tasks"].values())
    assert (run["policy"], run["seeds"], run["rollouts"]) == ("oracle", [0, 1], 1)
    assert run["code_versions"][0].startswith("kopa-gen ")
    assert run["tool_result_chars"] == EvalConfig.tool_result_chars and run["endpoint"] is None
    # more tasks of the same set with the same plan: the same run, recorded as the union
    asyncio.run(run_eval(project, oracle(tmp_path / "run", seeds=[0, 1], tasks=["fin-002"])))
    run = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert sorted(run["tasks"]) == ["fin-001", "fin-002", "fin-003"] and run["seeds"] == [0, 1]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"rollouts": 2}, "rollouts = 1 there, 2 here; run it with the same --rollouts"),
        ({"seeds": [0, 1]}, "seeds = [0] there, [0, 1] here; run it with the same --seeds"),
        ({"answer_mode": "text"}, 'answer_mode = "submit" there, "text" here'),
        ({"tool_result_chars": 5000}, "tool_result_chars = 20000 there, 5000 here"),
    ],
)
def test_a_folder_whose_plan_differs_is_refused_naming_the_difference(
    project: Project, world: BuiltWorld, tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    """Appending 2 rollouts to a folder of 1 would silently turn every task's pass@2 into a pass@1."""
    asyncio.run(run_eval(project, oracle(tmp_path, tasks=["fin-003"])))
    before = (tmp_path / "episodes.jsonl").read_bytes()
    with pytest.raises(RunFolderError, match=re.escape(named)):
        asyncio.run(run_eval(project, oracle(tmp_path, **{"tasks": ["fin-003"], **change})))  # type: ignore[arg-type]
    assert (tmp_path / "episodes.jsonl").read_bytes() == before


def test_a_model_folder_refuses_other_generation_settings_but_not_another_base_url(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    def config(base_url: str, temperature: float) -> EvalConfig:
        generation = GenerationSettings(temperature=temperature)
        endpoint = EndpointSettings(base_url=base_url, model="m", generation=generation)
        return EvalConfig(
            policy="closed-book", out=tmp_path, rollouts=1, tasks=["fin-003"], endpoint=endpoint
        )

    with ChatDouble([Reply(content="정답: 1,446원")]) as double:
        asyncio.run(run_eval(project, config(double.base_url, 0.0)))
    with pytest.raises(RunFolderError, match=r"endpoint\.generation\.temperature = 0\.0 there, 0\.7 here"):
        asyncio.run(run_eval(project, config("http://127.0.0.1:9/v1", 0.7)))
    with ChatDouble([]) as moved:  # the same model served elsewhere: the same run, nothing left to run
        (again,) = asyncio.run(run_eval(project, config(moved.base_url, 0.0)))
        assert moved.requests == [] and again["final_message"] == "정답: 1,446원"
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert run["endpoints"] == [double.base_url, moved.base_url]


def test_model_and_base_url_are_recorded_without_keys(
    project: Project, world: BuiltWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOPA_TEST_KEY", "sk-never-written")
    assert (
        public_url("https://user:pw@api.example.com:8443/v1?key=abc#x") == "https://api.example.com:8443/v1"
    )
    with ChatDouble([Reply(content="정답: 1,446원")]) as double:
        base = double.base_url.replace("http://", "http://someone:sk-never-written@")
        endpoint = EndpointSettings(base_url=base, model="memory", api_key_env="KOPA_TEST_KEY")
        config = EvalConfig(
            policy="closed-book", out=tmp_path, rollouts=1, tasks=["fin-003"], endpoint=endpoint
        )
        asyncio.run(run_eval(project, config))
    text = (tmp_path / "run.json").read_text(encoding="utf-8")
    run = json.loads(text)
    assert run["endpoint"] == {
        **EndpointSettings(base_url=double.base_url, model="memory").model_dump(),
        "api_key_env": "KOPA_TEST_KEY",
    }
    assert "sk-never-written" not in text and "someone" not in text


def test_another_set_or_policy_is_refused(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    asyncio.run(run_eval(project, oracle(out)))
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8")

    synthesized = task_set(project, tmp_path / "synth")
    code, _, err = cli(
        capsys, "eval", "--policy", "oracle", "--task-dir", str(synthesized), "--out", str(out)
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "holds a run of policy oracle on the benchmark" in err and "task dir" in err

    code, _, err = cli(capsys, "eval", "--policy", "first-page", "--tasks", *TASKS, "--out", str(out))
    assert code == 2 and "policy first-page" in err and len(err.strip().splitlines()) == 1

    # a set with the same ids and other contents, in a folder of the first set: refused, nothing skipped
    first = task_set(project, tmp_path / "a")
    asyncio.run(run_eval(project.with_task_set(first), oracle(tmp_path / "a-run")))
    task_set(project, first, query_suffix="(변경)")
    with pytest.raises(RunFolderError, match="another version of task fin-001, fin-003"):
        asyncio.run(run_eval(project.with_task_set(first), oracle(tmp_path / "a-run")))
    assert (out / "episodes.jsonl").read_text(encoding="utf-8") == lines


def test_a_folder_without_a_run_json_is_not_resumed(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    asyncio.run(run_eval(project, oracle(tmp_path)))
    (tmp_path / "run.json").write_text('{"policy": "oracle", "tasks": null}\n', encoding="utf-8")
    with pytest.raises(RunFolderError, match=r"run\.json format None, and this kopa-gen reads format 3"):
        asyncio.run(run_eval(project, oracle(tmp_path)))
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8") or "{}")
    (tmp_path / "run.json").write_text(json.dumps({"format": 3, "policy": "oracle"}), encoding="utf-8")
    with pytest.raises(
        RunFolderError, match=r"run\.json: run\.json field task_set: Field required \(and \d+ more\)"
    ):
        asyncio.run(run_eval(project, oracle(tmp_path)))
    assert run == {"policy": "oracle", "tasks": None}


def test_endpoint_down_is_failed_infrastructure_and_retried(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    def config(base_url: str) -> EvalConfig:
        endpoint = EndpointSettings(
            base_url=base_url, model="m", api_key_env="KOPA_TEST_NO_KEY", retries=1, backoff_s=0.0
        )
        return EvalConfig(policy="openai", out=tmp_path, rollouts=1, tasks=["fin-003"], endpoint=endpoint)

    with ChatDouble([Fail(503, "loading model"), Fail(502)]) as down:
        (record,) = asyncio.run(run_eval(project, config(down.base_url)))
        assert down.remaining == 0
    assert record["stop_reason"] == "infrastructure" and record["reward"] is False
    assert "HTTP 502" in record["error"]
    with ChatDouble([Reply(content="정답: 1,446원")]) as up:
        (record,) = asyncio.run(run_eval(project, config(up.base_url)))
        assert len(up.requests) == 1, "the failed episode runs again on resume"
    assert record["stop_reason"] == "answered"
    assert len((tmp_path / "episodes.jsonl").read_text(encoding="utf-8").splitlines()) == 2
    assert [r["stop_reason"] for r in read_episodes(tmp_path / "episodes.jsonl").records] == ["answered"]


def test_eval_says_how_many_episodes_failed_and_exits_non_zero(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The endpoint answers the check, then fails every episode's requests (5xx after every retry)."""
    script = [Reply(content="OK"), *[Fail(503, "overloaded")] * 2]
    with ChatDouble(script) as flaky:
        code, out, err = cli(
            capsys, "eval", "--base-url", flaky.base_url, "--model", "m", "--tasks", *TASKS, "--rollouts", "1",
            "--api-key-env", "KOPA_TEST_NO_KEY", "--retries", "0", "--concurrency", "1", "--out", str(tmp_path),
        )  # fmt: skip
    assert code == 1
    assert "2 episode(s) failed-infrastructure" in err and "run the same command again" in err
    assert "| all |" not in out, "failed-infrastructure episodes are not scored"


def test_an_unreachable_endpoint_is_one_line_before_any_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        code, _, err = cli(
            capsys, "eval", "--base-url", url, "--model", "m", "--tasks", *TASKS, "--out", str(tmp_path / "r"),
        )  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "r").exists()
    assert err.startswith(f"kopa-gen eval: error: cannot reach the model endpoint {url} (ConnectError")


def test_two_evals_on_one_folder_do_not_interleave(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with locked(tmp_path):
        code, _, err = cli(capsys, "eval", "--policy", "oracle", "--tasks", *TASKS, "--out", str(tmp_path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "in use by another kopa-gen eval" in err

    async def both() -> list[Any]:
        outcomes: list[Any] = await asyncio.gather(
            run_eval(project, oracle(tmp_path)), run_eval(project, oracle(tmp_path)), return_exceptions=True
        )
        return outcomes

    first, second = asyncio.run(both())
    assert isinstance(second, RunFolderError) and isinstance(first, list) and len(first) == 2
    assert len((tmp_path / "episodes.jsonl").read_text(encoding="utf-8").splitlines()) == 2
    assert len(asyncio.run(run_eval(project, oracle(tmp_path)))) == 2, "the lock is released at the end"


def test_a_torn_last_line_is_skipped_and_its_episode_run_again(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(run_eval(project, oracle(tmp_path)))
    episodes = tmp_path / "episodes.jsonl"
    lines = episodes.read_text(encoding="utf-8").splitlines()
    episodes.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2], encoding="utf-8")

    code, out, err = cli(capsys, "report", str(tmp_path))
    assert code == 0 and "skipped a torn last line" in err and "| all | 1 | 1 | 1 |" in out

    code, out, err = cli(
        capsys, "eval", "--policy", "oracle", "--tasks", *TASKS, "--rollouts", "1", "--out", str(tmp_path)
    )
    assert code == 0 and "skipped a torn last line" in err and "| all | 2 | 2 | 2 |" in out
    repaired = episodes.read_text(encoding="utf-8").splitlines()
    assert len(repaired) == 2 and all(json.loads(line) for line in repaired)


def test_eval_and_report_print_the_same_table(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(
        capsys, "eval", "--policy", "first-page", "--tasks", *TASKS, "--rollouts", "2", "--out", str(tmp_path)
    )
    assert code == 0
    printed = [line for line in out.splitlines() if line.startswith("|")]
    code, report, _ = cli(capsys, "report", str(tmp_path))
    assert code == 0 and "(2) |" in printed[-1]
    assert "\n".join(printed) in report, "eval and report agree on k"


def test_a_judge_that_is_down_leaves_the_episode_ungraded_and_retried(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    """do-nothing on fin-001 leaves nothing the rules can read (text mode), so the judge decides; when it cannot be
    reached the episode is failed-infrastructure (not a model failure) and runs again on resume."""

    def config(base_url: str) -> EvalConfig:
        judge = EndpointSettings(
            base_url=base_url, model="j", api_key_env="KOPA_TEST_NO_KEY", retries=1, backoff_s=0.0
        )
        return EvalConfig(
            policy="do-nothing", out=tmp_path, rollouts=1, tasks=["fin-001"], judge=judge, answer_mode="text"
        )

    with ChatDouble([Fail(503), Fail(503)]) as down:
        (record,) = asyncio.run(run_eval(project, config(down.base_url)))
        assert down.remaining == 0
    assert record["stop_reason"] == "infrastructure" and record["reward"] is False
    assert "LLM judge could not grade" in record["error"] and "HTTP 503" in record["error"]
    with ChatDouble([Reply(content="YES")]) as up:
        (record,) = asyncio.run(run_eval(project, config(up.base_url)))
        assert len(up.requests) == 1, "the ungraded episode runs again on resume"
    assert record["stop_reason"] != "infrastructure" and record["reward"] is True


def test_an_unknown_task_leaves_no_run_folder(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never"
    code, _, err = cli(capsys, "eval", "--policy", "oracle", "--tasks", "no-such-task", "--out", str(out))
    assert code == 2 and err.startswith("kopa-gen eval: error: no task matches ['no-such-task']; known: ")
    assert err.count("\n") == 1 and not out.exists()


def test_every_written_episode_has_the_record_shape_and_another_shape_is_refused(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kopa_gen.language.records import EpisodeRecord

    asyncio.run(run_eval(project, oracle(tmp_path)))
    episodes = tmp_path / "episodes.jsonl"
    lines = episodes.read_text(encoding="utf-8").splitlines()
    for line in lines:
        EpisodeRecord.model_validate_json(line)
    record = json.loads(lines[1])
    record["action"] = {"score": 1.0}  # a field renamed by another version
    episodes.write_text(lines[0] + "\n" + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(
        RunFolderError, match=r"episodes\.jsonl:2: episode field action\.corr: Field required"
    ):
        read_episodes(episodes)
    code, _, err = cli(capsys, "report", str(tmp_path))
    assert code == 2 and "episodes.jsonl:2: episode field action.corr" in err and "Traceback" not in err


def test_ctrl_c_says_what_is_saved_and_the_same_command_resumes(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    # three rollouts: the signal lands with dozens of episodes still to run (one rollout of the 14 fin tasks
    # could finish between two polls on a fast machine and exit 0 before the signal arrived)
    command = ["eval", "--policy", "oracle", "--tasks", "fin-*", "--rollouts", "3", "--concurrency", "1"]
    command += ["--out", str(out)]
    child = subprocess.Popen(
        [sys.executable, "-m", "kopa_gen", "--root", str(ROOT), *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a shell delivers it: an ignored SIGINT is inherited across exec, and an earlier test of the
        # suite can leave this process ignoring it (the child then ran all 42 episodes and exited 0)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    episodes = out / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while not (episodes.exists() and episodes.read_bytes().count(b"\n") >= 2):
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130 and "Traceback" not in err, err
    said = re.search(r"interrupted: (\d+) episodes saved in (.+); run the same command to resume\n", err)
    assert said and said.group(2) == str(out), err
    kept = read_episodes(episodes).records
    assert int(said.group(1)) == len(kept) >= 2

    code, _, _ = cli(capsys, *command)
    records = read_episodes(episodes).records
    fin = [t.id for _, t in project.tasks if t.id.startswith("fin-")]
    assert code == 0 and sorted(r["task"] for r in records) == sorted(fin * 3)
    assert [r["key"] for r in records[: len(kept)]] == [r["key"] for r in kept], (
        "saved episodes are not redone"
    )

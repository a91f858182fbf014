"""The LLM judge's rubric is versioned and logged with each verdict, and `kopa-gen judge calibrate` runs it over a
labelled corpus and prints its agreement by class. Tested against the protocol double of an OpenAI-compatible
server (policies/double.py; no model here): the double answers by script, so the agreement is known."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from kopa_gen.cli import main
from kopa_gen.evaluate.judge import OpenAIJudge, rubric
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.policies.double import ChatDouble, Fail, Reply
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld

CASES = [
    {
        "task": "fin-001",
        "mode": "text",
        "class": "plain",
        "reply": "매출액은 154,329,557,000원입니다.",
        "expect": "pass",
    },
    {"task": "fin-001", "mode": "text", "class": "refusal", "reply": "알 수 없습니다.", "expect": "fail"},
    {"task": "pol-002", "mode": "text", "class": "plain", "reply": "하동군입니다.", "expect": "pass"},
    {
        "task": "pol-002",
        "mode": "submit",
        "class": "plain",
        "calls": [{"answer": "하동군"}],
        "expect": "pass",
    },
]


def test_the_rubric_is_versioned_and_fills_in() -> None:
    r = rubric()
    assert r.version.startswith("kopa-judge-") and "{gold}" in r.template and "{message}" in r.template
    filled = r.template.format(query="q", gold="{}", message="m")
    assert "YES or NO" in filled


def test_calibrate_prints_agreement_by_class(
    project: Project, world: BuiltWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "tiny_corpus.yaml"
    corpus.write_text(yaml.safe_dump(CASES, allow_unicode=True), encoding="utf-8")
    # three text-mode cases, asked one at a time: YES (right), YES (a false pass), NO (a false fail)
    with ChatDouble([Reply(content="YES"), Reply(content="YES"), Reply(content="NO")]) as double:
        code = main(
            [
                "judge", "calibrate", "--base-url", double.base_url, "--model", "judge-double",
                "--api-key-env", "KOPA_TEST_NO_KEY", "--corpus", str(corpus), "--concurrency", "1",
            ]
        )  # fmt: skip
        prompts = [r.body["messages"][0]["content"] for r in double.requests]
    out = capsys.readouterr().out
    assert code == 0 and len(prompts) == 3, "submit-mode cases are not the judge's"
    assert f"judge rubric {rubric().version}" in out
    assert "| plain | 2 | 1 | 0 |" in out and "| refusal | 1 | 0 | 0 |" in out
    assert "false passes 1, false fails 1" in out
    assert "154,329,557,000원" in prompts[0] and '"value":154329557000' in prompts[0].replace(" ", "")


def test_a_judge_that_cannot_be_reached_is_one_line(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "tiny_corpus.yaml"
    corpus.write_text(yaml.safe_dump(CASES[:1], allow_unicode=True), encoding="utf-8")
    with ChatDouble([Fail(503)] * 4) as down:
        code = main(
            [
                "judge", "calibrate", "--base-url", down.base_url, "--model", "j", "--api-key-env",
                "KOPA_TEST_NO_KEY", "--corpus", str(corpus), "--timeout", "5",
            ]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("kopa-gen judge: error: the judge at ") and err.count("\n") == 1


def test_each_judged_verdict_names_the_rubric_and_the_model(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    with ChatDouble([Reply(content="YES")]) as double:
        judge = EndpointSettings(
            base_url=double.base_url, model="judge-double", api_key_env="KOPA_TEST_NO_KEY"
        )
        config = EvalConfig(
            policy="do-nothing", out=tmp_path, rollouts=1, tasks=["fin-001"], judge=judge, answer_mode="text"
        )
        (record,) = asyncio.run(run_eval(project, config))
    assert record["response"]["decided_by"] == "judge"
    assert record["response"]["judge"] == OpenAIJudge(judge).signature
    assert record["response"]["judge"] == f"{rubric().version} (judge-double)"

"""The report as the place a person looks first: what ran and with which settings, comparison charts, one task table
with the runs side by side (the Korean query, the expected answer, each run's reply, verdict and reason), filters,
and transcripts as pages of their own that the marks open; a warning when the runs' task sets differ; a small page
at 1,800 episodes; a pass@k axis whose labels never overlap."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.cli import main
from kopa_gen.evaluate.charts import grouped_bars, text_width, tick_indices
from kopa_gen.evaluate.guess import Guess, summary_line
from kopa_gen.evaluate.report import RunData, render_report
from kopa_gen.evaluate.rundir import read_manifest
from kopa_gen.evaluate.runner import EvalConfig, load_fixture, run_eval
from kopa_gen.language.settings import EndpointSettings, GenerationSettings
from kopa_gen.policies.double import ChatDouble, Reply
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.reportdata import TASKS, Rendered, eighteen_hundred, sample_report


@pytest.fixture(scope="module")
def rendered(project: Project, world: BuiltWorld, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return sample_report(project, tmp_path_factory.mktemp("report"))


def svgs(html: str) -> Iterator[tuple[float, str]]:
    for match in re.finditer(r'<svg [^>]*width="(\d+)"[^>]*>(.*?)</svg>', html, re.S):
        yield float(match.group(1)), match.group(2)


def test_page_declares_utf8_and_korean_fonts_and_works_without_script(rendered: Rendered) -> None:
    head = rendered.html[: rendered.html.index("</head>")]
    assert "<meta charset='utf-8'>" in head and "<html lang='ko'>" in head
    assert "font-family:'Noto Sans CJK KR', 'Noto Sans KR'" in head and "sans-serif" in head
    # one inline script, nothing fetched; without it the filters stay hidden and every row is shown
    assert rendered.html.count("<script") == 1 and "<script src" not in rendered.html
    assert "<div class='filters' id='filters' hidden>" in rendered.html
    assert " hidden>" not in rendered.html.split("<tbody>")[1].split("</tbody>")[0]


def test_task_table_shows_query_expected_answer_and_each_runs_reply(
    project: Project, rendered: Rendered
) -> None:
    first_page = rendered.runs["first-page"].records
    answered = {t.id for _, t in project.tasks if t.answer is not None}  # ENVIRONMENT-only tasks have none
    failed = next(r for r in first_page if not r["reward"] and r["task"] in answered)
    task = next(t for _, t in project.tasks if t.id == failed["task"])
    assert task.answer is not None and failed["expected"]
    # the Korean query and the expected answer as written, in both files; the failing reply and reason beside them
    assert task.query in rendered.html and task.query.split()[0] in rendered.md
    assert escape(failed["expected"]) in rendered.html and escape(failed["reason"]) in rendered.html
    row = next(line for line in rendered.md.splitlines() if line.startswith(f"| {failed['task']} |"))
    assert failed["expected"] in row and "✗" in row and row.count("✓") + row.count("✗") == 2 + 3
    header = (
        "| task | query | expected | oracle: passed | reply | RESPONSE | ENVIRONMENT | reason | episodes |"
    )
    assert (
        header + " first-page: passed | reply | RESPONSE | ENVIRONMENT | reason | episodes |" in rendered.md
    )
    # a task scored on ENVIRONMENT alone has no answer: the state its gold chain writes is shown instead
    fixture = load_fixture(project, project.task("edu-011"))
    (write,) = [c for step in fixture["steps"] for c in step if c["tool"] == "workspace_write_file"]
    env = re.search(r"\| edu-011 \|.*", rendered.md)
    assert env and "| - | pass |" in env.group(0)
    assert f"| state: workspace_write_file {json.dumps(write['args'], ensure_ascii=False)} |" in env.group(0)
    html_row = rendered.html.split("data-task='edu-011'")[1].split("</tr>")[0]
    assert escape(write["args"]["content"]) in html_row
    assert (
        "RESPONSE <span class='muted'>not scored</span> · ENVIRONMENT <span class='pass'>pass</span>"
        in html_row
    )


def test_every_mark_opens_its_episode_on_its_transcript_page(rendered: Rendered) -> None:
    report = rendered.report
    links = re.findall(r"href='(episodes/[^'#]+)#([^']+)'", rendered.html)
    assert links and all(f"id='{anchor}'" in report.pages[page] for page, anchor in links)
    assert set(re.findall(r"\]\((episodes/[^)#]+)#", rendered.md)) <= set(report.pages)
    episodes = sum(len(run.records) for run in rendered.runs.values())
    assert len(links) == episodes
    assert sum(page.count("<section class='episode'") for page in report.pages.values()) == episodes
    assert "<section class='episode'" not in rendered.html, "transcripts are loaded on demand, not inlined"
    assert all((rendered.folder / page).is_file() for page in report.pages)
    page = report.pages["episodes/r0/fin-001.html"]
    assert "→ <b>dart_corp_code</b>" in page and "<table class='calls'>" in page and "<b>expected</b>" in page


def test_runs_are_compared_as_charts(rendered: Rendered) -> None:
    titles = re.findall(r'aria-label="([^"]+)"', rendered.html)
    assert titles[:3] == ["pass@1 by domain", "ACTION by domain", "pass@k (all tasks, per seed)"]
    curve = rendered.html[rendered.html.index('aria-label="pass@k (all tasks, per seed)"') :]
    assert curve.count("<polyline") == 2, "one pass@k curve per run, k = 1..3"
    assert "k (1 to 3)" in curve[: curve.index("</svg>")]
    # what ran, from run.json
    assert "policy oracle on the benchmark" in rendered.md and "rollouts 3" in rendered.md


def test_per_pattern_chart_for_a_synthesized_set(rendered: Rendered) -> None:
    records = [
        dict(r, pattern="fan" if r["task"].startswith("fin") else "seq")
        for r in rendered.runs["oracle"].records
    ]
    assert 'aria-label="pass@1 by pattern"' in render_report({"edge": RunData(records)}).html


def test_no_chart_label_runs_past_the_right_edge(rendered: Rendered) -> None:
    long = grouped_bars("긴 이름의 차트", ["아주 긴 한국어 도메인 이름", "x"], [("a", [1.0, 0.5])], 1.0)
    for width, body in [*svgs(rendered.html), *svgs(long)]:
        for x, text in re.findall(r'<text x="([\d.]+)"[^>]*>([^<]*)</text>', body):
            assert float(x) >= 0 and float(x) + text_width(text) <= width, (text, x, width)


@pytest.mark.parametrize("n", [1, 2, 4, 9, 16, 17, 32, 40, 99, 100, 250])
def test_pass_at_k_axis_labels_never_overlap(n: int) -> None:
    xs = list(range(1, n + 1))
    picked = tick_indices(xs, 320)
    assert picked[0] == 0 and picked[-1] == n - 1
    gap = 320 / max(n - 1, 1)
    for a, b in itertools.pairwise(picked):
        centre_gap = (b - a) * gap
        assert centre_gap >= (text_width(str(xs[a])) + text_width(str(xs[b]))) / 2 + 2, (n, xs[a], xs[b])
    if n <= 16:
        assert len(picked) == n, "every k is labelled while the labels fit"


def test_eval_k_is_the_report_k(rendered: Rendered) -> None:
    """With 2 rollouts the table's pass@k is pass@2 (not an empty pass@4); pass@1 is always there."""
    md = render_report({"oracle": rendered.runs["oracle"]}).md
    assert "| all | 5 | 10 | 5 | 1.0000 | 1.0000 (2) | 1.0000 |" in md


def test_pass_at_k_is_per_seed_then_averaged() -> None:
    """One task, two seeds of two rollouts: seed 0 passes both, seed 1 neither. Per seed pass@2 is 1 and 0, so
    0.5 (the default k is the 2 rollouts of a seed); pooled over the four episodes it would be
    1 - C(2,2)/C(4,2) = 0.8333."""
    records = [_record("t", seed, rollout, passed=seed == 0) for seed in (0, 1) for rollout in (0, 1)]
    md = render_report({"r": records}).md
    assert "| all | 1 | 4 | 1 | 0.5000 | 0.5000 (2) |" in md


def _record(task: str, seed: int, rollout: int, passed: bool, domain: str = "finance") -> dict[str, Any]:
    action = {"corr": 1.0, "cr": 1.0, "mpc": 1.0, "eff": 1.0, "action": 1.0, "action_gated": 1.0}
    return {
        "key": f"{task}:{seed}:{rollout}", "task": task, "domain": domain, "query": "질문", "seed": seed,
        "rollout": rollout, "policy": "p", "answer_mode": "submit", "stop_reason": "answered", "error": None,
        "final_message": "답", "calls": [], "turns": [], "messages": [], "state_hash": "", "state": [],
        "response": {"passed": passed}, "environment": None, "action": action, "reward": passed,
        "reason": "r", "elapsed_s": 0.0, "expected": "1,000 원",
    }  # fmt: skip


def test_runs_over_different_task_sets_are_compared_with_a_warning(rendered: Rendered) -> None:
    oracle = rendered.runs["oracle"]
    fewer = RunData([r for r in oracle.records if r["task"] != TASKS[0]], oracle.manifest)
    report = render_report({"all": oracle, "fewer": fewer})
    assert report.warnings and report.warnings[0].startswith(
        "warning: the runs differ in their tasks (4 in common)"
    )
    assert f"all: 1 ({TASKS[0]})" in report.warnings[0]
    assert f"<p class='warn'>{escape(report.warnings[0])}</p>" in report.html
    assert report.md.count("> warning:") == 1
    assert render_report({"a": oracle, "b": oracle}).warnings == []


def test_a_1800_episode_report_stays_small(rendered: Rendered) -> None:
    """45 tasks x 8 seeds x 5 rollouts from real episode records: the page stays under 5 MB because the
    transcripts are pages of their own."""
    records = eighteen_hundred(rendered.runs["first-page"].records)
    assert len(records) == 1800 and len({r["task"] for r in records}) == 45
    report = render_report({"big": records})
    assert len(report.html.encode()) < 5_000_000, len(report.html.encode())
    assert sum(p.count("<section class='episode'") for p in report.pages.values()) == 1800


def test_usage_and_settings_are_in_the_report(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    generation = GenerationSettings(temperature=0.6, max_tokens=2048, extra_body={"top_k": 20})
    with ChatDouble([Reply(content="정답: 3,070원", usage=(812, 41))]) as double:
        endpoint = EndpointSettings(base_url=double.base_url, model="scripted", generation=generation)
        config = EvalConfig(
            policy="closed-book", out=tmp_path, rollouts=1, tasks=["fin-003"], endpoint=endpoint
        )
        (record,) = asyncio.run(run_eval(project, config))
        sent = double.bodies[0]
    assert (sent["temperature"], sent["max_tokens"], sent["top_k"], sent["seed"]) == (0.6, 2048, 20, 0)
    assert record["usage"] == {
        "prompt_tokens": 812,
        "completion_tokens": 41,
        "turns": [{"prompt_tokens": 812, "completion_tokens": 41}],
    }
    report = render_report({"scripted": RunData([record], read_manifest(tmp_path))})
    assert "812 / 41 (1 episodes)" in report.md
    for line in (
        "| generation.temperature | 0.6 |",
        "| generation.max_tokens | 2048 |",
        '| generation.extra_body | {"top_k": 20} |',
    ):
        assert line in report.md
    assert "| tool_result_chars | 20000 |" in report.md and "| agent.max_turns | 30 |" in report.md


def test_several_runs_get_a_report_folder_of_their_own(
    rendered: Rendered, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = rendered.folder / "oracle", rendered.folder / "first-page"
    before = {p: p.read_bytes() for p in (a / "episodes.jsonl", b / "episodes.jsonl")}
    assert main(["report", str(a), str(b)]) == 0
    out = rendered.folder / "oracle+first-page"
    assert (out / "report.html").is_file() and (out / "episodes" / "r1" / "fin-001.html").is_file()
    assert not (a / "report.html").exists() and not (b / "report.html").exists()
    assert {p: p.read_bytes() for p in before} == before
    assert f"wrote {out / 'report.md'}" in capsys.readouterr().out
    assert main(["report", str(a), "--out", str(tmp_path / "mine")]) == 0
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["episodes", "report.html", "report.md"]


def test_the_pool_guess_line_names_pass_at_k_only_when_k_is_not_1() -> None:
    pool = [Guess("fin-001", "finance", pool=4, passing=1, scored=True)]  # a guess passes 1 time in 4
    assert summary_line(pool, 1) == (
        "pool-guess expectation on these 1 tasks: pass@1 0.2500 (the gold calls, then one answer-pool candidate "
        "at random; 1 task(s) have a pool of 5 or fewer)"
    )
    assert ": pass@1 0.2500, pass@4 " in summary_line(pool, 4)

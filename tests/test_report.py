"""The report as the place a person looks first: what ran, comparison charts, a per-task table with the Korean
query, the final answer, the verdict per axis and its reason, links into every episode's messages and calls."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from pathlib import Path

import pytest

from kopa_gen.evaluate.charts import grouped_bars, text_width
from kopa_gen.evaluate.report import RunData, render_report
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.reportdata import Rendered, sample_report


@pytest.fixture(scope="module")
def rendered(project: Project, world: BuiltWorld, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return sample_report(project, tmp_path_factory.mktemp("report"))


def svgs(html: str) -> Iterator[tuple[float, str]]:
    for match in re.finditer(r'<svg [^>]*width="(\d+)"[^>]*>(.*?)</svg>', html, re.S):
        yield float(match.group(1)), match.group(2)


def test_page_declares_utf8_and_korean_fonts(rendered: Rendered) -> None:
    head = rendered.html[: rendered.html.index("</head>")]
    assert "<meta charset='utf-8'>" in head and "<html lang='ko'>" in head
    assert "font-family:'Noto Sans CJK KR', 'Noto Sans KR'" in head and "sans-serif" in head
    assert "<script" not in rendered.html


def test_per_task_table_shows_query_answer_verdict_and_reason(project: Project, rendered: Rendered) -> None:
    first_page = rendered.runs["first-page"].records
    failed = next(r for r in first_page if not r["reward"])
    query = next(t.query for _, t in project.tasks if t.id == failed["task"])
    # the Korean query, as written, in both files; the failing episode's answer and reason beside it
    assert query in rendered.html and query.split()[0] in rendered.md
    assert escape(failed["reason"]) in rendered.html
    section = rendered.md[rendered.md.index("## first-page") :]
    row = next(line for line in section.splitlines() if line.startswith(f"| {failed['task']} |"))
    assert "fail" in row and "✗" in row
    # a task scored on ENVIRONMENT shows that axis
    assert re.search(r"\| fin-014 \|.*\| - \| pass \|", rendered.md)
    assert (
        "| task | query | passed | final answer | RESPONSE | ENVIRONMENT | reason | episodes |" in rendered.md
    )


def test_every_episode_has_an_anchor_and_every_link_lands(rendered: Rendered) -> None:
    ids = set(re.findall(r"id='([^']+)'", rendered.html))
    links = set(re.findall(r"href='#([^']+)'", rendered.html))
    assert links and links <= ids
    assert set(re.findall(r"\(report\.html#([^)]+)\)", rendered.md)) <= ids
    episodes = sum(len(run.records) for run in rendered.runs.values())
    assert rendered.html.count("<section class='episode'") == episodes
    # an episode shows its messages (tool calls with arguments) and its call log
    section = rendered.html[rendered.html.index("<section class='episode'") :]
    section = section[: section.index("</section>")]
    assert "→ <b>dart_corp_code</b>" in section and "<table class='calls'>" in section


def test_runs_are_compared_as_charts(rendered: Rendered) -> None:
    titles = re.findall(r'aria-label="([^"]+)"', rendered.html)
    assert titles[:3] == ["pass@1 by domain", "ACTION by domain", "pass@k (all tasks)"]
    curve = rendered.html[rendered.html.index('aria-label="pass@k (all tasks)"') :]
    assert curve.count("<polyline") == 2, "one pass@k curve per run, k = 1..3"
    assert "k (1 to 3)" in curve[: curve.index("</svg>")]
    # what ran, from run.json
    assert "policy oracle on the benchmark" in rendered.md and "rollouts 3" in rendered.md


def test_per_pattern_chart_for_a_synthesized_set(rendered: Rendered) -> None:
    records = [
        dict(r, pattern="fan" if r["task"].startswith("fin") else "seq")
        for r in rendered.runs["oracle"].records
    ]
    _, html = render_report({"edge": RunData(records)})
    assert 'aria-label="pass@1 by pattern"' in html


def test_no_chart_label_runs_past_the_right_edge(rendered: Rendered) -> None:
    long = grouped_bars("긴 이름의 차트", ["아주 긴 한국어 도메인 이름", "x"], [("a", [1.0, 0.5])], 1.0)
    for width, body in [*svgs(rendered.html), *svgs(long)]:
        for x, text in re.findall(r'<text x="([\d.]+)"[^>]*>([^<]*)</text>', body):
            assert float(x) >= 0 and float(x) + text_width(text) <= width, (text, x, width)


def test_eval_k_is_the_report_k(rendered: Rendered, tmp_path: Path) -> None:
    """With 2 rollouts the table's pass@k is pass@2 (not an empty pass@4); pass@1 is always there."""
    md, _ = render_report({"oracle": rendered.runs["oracle"]})
    assert "| all | 5 | 10 | 5 | 1.0000 | 1.0000 (2) | 1.0000 |" in md

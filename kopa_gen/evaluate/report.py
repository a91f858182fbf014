"""Turning episode records into the results table (the paper's shape: per domain and overall) and into the report
a person reads first: what ran, the runs compared as charts (per domain, per pattern, pass@k curves), a table per
task (the Korean query, the final answer, the verdict per axis and its reason) linking to every episode's
messages and calls."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from kopa_gen.evaluate.charts import curves, grouped_bars
from kopa_gen.evaluate.guess import Guess, by_domain, from_manifest, summary_line
from kopa_gen.evaluate.rundir import INFRASTRUCTURE, describe
from kopa_gen.evaluate.stats import EpisodeResult, SummaryRow, summarize
from kopa_gen.evaluate.transcript import anchor, episode_section, verdict

FONTS = "'Noto Sans CJK KR', 'Noto Sans KR', 'Apple SD Gothic Neo', 'Malgun Gothic', sans-serif"
STYLE = (
    f"body{{font-family:{FONTS};max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.45}}"
    "table{border-collapse:collapse;margin:0.5em 0 1em}td,th{border:1px solid #ccc;padding:4px 8px;"
    "text-align:right;vertical-align:top}th{background:#eee;text-align:left}td.text{text-align:left;max-width:28em;"
    "overflow-wrap:anywhere}td.id{text-align:left;white-space:nowrap}.pass{color:#1a7f37}.fail{color:#c62828}.muted{color:#777}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;padding:6px;margin:4px 0}"
    "pre.say{font-family:inherit;font-size:inherit}"
    ".charts{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}"
    ".episode{border-top:1px solid #ccc;margin-top:1em}.msg{margin:6px 0 6px 0.5em}"
    ".role{font-weight:bold;color:#555}a.ep{text-decoration:none;margin-right:2px}"
    ":target{outline:3px solid #f0b400}"
)


@dataclass(frozen=True)
class RunData:
    """One run folder as the report reads it: the latest record of each episode and its run.json."""

    records: list[dict[str, Any]]
    manifest: dict[str, Any] = field(default_factory=dict)


def results(records: Sequence[dict[str, Any]], group: str = "domain") -> list[EpisodeResult]:
    """Episode results grouped by `domain` (the results table) or by another record field such as `pattern`.
    Episodes that failed for infrastructure are left out: the environment failed, not the policy (the runs
    table counts them, and a resume runs them again)."""
    return [
        EpisodeResult(
            task_id=r["task"],
            domain=str(r.get(group) or "-"),
            seed=r["seed"],
            rollout=r["rollout"],
            passed=bool(r["reward"]),
            action=float(r["action"]["action"]) if r.get("action") else math.nan,
        )
        for r in records
        if r.get("stop_reason") != INFRASTRUCTURE
    ]


def full_k(records: Sequence[dict[str, Any]]) -> int:
    """The largest k every task of the run supports: its fewest episodes. `eval` and `report` both show pass@k
    for this k unless told otherwise, and the curves run from 1 to it."""
    per_task = Counter(r["task"] for r in records if r.get("stop_reason") != INFRASTRUCTURE)
    return min(per_task.values(), default=1)


def _guess_of(records: Sequence[dict[str, Any]], manifest: dict[str, Any] | None) -> list[Guess]:
    """The pool-guess figures of the run's tasks, from run.json."""
    entry = (manifest or {}).get("pool_guess") or {}
    tasks = {r["task"] for r in records}
    return [g for g in from_manifest(entry) if g.task in tasks]


def table(rows: Sequence[SummaryRow], guess: Sequence[Guess] = ()) -> str:
    """The results table; with the run's pool-guess figures, a column of what guessing earns (pass@1 / pass@k)."""

    def f(x: float) -> str:
        return "-" if math.isnan(x) else f"{x:.4f}"

    expected = by_domain(list(guess), rows[0].k if rows else 1) if guess else {}
    head = "| domain | tasks | episodes | solved | pass@1 | pass@k (k) | pass^k | ACTION | 95% CI pass@1 (seeds) |"
    rule = "|---|---|---|---|---|---|---|---|---|"
    if expected:
        head += " pool-guess pass@1 / pass@k |"
        rule += "---|"
    lines = [head, rule]
    for r in rows:
        ci = "-" if math.isnan(r.ci_low) else f"[{r.ci_low:.4f}, {r.ci_high:.4f}] ({r.seeds})"
        line = (
            f"| {r.domain} | {r.tasks} | {r.episodes} | {r.solved} | {f(r.pass_at_1)} | {f(r.pass_at_k)} ({r.k}) "
            f"| {f(r.pass_hat_k)} | {f(r.action)} | {ci} |"
        )
        if expected:
            one, at_k = expected.get(r.domain, (math.nan, math.nan))
            line += f" {f(one)} / {f(at_k)} |"
        lines.append(line)
    return "\n".join(lines)


def print_summary(
    records: Sequence[dict[str, Any]], k: int | None = None, manifest: dict[str, Any] | None = None
) -> None:
    """The results table `kopa-gen eval` prints: the same as the report's for the same run and k."""
    k = k or full_k(records)
    guess = _guess_of(records, manifest)
    print(table(summarize(results(records), k=k), guess))
    if guess:
        print(summary_line(guess, k))


def failure_category(record: dict[str, Any]) -> str:
    """Why an episode did not earn the reward, in one word (for the failure chart)."""
    if record["reward"]:
        return "passed"
    if record["stop_reason"] == INFRASTRUCTURE:
        return "failed-infrastructure"
    if record["stop_reason"] in ("error", "timeout", "budget"):
        return str(record["stop_reason"])
    if not record["calls"]:
        return "no calls"
    if record.get("response") and not record["response"]["passed"]:
        return "wrong answer"
    if record.get("environment") is False:
        return "wrong state"
    return "other"


@dataclass(frozen=True)
class TaskRow:
    """One task of one run: its episodes (by seed, rollout) and the one shown (the first failure, else the
    first)."""

    task: str
    domain: str
    query: str
    episodes: list[dict[str, Any]]

    @property
    def shown(self) -> dict[str, Any]:
        return next((e for e in self.episodes if not e["reward"]), self.episodes[0])

    @property
    def passed(self) -> int:
        return sum(bool(e["reward"]) for e in self.episodes)


def task_rows(records: Sequence[dict[str, Any]]) -> list[TaskRow]:
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_task[r["task"]].append(r)
    rows = []
    for task in sorted(by_task, key=lambda t: (by_task[t][0]["domain"], t)):
        episodes = sorted(by_task[task], key=lambda r: (r["seed"], r["rollout"]))
        first = episodes[0]
        rows.append(TaskRow(task, str(first["domain"]), str(first.get("query") or ""), episodes))
    return rows


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _md_cell(text: str, limit: int = 160) -> str:
    return _one_line(text, limit).replace("|", "\\|")


def _ids(names: Sequence[str]) -> dict[str, int]:
    return {name: i for i, name in enumerate(names)}


def render_report(
    runs: dict[str, RunData] | dict[str, list[dict[str, Any]]], k: int | None = None
) -> tuple[str, str]:
    """Markdown and a self-contained HTML page (UTF-8, Korean fonts, no script) for one run or several side by
    side. `k` is the table's pass@k (default: each run's `full_k`, as `kopa-gen eval` prints it)."""
    data = {name: run if isinstance(run, RunData) else RunData(list(run)) for name, run in runs.items()}
    names = list(data)
    index = _ids(names)
    md = ["# KOPA-Bench report", ""]
    html = [
        "<!doctype html><html lang='ko'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'><title>KOPA-Bench report</title>",
        f"<style>{STYLE}</style></head><body><h1 id='top'>KOPA-Bench report</h1>",
    ]
    md += _md_runs(data)
    html.append(_html_runs(data))
    html.append("<h2>Comparison</h2>")
    html.append(_comparison_charts(data))
    for name, run in data.items():
        records = run.records
        if not records:
            md += [f"## {name}", "", "no episodes", ""]
            html.append(f"<h2>{escape(name)}</h2><p>no episodes</p>")
            continue
        rows = summarize(results(records), k=k or full_k(records))
        failures = Counter(failure_category(r) for r in records)
        tasks = task_rows(records)
        guess = _guess_of(records, run.manifest)
        md += [f"## {name}", "", table(rows, guess), ""]
        md += [
            "| outcome | episodes |",
            "|---|---|",
            *[f"| {c} | {n} |" for c, n in failures.most_common()],
            "",
        ]
        md += _md_tasks(index[name], tasks)
        html.append(f"<h2 id='run-{index[name]}'>{escape(name)}</h2>")
        html.append(_html_table(rows, guess))
        html.append(
            "<div class='charts'>"
            + grouped_bars(
                f"outcomes ({name})",
                [c for c, _ in failures.most_common()],
                [(name, [float(n) for _, n in failures.most_common()])],
                max(failures.values()),
                "{:.0f}",
            )
            + "</div>"
        )
        html.append(_html_tasks(index[name], tasks))
    html.append("<h2>Episodes</h2>")
    for name, run in data.items():
        for row in task_rows(run.records):
            html += [episode_section(index[name], name, e) for e in row.episodes]
    html.append("</body></html>")
    return "\n".join(md) + "\n", "\n".join(html) + "\n"


def _what_ran(run: RunData) -> tuple[str, str, str]:
    m = run.manifest
    if not m.get("task_set"):
        return "(no run.json)", "-", "-"
    ts = m["task_set"]
    versions = ", ".join(m.get("code_versions") or []) or "-"
    plan = f"seeds {m.get('seeds')}, rollouts {m.get('rollouts')}, task set {str(ts.get('hash', ''))[:12]}"
    return describe(m), plan, versions


def _md_runs(data: dict[str, RunData]) -> list[str]:
    lines = [
        "| run | what ran | plan | code | episodes | failed-infrastructure |",
        "|---|---|---|---|---|---|",
    ]
    for name, run in data.items():
        what, plan, code = _what_ran(run)
        down = sum(r.get("stop_reason") == INFRASTRUCTURE for r in run.records)
        lines.append(f"| {name} | {_md_cell(what)} | {plan} | {code} | {len(run.records)} | {down} |")
    return [*lines, ""]


def _html_runs(data: dict[str, RunData]) -> str:
    head = "".join(
        f"<th>{h}</th>" for h in ("run", "what ran", "plan", "code", "episodes", "failed-infrastructure")
    )
    body = []
    for i, (name, run) in enumerate(data.items()):
        what, plan, code = _what_ran(run)
        down = sum(r.get("stop_reason") == INFRASTRUCTURE for r in run.records)
        cells = [f"<a href='#run-{i}'>{escape(name)}</a>", escape(what), escape(plan), escape(code)]
        body.append(
            "<tr>"
            + "".join(f"<td class='text'>{c}</td>" for c in cells)
            + f"<td>{len(run.records)}</td><td class='{'fail' if down else ''}'>{down}</td></tr>"
        )
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _comparison_charts(data: dict[str, RunData]) -> str:
    """pass@1 and ACTION per domain, pass@1 per pattern (synthesized sets), pass@k curves: one series per run."""
    runs = {name: run.records for name, run in data.items() if run.records}
    if not runs:
        return "<p>no episodes</p>"
    charts = []
    by_domain = {name: {r.domain: r for r in summarize(results(recs), k=1)} for name, recs in runs.items()}
    domains = [*sorted({d for rows in by_domain.values() for d in rows} - {"all"}), "all"]

    def values(rows: dict[str, SummaryRow], attr: str, keys: list[str]) -> list[float]:
        return [getattr(rows[d], attr) if d in rows else math.nan for d in keys]

    charts.append(
        grouped_bars(
            "pass@1 by domain",
            domains,
            [(n, values(rows, "pass_at_1", domains)) for n, rows in by_domain.items()],
            1.0,
        )
    )
    charts.append(
        grouped_bars(
            "ACTION by domain",
            domains,
            [(n, values(rows, "action", domains)) for n, rows in by_domain.items()],
            1.0,
        )
    )
    if any(r.get("pattern") for recs in runs.values() for r in recs):
        by_pattern = {
            name: {r.domain: r for r in summarize(results(recs, "pattern"), k=1)}
            for name, recs in runs.items()
        }
        patterns = [*sorted({p for rows in by_pattern.values() for p in rows} - {"all"}), "all"]
        charts.append(
            grouped_bars(
                "pass@1 by pattern",
                patterns,
                [(n, values(rows, "pass_at_1", patterns)) for n, rows in by_pattern.items()],
                1.0,
            )
        )
    top = max(full_k(recs) for recs in runs.values())
    series = []
    for name, recs in runs.items():
        n = full_k(recs)
        series.append(
            (
                name,
                [
                    summarize(results(recs), k=k)[-1].pass_at_k if k <= n else math.nan
                    for k in range(1, top + 1)
                ],
            )
        )
    charts.append(curves("pass@k (all tasks)", list(range(1, top + 1)), series))
    return "<div class='charts'>" + "".join(charts) + "</div>"


def _md_tasks(run: int, tasks: Sequence[TaskRow]) -> list[str]:
    lines = [
        "| task | query | passed | final answer | RESPONSE | ENVIRONMENT | reason | episodes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in tasks:
        shown = row.shown
        r, e = verdict(shown)
        links = " ".join(
            f"[{'✓' if ep['reward'] else '✗'}](report.html#{anchor(run, str(ep['key']))})"
            for ep in row.episodes
        )
        lines.append(
            f"| {row.task} | {_md_cell(row.query)} | {row.passed}/{len(row.episodes)} "
            f"| {_md_cell(str(shown.get('final_message') or ''), 100)} | {r} | {e} "
            f"| {_md_cell(str(shown.get('reason') or ''), 120)} | {links} |"
        )
    return [*lines, ""]


def _html_tasks(run: int, tasks: Sequence[TaskRow]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in ("task", "query", "passed", "final answer", "RESPONSE", "ENVIRONMENT", "reason", "episodes")
    )
    body = []
    for row in tasks:
        shown = row.shown
        r, e = verdict(shown)
        links = "".join(
            f"<a class='ep {'pass' if ep['reward'] else 'fail'}' href='#{anchor(run, str(ep['key']))}' "
            f"title='seed {ep['seed']} rollout {ep['rollout']}'>{'✓' if ep['reward'] else '✗'}</a>"
            for ep in row.episodes
        )
        ok = "pass" if row.passed == len(row.episodes) else "fail" if row.passed == 0 else ""
        body.append(
            f"<tr><td class='id'><a href='#{anchor(run, str(shown['key']))}'>{escape(row.task)}</a></td>"
            f"<td class='text'>{escape(row.query)}</td><td class='{ok}'>{row.passed}/{len(row.episodes)}</td>"
            f"<td class='text'>{escape(_one_line(str(shown.get('final_message') or ''), 300))}</td>"
            f"<td class='{r}'>{r}</td><td class='{e}'>{e}</td>"
            f"<td class='text'>{escape(str(shown.get('reason') or ''))}</td><td class='text'>{links}</td></tr>"
        )
    return f"<table class='tasks'><tr>{head}</tr>{''.join(body)}</table>"


def _html_table(rows: Sequence[SummaryRow], guess: Sequence[Guess] = ()) -> str:
    def f(x: float) -> str:
        return "-" if math.isnan(x) else f"{x:.4f}"

    expected = by_domain(list(guess), rows[0].k if rows else 1) if guess else {}
    names = ["domain", "tasks", "episodes", "solved", "pass@1", "pass@k", "pass^k", "ACTION", "95% CI"]
    if expected:
        names.append("pool-guess pass@1 / pass@k")
    head = "<tr>" + "".join(f"<th>{h}</th>" for h in names) + "</tr>"
    body = []
    for r in rows:
        ci = "-" if math.isnan(r.ci_low) else f"[{r.ci_low:.4f}, {r.ci_high:.4f}]"
        cells: list[Any] = [
            r.domain,
            r.tasks,
            r.episodes,
            r.solved,
            f(r.pass_at_1),
            f"{f(r.pass_at_k)} (k={r.k})",
            f(r.pass_hat_k),
            f(r.action),
            ci,
        ]
        if expected:
            one, at_k = expected.get(r.domain, (math.nan, math.nan))
            cells.append(f"{f(one)} / {f(at_k)}")
        body.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return "<table>" + head + "".join(body) + "</table>"

"""Turning episode records into the results table (the paper's shape: per domain and overall) and into the report
a person reads first: what ran and with which settings, the runs compared as charts (per domain, per pattern,
pass@k curves), and one table of tasks with the runs side by side (the Korean query, the expected answer, each
run's reply, verdict and reason), which a few lines of script filter (failed only, a domain, a search) and sort.

The transcripts (every episode's messages and calls) are pages of their own, one per run and task, written beside
the report under `episodes/` and opened on demand in a frame of the report, so the report stays small (a run of
1,800 episodes is a report of a few hundred kilobytes) and works without script, as plain links."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from kopa_gen.evaluate.charts import curves, grouped_bars
from kopa_gen.evaluate.guess import Guess, by_domain, from_manifest, summary_line
from kopa_gen.evaluate.rundir import INFRASTRUCTURE, describe
from kopa_gen.evaluate.stats import EpisodeResult, SummaryRow, rollouts_per_seed, summarize
from kopa_gen.evaluate.transcript import STYLE as TRANSCRIPT_STYLE
from kopa_gen.evaluate.transcript import anchor, axis, episode_section, verdict
from kopa_gen.language.records import RunManifest

FONTS = "'Noto Sans CJK KR', 'Noto Sans KR', 'Apple SD Gothic Neo', 'Malgun Gothic', sans-serif"
STYLE = (
    f"body{{font-family:{FONTS};max-width:1400px;margin:2em auto;padding:0 1em;line-height:1.45}}"
    "table{border-collapse:collapse;margin:0.5em 0 1em}td,th{border:1px solid #ccc;padding:4px 8px;"
    "text-align:right;vertical-align:top}th{background:#eee;text-align:left}td.text{text-align:left;max-width:28em;"
    "overflow-wrap:anywhere}td.id{text-align:left;white-space:nowrap}.pass{color:#1a7f37}.fail{color:#c62828}.muted{color:#777}"
    ".charts{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}"
    "a.ep{text-decoration:none;margin-right:2px}.warn{background:#fff4e5;border:1px solid #f0b400;padding:6px 10px}"
    ".filters{display:flex;flex-wrap:wrap;gap:14px;align-items:center;margin:0.5em 0}"
    "td.expected{background:#f3f8f3}.reply{max-height:9em;overflow:auto}"
    "iframe{width:100%;height:70vh;border:1px solid #ccc}"
)
EPISODES = "episodes"
"""The folder beside the report that holds the transcript pages (`episodes/r<run>/<task>.html`)."""

FILTER_SCRIPT = """<script>
(() => {
  const rows = Array.from(document.querySelectorAll('table.tasks tbody tr'));
  const body = document.querySelector('table.tasks tbody');
  const failed = document.getElementById('failed'), domain = document.getElementById('domain');
  const search = document.getElementById('search'), sort = document.getElementById('sort');
  const shown = document.getElementById('shown');
  const apply = () => {
    const words = search.value.trim().toLowerCase().split(/\\s+/).filter(Boolean);
    let n = 0;
    for (const row of rows) {
      const text = row.textContent.toLowerCase();
      const ok = (!failed.checked || row.dataset.failed === '1') &&
        (!domain.value || row.dataset.domain === domain.value) && words.every(w => text.includes(w));
      row.hidden = !ok;
      n += ok;
    }
    shown.textContent = n + ' of ' + rows.length + ' tasks';
  };
  const order = () => {
    const key = sort.value;
    const sorted = rows.slice().sort((a, b) => key === 'rate'
      ? Number(a.dataset.rate) - Number(b.dataset.rate) || a.dataset.task.localeCompare(b.dataset.task)
      : key === 'task' ? a.dataset.task.localeCompare(b.dataset.task) : Number(a.dataset.order) - Number(b.dataset.order));
    for (const row of sorted) body.appendChild(row);
  };
  for (const el of [failed, domain, search]) el.addEventListener('input', apply);
  sort.addEventListener('input', order);
  document.getElementById('filters').hidden = false;
  apply();
  // the episode frame: hidden until a mark is clicked, then brought into view, with a way back to the row
  const box = document.getElementById('transcript-box'), back = document.getElementById('back');
  let from = null;
  box.hidden = true;
  body.addEventListener('click', (event) => {
    const mark = event.target.closest('a.ep');
    if (!mark) return;
    from = mark.closest('tr');
    back.textContent = '↑ back to ' + from.dataset.task + ' in the table';
    back.hidden = false;
    box.hidden = false;
    box.scrollIntoView();
  });
  back.addEventListener('click', (event) => {
    event.preventDefault();
    if (from) from.scrollIntoView({block: 'center'});
  });
})();
</script>"""


@dataclass(frozen=True)
class RunData:
    """One run folder as the report reads it: the latest record of each episode and its run.json."""

    records: list[dict[str, Any]]
    manifest: RunManifest | None = None


@dataclass(frozen=True)
class Report:
    """What `kopa-gen report` writes: report.md, report.html and the transcript pages (path under the report's
    folder -> HTML), and the warnings it also prints."""

    md: str
    html: str
    pages: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.md").write_text(self.md, encoding="utf-8")
        (folder / "report.html").write_text(self.html, encoding="utf-8")
        for name, page in self.pages.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page, encoding="utf-8")


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
    """The k `eval` and `report` show pass@k for unless told otherwise, and the curves' last k: the rollouts per
    seed (the fewest episodes any task has in any seed). Episodes that failed for infrastructure are not counted
    (`results` leaves them out)."""
    return rollouts_per_seed(results(records))


def _guess_of(records: Sequence[dict[str, Any]], manifest: RunManifest | None) -> list[Guess]:
    """The pool-guess figures of the run's tasks, from run.json."""
    entry = manifest.pool_guess if manifest is not None else {}
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
    records: Sequence[dict[str, Any]], k: int | None = None, manifest: RunManifest | None = None
) -> None:
    """The results table `kopa-gen eval` prints: the same as the report's for the same run and k."""
    k = k or full_k(records)
    guess = _guess_of(records, manifest)
    print(table(summarize(results(records), k=k), guess))
    if guess:
        print(summary_line(guess, k))
    usage = token_totals(records)
    if usage is not None:
        print(f"tokens: {usage[0]:,} prompt, {usage[1]:,} completion over {usage[2]} episodes")


def token_totals(records: Sequence[dict[str, Any]]) -> tuple[int, int, int] | None:
    """(prompt, completion, episodes) summed over the episodes that recorded usage; None when none did."""
    counted = [r["usage"] for r in records if r.get("usage")]
    if not counted:
        return None
    return (
        sum(u["prompt_tokens"] for u in counted),
        sum(u["completion_tokens"] for u in counted),
        len(counted),
    )


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

    @property
    def expected(self) -> str:
        return str(next((e["expected"] for e in self.episodes if e.get("expected")), "") or "")


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


def page_name(run: int, task: str) -> str:
    """The transcript page of one task of one run, relative to the report's folder."""
    return f"{EPISODES}/r{run}/{re.sub(r'[^A-Za-z0-9_.-]', '-', task)}.html"


def task_set_warnings(data: dict[str, RunData]) -> list[str]:
    """What makes the runs' numbers incomparable: another task set, tasks only some runs have, a task whose
    content (spec or gold fixture) differs between runs."""
    if len(data) < 2:
        return []
    out: list[str] = []
    sets = {
        name: (run.manifest.task_set.kind, run.manifest.task_set.path) if run.manifest else None
        for name, run in data.items()
    }
    if len({s for s in sets.values() if s is not None}) > 1:
        out.append(
            "warning: the runs are of different task sets ("
            + "; ".join(f"{n}: {s[0]} {s[1]}" for n, s in sets.items() if s)
            + ")"
        )
    ran = {name: {r["task"] for r in run.records} for name, run in data.items()}
    common = set.intersection(*ran.values()) if ran else set()
    apart = {name: sorted(tasks - common) for name, tasks in ran.items() if tasks - common}
    if apart:
        out.append(
            f"warning: the runs differ in their tasks ({len(common)} in common); only in "
            + "; ".join(
                f"{n}: {len(t)} ({', '.join(t[:5])}{' ...' if len(t) > 5 else ''})" for n, t in apart.items()
            )
            + ". The tables compare different sets; compare the tasks all runs have"
        )
    hashes: dict[str, set[str]] = defaultdict(set)
    for run in data.values():
        if run.manifest is not None:
            for task in common:
                if task in run.manifest.tasks:
                    hashes[task].add(run.manifest.tasks[task])
    changed = sorted(t for t, h in hashes.items() if len(h) > 1)
    if changed:
        out.append(
            f"warning: {len(changed)} tasks differ in content between the runs (spec or gold fixture changed): "
            + ", ".join(changed[:10])
            + (" ..." if len(changed) > 10 else "")
        )
    return out


def render_report(runs: dict[str, RunData] | dict[str, list[dict[str, Any]]], k: int | None = None) -> Report:
    """Markdown, an HTML page (UTF-8, Korean fonts) and the transcript pages for one run or several side by side.
    `k` is the table's pass@k (default: each run's rollouts per seed, as `kopa-gen eval` prints it)."""
    data = {name: run if isinstance(run, RunData) else RunData(list(run)) for name, run in runs.items()}
    names = list(data)
    warnings = task_set_warnings(data)
    md = ["# KOPA-Bench report", ""]
    md += [f"> {w}" for w in warnings] + ([""] if warnings else [])
    html = [
        "<!doctype html><html lang='ko'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'><title>KOPA-Bench report</title>",
        f"<style>{STYLE}</style></head><body><h1 id='top'>KOPA-Bench report</h1>",
        *(f"<p class='warn'>{escape(w)}</p>" for w in warnings),
    ]
    md += _md_runs(data)
    html.append(_html_runs(data))
    settings = _settings_rows(data)
    if settings:
        md += ["## Settings", "", *_md_settings(names, settings), ""]
        html.append("<h2>Settings</h2>" + _html_settings(names, settings))
    html.append("<h2>Comparison</h2>")
    html.append(_comparison_charts(data))
    for i, (name, run) in enumerate(data.items()):
        records = run.records
        if not records:
            md += [f"## {name}", "", "no episodes", ""]
            html.append(f"<h2>{escape(name)}</h2><p>no episodes</p>")
            continue
        rows = summarize(results(records), k=k or full_k(records))
        failures = Counter(failure_category(r) for r in records)
        guess = _guess_of(records, run.manifest)
        md += [f"## {name}", "", table(rows, guess), ""]
        md += [
            "| outcome | episodes |",
            "|---|---|",
            *[f"| {c} | {n} |" for c, n in failures.most_common()],
            "",
        ]
        html.append(f"<h2 id='run-{i}'>{escape(name)}</h2>")
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
    per_run = {name: {row.task: row for row in task_rows(run.records)} for name, run in data.items()}
    md += _md_tasks(names, per_run)
    html.append("<h2 id='tasks'>Tasks</h2>")
    html.append(_html_tasks(names, per_run))
    html.append(
        "<div id='transcript-box'><h2 id='transcript'>Episode</h2><p class='muted'>Click a ✓ or ✗ above to open "
        "an episode here (its messages and calls). <a href='#tasks' id='back' hidden>↑ back to the table</a></p>"
        "<iframe name='transcript' title='episode'></iframe></div>"
    )
    html.append(FILTER_SCRIPT)
    html.append("</body></html>")
    pages = {
        page_name(i, task): _transcript_page(i, name, row)
        for i, name in enumerate(names)
        for task, row in per_run[name].items()
    }
    return Report("\n".join(md) + "\n", "\n".join(html) + "\n", pages, warnings)


def _transcript_page(run: int, name: str, row: TaskRow) -> str:
    head = (
        "<!doctype html><html lang='ko'><head><meta charset='utf-8'>"
        f"<title>{escape(name)} · {escape(row.task)}</title><style>{STYLE}{TRANSCRIPT_STYLE}</style></head><body>"
    )
    intro = (
        f"<h2 id='top'>{escape(name)} · {escape(row.task)}</h2><p>{escape(row.query)}</p>"
        f"<p><b>expected</b>: {escape(row.expected or '-')} · passed {row.passed}/{len(row.episodes)}</p>"
    )
    return head + intro + "\n".join(episode_section(run, name, e) for e in row.episodes) + "</body></html>\n"


def _what_ran(run: RunData) -> tuple[str, str, str]:
    m = run.manifest
    if m is None:
        return "(no run.json)", "-", "-"
    versions = ", ".join(m.code_versions) or "-"
    plan = f"seeds {m.seeds}, rollouts {m.rollouts}, task set {m.task_set.hash[:12]}"
    return describe(m), plan, versions


def _md_runs(data: dict[str, RunData]) -> list[str]:
    lines = [
        "| run | what ran | plan | code | episodes | failed-infrastructure | tokens (prompt / completion) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, run in data.items():
        what, plan, code = _what_ran(run)
        down = sum(r.get("stop_reason") == INFRASTRUCTURE for r in run.records)
        lines.append(
            f"| {name} | {_md_cell(what)} | {plan} | {code} | {len(run.records)} | {down} | {_tokens(run.records)} |"
        )
    return [*lines, ""]


def _tokens(records: Sequence[dict[str, Any]]) -> str:
    usage = token_totals(records)
    if usage is None:
        return "-"
    prompt, completion, n = usage
    return f"{prompt:,} / {completion:,} ({n} episodes)"


def _html_runs(data: dict[str, RunData]) -> str:
    names = (
        "run",
        "what ran",
        "plan",
        "code",
        "episodes",
        "failed-infrastructure",
        "tokens (prompt / completion)",
    )
    head = "".join(f"<th>{h}</th>" for h in names)
    body = []
    for i, (name, run) in enumerate(data.items()):
        what, plan, code = _what_ran(run)
        down = sum(r.get("stop_reason") == INFRASTRUCTURE for r in run.records)
        cells = [escape(what), escape(plan), escape(code)]
        body.append(
            f"<tr><td class='id'><a href='#run-{i}'>{escape(name)}</a></td>"
            + "".join(f"<td class='text'>{c}</td>" for c in cells)
            + f"<td>{len(run.records)}</td><td class='{'fail' if down else ''}'>{down}</td>"
            + f"<td>{escape(_tokens(run.records))}</td></tr>"
        )
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _flat(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict) and value and prefix not in ("generation.extra_body",):
        for key, inner in value.items():
            _flat(f"{prefix}.{key}" if prefix else key, inner, out)
    else:
        out[prefix] = (
            "-" if value is None else str(value if not isinstance(value, dict | list) else _json(value))
        )


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _settings_rows(data: dict[str, RunData]) -> dict[str, dict[str, str]]:
    """setting -> run -> value: the tool-result budget, the endpoint's and the agent's settings of each run."""
    rows: dict[str, dict[str, str]] = defaultdict(dict)
    for name, run in data.items():
        m = run.manifest
        if m is None:
            continue
        flat: dict[str, str] = {"tool_result_chars": str(m.tool_result_chars or "no cut")}
        if m.endpoint is not None:
            _flat("", m.endpoint.model_dump(mode="json", exclude={"api_key_env"}), flat)
        if m.agent is not None:
            _flat("agent", m.agent.model_dump(mode="json"), flat)
        if m.judge is not None:
            flat["judge"] = f"{m.judge.endpoint.model} at {m.judge.endpoint.base_url} ({m.judge.rubric})"
        for key, value in flat.items():
            rows[key][name] = value
    return rows if any(len(v) for v in rows.values()) else {}


def _md_settings(names: list[str], rows: dict[str, dict[str, str]]) -> list[str]:
    lines = ["| setting | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for key, values in rows.items():
        lines.append(f"| {key} | " + " | ".join(_md_cell(values.get(n, "-"), 80) for n in names) + " |")
    return lines


def _html_settings(names: list[str], rows: dict[str, dict[str, str]]) -> str:
    head = "<tr><th>setting</th>" + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr>"
    body = []
    for key, values in rows.items():
        differ = len({values.get(n, "-") for n in names}) > 1
        cells = "".join(
            f"<td class='text{' fail' if differ else ''}'>{escape(values.get(n, '-'))}</td>" for n in names
        )
        body.append(f"<tr><td class='id'>{escape(key)}</td>{cells}</tr>")
    return f"<table>{head}{''.join(body)}</table>"


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
        scored = results(recs)
        series.append(
            (name, [summarize(scored, k=k)[-1].pass_at_k if k <= n else math.nan for k in range(1, top + 1)])
        )
    charts.append(curves("pass@k (all tasks, per seed)", list(range(1, top + 1)), series))
    return "<div class='charts'>" + "".join(charts) + "</div>"


def _marks_md(run: int, row: TaskRow) -> str:
    page = page_name(run, row.task)
    return " ".join(
        f"[{'✓' if e['reward'] else '✗'}]({page}#{anchor(run, str(e['key']))})" for e in row.episodes
    )


def _md_tasks(names: list[str], per_run: dict[str, dict[str, TaskRow]]) -> list[str]:
    head = "| task | query | expected |"
    rule = "|---|---|---|"
    for name in names:
        head += f" {name}: passed | reply | RESPONSE | ENVIRONMENT | reason | episodes |"
        rule += "---|---|---|---|---|---|"
    lines = ["## Tasks", "", head, rule]
    for task in _task_order(per_run):
        first = next(rows[task] for rows in per_run.values() if task in rows)
        line = f"| {task} | {_md_cell(first.query)} | {_md_cell(first.expected or '-', 240)} |"
        for i, name in enumerate(names):
            row = per_run[name].get(task)
            if row is None:
                line += " - | - | - | - | - | - |"
                continue
            shown = row.shown
            r, e = verdict(shown)
            line += (
                f" {row.passed}/{len(row.episodes)} | {_md_cell(str(shown.get('final_message') or ''), 100)} "
                f"| {r} | {e} | {_md_cell(str(shown.get('reason') or ''), 120)} | {_marks_md(i, row)} |"
            )
        lines.append(line)
    return [*lines, ""]


def _task_order(per_run: dict[str, dict[str, TaskRow]]) -> list[str]:
    rows = {task: row for runs in per_run.values() for task, row in runs.items()}
    return sorted(rows, key=lambda t: (rows[t].domain, t))


def _html_tasks(names: list[str], per_run: dict[str, dict[str, TaskRow]]) -> str:
    order = _task_order(per_run)
    domains = sorted({row.domain for rows in per_run.values() for row in rows.values()})
    options = "".join(f"<option value='{escape(d)}'>{escape(d)}</option>" for d in domains)
    filters = (
        "<div class='filters' id='filters' hidden>"
        "<label><input type='checkbox' id='failed'> failed only</label>"
        f"<label>domain <select id='domain'><option value=''>all</option>{options}</select></label>"
        "<label>search <input type='search' id='search' placeholder='task, query, answer, reason'></label>"
        "<label>sort <select id='sort'><option value='domain'>by domain</option><option value='task'>by task"
        "</option><option value='rate'>by pass rate</option></select></label><span id='shown' class='muted'>"
        "</span></div>"
    )
    head = "<tr><th>task</th><th>query</th><th>expected</th>"
    head += "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr>"
    body = []
    for position, task in enumerate(order):
        first = next(rows[task] for rows in per_run.values() if task in rows)
        cells = []
        failed = False
        rates = []
        for i, name in enumerate(names):
            row = per_run[name].get(task)
            if row is None:
                cells.append("<td class='muted text'>not run</td>")
                continue
            failed |= row.passed < len(row.episodes)
            rates.append(row.passed / len(row.episodes))
            cells.append(_run_cell(i, row))
        rate = min(rates, default=0.0)
        body.append(
            f"<tr data-task='{escape(task)}' data-domain='{escape(first.domain)}' data-failed='{int(failed)}' "
            f"data-rate='{rate:.4f}' data-order='{position}'><td class='id'>{escape(task)}<br>"
            f"<span class='muted'>{escape(first.domain)}</span></td><td class='text'>{escape(first.query)}</td>"
            f"<td class='text expected'>{escape(first.expected or '-')}</td>{''.join(cells)}</tr>"
        )
    table_html = f"<table class='tasks'><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
    return filters + table_html


def _run_cell(run: int, row: TaskRow) -> str:
    shown = row.shown
    r, e = verdict(shown)
    page = page_name(run, row.task)
    marks = "".join(
        f"<a class='ep {'pass' if ep['reward'] else 'fail'}' target='transcript' "
        f"href='{page}#{anchor(run, str(ep['key']))}' title='seed {ep['seed']} rollout {ep['rollout']}'>"
        f"{'✓' if ep['reward'] else '✗'}</a>"
        for ep in row.episodes
    )
    ok = "pass" if row.passed == len(row.episodes) else "fail" if row.passed == 0 else ""
    reply = escape(_one_line(str(shown.get("final_message") or ""), 300))
    return (
        f"<td class='text'><b class='{ok}'>{row.passed}/{len(row.episodes)}</b> {marks}"
        f"<div class='reply'>{reply}</div><div class='muted'>{axis('RESPONSE', r)} · {axis('ENVIRONMENT', e)} · "
        f"{escape(str(shown.get('reason') or ''))}</div></td>"
    )


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

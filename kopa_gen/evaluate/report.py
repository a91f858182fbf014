"""Turning episode records into the results table (the paper's shape: per domain and overall)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from kopa_gen.evaluate.stats import EpisodeResult, SummaryRow, summarize


def results(records: Sequence[dict[str, Any]]) -> list[EpisodeResult]:
    return [
        EpisodeResult(
            task_id=r["task"],
            domain=r["domain"],
            seed=r["seed"],
            rollout=r["rollout"],
            passed=bool(r["reward"]),
            action=float(r["action"]["action"]) if r.get("action") else math.nan,
        )
        for r in records
    ]


def table(rows: Sequence[SummaryRow]) -> str:
    def f(x: float) -> str:
        return "-" if math.isnan(x) else f"{x:.4f}"

    head = "| domain | tasks | episodes | solved | pass@1 | pass@k (k) | pass^k | ACTION | 95% CI pass@1 (seeds) |"
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = "-" if math.isnan(r.ci_low) else f"[{r.ci_low:.4f}, {r.ci_high:.4f}] ({r.seeds})"
        lines.append(
            f"| {r.domain} | {r.tasks} | {r.episodes} | {r.solved} | {f(r.pass_at_1)} | {f(r.pass_at_k)} ({r.k}) "
            f"| {f(r.pass_hat_k)} | {f(r.action)} | {ci} |"
        )
    return "\n".join(lines)


def print_summary(records: Sequence[dict[str, Any]], k: int) -> None:
    print(table(summarize(results(records), k=k)))


def failure_category(record: dict[str, Any]) -> str:
    """Why an episode did not earn the reward, in one word (for the failure chart)."""
    if record["reward"]:
        return "passed"
    if record["stop_reason"] in ("error", "timeout", "budget"):
        return str(record["stop_reason"])
    if not record["calls"]:
        return "no calls"
    if record.get("response") and not record["response"]["passed"]:
        return "wrong answer"
    if record.get("environment") is False:
        return "wrong state"
    return "other"


def _bars(title: str, items: list[tuple[str, float]], maximum: float, fmt: str = "{:.2f}") -> str:
    """A horizontal bar chart as inline SVG (no plotting library; the page stays self-contained)."""
    height = 22 * len(items) + 30
    parts = [
        f'<svg width="560" height="{height}" role="img" aria-label="{escape(title)}">',
        f'<text x="0" y="14" font-weight="bold">{escape(title)}</text>',
    ]
    for i, (label, value) in enumerate(items):
        y = 24 + 22 * i
        width = 0 if maximum <= 0 or math.isnan(value) else 360 * value / maximum
        shown = "-" if math.isnan(value) else fmt.format(value)
        parts.append(f'<text x="0" y="{y + 13}" font-size="12">{escape(label)}</text>')
        parts.append(f'<rect x="170" y="{y}" width="{width:.1f}" height="16" fill="#3b6ea5"/>')
        parts.append(f'<text x="{175 + width:.1f}" y="{y + 13}" font-size="12">{shown}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_report(runs: dict[str, list[dict[str, Any]]], k: int) -> tuple[str, str]:
    """Markdown and a self-contained HTML page for one run or several side by side."""
    from collections import Counter

    md = ["# KOPA-Bench report", ""]
    html = [
        "<!doctype html><html><head><meta charset='utf-8'><title>KOPA-Bench report</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#eee}</style></head><body>",
        "<h1>KOPA-Bench report</h1>",
    ]
    for name, records in runs.items():
        rows = summarize(results(records), k=k)
        md += [f"## {name}", "", table(rows), ""]
        html.append(f"<h2>{escape(name)}</h2>")
        html.append(_html_table(rows))
        html.append(_bars(f"pass@1 by domain ({name})", [(r.domain, r.pass_at_1) for r in rows], 1.0))
        html.append(_bars(f"pass@{k} by domain ({name})", [(r.domain, r.pass_at_k) for r in rows], 1.0))
        calls = Counter(len(r["calls"]) for r in records)
        most = max(calls.values()) if calls else 1
        html.append(
            _bars(
                f"episodes by number of calls ({name})",
                [(f"{n} calls", float(calls[n])) for n in sorted(calls)],
                most,
                "{:.0f}",
            )
        )
        failures = Counter(failure_category(r) for r in records)
        html.append(
            _bars(
                f"outcomes ({name})",
                [(c, float(n)) for c, n in failures.most_common()],
                max(failures.values()),
                "{:.0f}",
            )
        )
        md += [
            "| outcome | episodes |",
            "|---|---|",
            *[f"| {c} | {n} |" for c, n in failures.most_common()],
            "",
        ]
    html.append("</body></html>")
    return "\n".join(md) + "\n", "\n".join(html) + "\n"


def _html_table(rows: Sequence[SummaryRow]) -> str:
    def f(x: float) -> str:
        return "-" if math.isnan(x) else f"{x:.4f}"

    head = (
        "<tr>"
        + "".join(
            f"<th>{h}</th>"
            for h in (
                "domain",
                "tasks",
                "episodes",
                "solved",
                "pass@1",
                "pass@k",
                "pass^k",
                "ACTION",
                "95% CI",
            )
        )
        + "</tr>"
    )
    body = []
    for r in rows:
        ci = "-" if math.isnan(r.ci_low) else f"[{r.ci_low:.4f}, {r.ci_high:.4f}]"
        cells = (
            r.domain,
            r.tasks,
            r.episodes,
            r.solved,
            f(r.pass_at_1),
            f"{f(r.pass_at_k)} (k={r.k})",
            f(r.pass_hat_k),
            f(r.action),
            ci,
        )
        body.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return "<table>" + head + "".join(body) + "</table>"

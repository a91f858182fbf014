"""One episode as the report shows it: the verdict and its reason, the expected answer and the tokens, the
messages (tool calls with their arguments, tool results as formatted JSON, long ones folded) and the call log.
HTML only, escaped, no script; the report writes them into transcript pages of their own (one per run and
task) that it opens on demand."""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any

STYLE = (
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;padding:6px;margin:4px 0}"
    "pre.say{font-family:inherit;font-size:inherit}"
    ".episode{border-top:1px solid #ccc;margin-top:1em}.msg{margin:6px 0 6px 0.5em}"
    ".role{font-weight:bold;color:#555}:target{outline:3px solid #f0b400}"
)
"""The transcript pages' own style, added to the report's."""

LONG = 600  # characters after which a tool result or system prompt is folded
MAX = 4000  # characters of one message kept in the report


def anchor(run: int, key: str) -> str:
    """The HTML id of an episode of the run numbered `run` (ids allow only a few characters)."""
    return f"ep-{run}-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)


def verdict(record: dict[str, Any]) -> tuple[str, str]:
    """(RESPONSE, ENVIRONMENT) as pass / fail / - for the tables."""
    response = record.get("response")
    r = "-" if not response else ("pass" if response.get("passed") else "fail")
    env = record.get("environment")
    e = "-" if env is None else ("pass" if env else "fail")
    return r, e


def axis(name: str, value: str) -> str:
    """One reward axis in the HTML: `RESPONSE pass`, `ENVIRONMENT fail`, or `ENVIRONMENT not scored` (the task's
    reward does not use it)."""
    if value == "-":
        return f"{name} <span class='muted'>not scored</span>"
    return f"{name} <span class='{value}'>{value}</span>"


def _pretty(text: str) -> str:
    """JSON text indented (Korean kept as is); anything else unchanged."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return text
    if not isinstance(value, dict | list):
        return text
    return json.dumps(value, ensure_ascii=False, indent=1)


def _clip(text: str) -> str:
    return text if len(text) <= MAX else text[:MAX] + f"\n… ({len(text) - MAX} more characters)"


def _block(text: str, summary: str | None = None) -> str:
    body = f"<pre>{escape(_clip(text))}</pre>"
    if summary is None and len(text) <= LONG:
        return body
    head = summary or text[:80].replace("\n", " ") + " …"
    return f"<details><summary>{escape(head)}</summary>{body}</details>"


def _arguments(raw: Any) -> str:
    if isinstance(raw, str):
        return _pretty(raw)
    return json.dumps(raw, ensure_ascii=False, indent=1)


def _message(m: dict[str, Any]) -> str:
    role = str(m.get("role", "?"))
    content = m.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False) if content else ""
    parts = [f"<div class='msg {escape(role)}'><div class='role'>{escape(role)}"]
    if role == "tool" and m.get("tool_call_id"):
        parts.append(f" <span class='muted'>{escape(str(m['tool_call_id']))}</span>")
    parts.append("</div>")
    if role == "system":
        parts.append(_block(text, "system prompt"))
    elif role == "tool":
        parts.append(_block(_pretty(text)))
    elif text:
        parts.append(f"<pre class='say'>{escape(_clip(text))}</pre>")
    for call in m.get("tool_calls") or []:
        fn = call.get("function") or {}
        args = _arguments(fn.get("arguments"))
        parts.append(
            f"<div class='call'>→ <b>{escape(str(fn.get('name')))}</b></div><pre>{escape(args)}</pre>"
        )
    parts.append("</div>")
    return "".join(parts)


def _calls(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return "<p class='muted'>no tool calls</p>"
    rows = []
    for c in calls:
        args = json.dumps(c.get("arguments"), ensure_ascii=False)
        status = c.get("error_code") or ("error" if c.get("is_error") else "ok")
        rows.append(
            f"<tr><td>{c.get('index')}</td><td class='id'>{escape(str(c.get('tool')))}</td><td class='text'>"
            f"{escape(args)}</td><td class='{'fail' if c.get('is_error') else 'pass'}'>{escape(str(status))}</td>"
            f"<td>{float(c.get('elapsed_ms') or 0):.0f}</td></tr>"
        )
    head = "<tr><th>#</th><th>tool</th><th>arguments</th><th>result</th><th>ms</th></tr>"
    return f"<table class='calls'>{head}{''.join(rows)}</table>"


def episode_section(run: int, run_name: str, record: dict[str, Any]) -> str:
    """An anchored section for one episode."""
    r, e = verdict(record)
    reward = "pass" if record.get("reward") else "fail"
    action = (record.get("action") or {}).get("action")
    response = record.get("response") or {}
    facts = [
        f"reward <b class='{reward}'>{reward}</b>",
        axis("RESPONSE", r),
        axis("ENVIRONMENT", e),
        f"ACTION {action:.2f}" if isinstance(action, int | float) else "ACTION -",
        f"stop: {escape(str(record.get('stop_reason')))}",
        f"{len(record.get('calls') or [])} calls",
    ]
    out = [
        f"<section class='episode' id='{anchor(run, str(record['key']))}'>",
        f"<h4>{escape(run_name)} · {escape(str(record['task']))} · seed {record.get('seed')} · rollout "
        f"{record.get('rollout')}</h4>",
        f"<p>{' · '.join(facts)}</p>",
        f"<p><b>reason</b>: {escape(str(record.get('reason') or ''))}</p>",
    ]
    if record.get("expected"):
        out.append(f"<p><b>expected</b>: {escape(str(record['expected']))}</p>")
    if response.get("extracted"):
        out.append(f"<p><b>read as</b>: {escape(str(response['extracted']))}</p>")
    usage = record.get("usage")
    if usage:
        per_turn = ", ".join(
            f"{t['prompt_tokens']}+{t['completion_tokens']}" if t else "-" for t in usage.get("turns") or []
        )
        out.append(
            f"<p><b>tokens</b>: {usage['prompt_tokens']:,} prompt, {usage['completion_tokens']:,} completion "
            f"<span class='muted'>(per turn, prompt+completion: {escape(per_turn)})</span></p>"
        )
    if record.get("error"):
        out.append(f"<p class='fail'><b>error</b>: {escape(str(record['error']))}</p>")
    out.append(
        f"<p><b>final answer</b></p><pre class='say'>{escape(_clip(str(record.get('final_message') or '')))}</pre>"
    )
    out.append("<details open><summary>messages</summary>")
    out += [_message(m) for m in record.get("messages") or []]
    out.append("</details>")
    out.append("<details open><summary>calls</summary>" + _calls(record.get("calls") or []) + "</details>")
    out.append("<p><a href='#top'>back to the top</a></p></section>")
    return "\n".join(out)

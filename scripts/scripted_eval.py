"""A run against a scripted OpenAI-compatible server over HTTP (not a test): `kopa_gen.policies.double.ChatDouble`
serves /v1/chat/completions on a loopback port, answering with a script made from one task's gold chain (each gold
call as a tool call, then submit_answer with the gold answer, each reply with scripted token counts), and
`kopa-gen eval` runs against it through its command line with every generation and agent setting given. It prints
the run's run.json, what the server was sent, and the report's totals: the closing-note record of issue 27.

The double is a protocol double, not a model: the answers are scripted, the token counts are the script's.

Usage: python scripts/scripted_eval.py [--task fin-003] [--rollouts 3] [--out runs/scripted]
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from kopa_gen.cli import main as cli
from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.language.answers import NumberAnswer, answer_text
from kopa_gen.policies.double import ChatDouble, Reply, Step, ToolCall
from kopa_gen.project import load_project


def script(task_id: str, rollouts: int) -> list[Step]:
    """The preflight's answer, then per rollout: every gold call in chain order, one per reply, and the answer."""
    project = load_project()
    task = project.task(task_id)
    if task.answer is None:
        raise SystemExit(f"{task_id} has no answer to submit; pick a task scored on RESPONSE")
    fixture = load_fixture(project, task)
    calls = [ToolCall(c["tool"], c["args"]) for step in fixture["steps"] for c in step]
    value: Any = getattr(task.answer, "value", fixture["answer_value"])  # typed: 3070, not "3,070"
    value = value.isoformat() if hasattr(value, "isoformat") else value
    unit = task.answer.unit if isinstance(task.answer, NumberAnswer) else None
    submit = {"answer": value} | ({"unit": unit} if unit else {})
    episode: list[Step] = [
        Reply(content=f"{c.name}부터 확인하겠습니다.", tool_calls=[c], usage=(2000 + 900 * i, 40 + i))
        for i, c in enumerate(calls)
    ]
    episode.append(
        Reply(
            content=f"답은 {answer_text(task.answer)}입니다.",
            tool_calls=[ToolCall("submit_answer", submit)],
            usage=(2000 + 900 * len(calls), 37),
        )
    )
    return [Reply(content="OK", usage=(12, 1)), *(episode * rollouts)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="fin-003")
    parser.add_argument("--rollouts", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("runs/scripted"))
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    steps = script(args.task, args.rollouts)
    with ChatDouble(steps) as double:
        command = [
            "eval",
            "--policy", "openai",
            "--base-url", double.base_url,
            "--model", "scripted-qwen",
            "--tasks", args.task,
            "--rollouts", str(args.rollouts),
            "--concurrency", "1",
            "--out", str(args.out),
            "--timeout", "45",
            "--retries", "2",
            "--backoff", "0.5",
            "--temperature", "0.6",
            "--top-p", "0.95",
            "--max-tokens", "2048",
            "--sampling-seed", "7",
            "--stop", "<|im_end|>",
            "--extra-body", '{"chat_template_kwargs": {"enable_thinking": false}, "top_k": 20}',
            "--episode-timeout", "300",
            "--max-turns", "12",
            "--no-parallel-tool-calls",
            "--budget-grace",
            "--tool-mode", "native",
            "--tool-result-chars", "20000",
        ]  # fmt: skip
        print("$ kopa-gen " + " ".join(command), flush=True)
        status = cli(command)
        bodies = double.bodies
    print(f"exit status {status}; the server was sent {len(bodies)} requests")
    sent = {k: v for k, v in bodies[1].items() if k not in ("messages", "tools", "seed")}
    print("every episode request carried, less its messages and tools:", json.dumps(sent, ensure_ascii=False))
    seeds = sorted({b.get("seed") for b in bodies[1:]})
    print(f"and a request seed per episode (--sampling-seed + 1000 x sandbox seed + rollout): {seeds}")
    assert all({k: v for k, v in b.items() if k in sent} == sent for b in bodies[1:])
    print("run.json:")
    print((args.out / "run.json").read_text(encoding="utf-8"))
    cli(["report", str(args.out)])
    html = args.out / "report.html"
    pages = list((args.out / "episodes").rglob("*.html"))
    print(f"report.html {html.stat().st_size:,} bytes, {len(pages)} transcript pages")


if __name__ == "__main__":
    main()

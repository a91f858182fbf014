"""Labelled replies for the RESPONSE grader, read against the benchmark's own tasks: what the grader tests are
checked against (tests/data/*_corpus.yaml), what `kopa-gen judge calibrate` asks a judge about, and what
scripts/corpus_table.py tabulates.

A case names a task, a mode and a labelled verdict:

    - task: fin-001
      mode: text                      # the reply is graded as a text-mode final message
      reply: '… 154,329,557,000원 …'
      expect: pass | fail
    - task: fin-001
      mode: submit                    # each object is one submit_answer call, in order
      calls: [{answer: 154329557, unit: 천원}]
      tool_errors: [0]                # (optional) the calls that must be refused as malformed
      expect: pass | fail

The answer and its pool come from the task's gold fixture, so a case is graded as an episode of that task is.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kopa_gen.evaluate.response import ResponseVerdict, score_submitted, score_text
from kopa_gen.evaluate.submission import SubmissionError, SubmitChannel
from kopa_gen.language.source import load_text
from kopa_gen.language.task import Task
from kopa_gen.project import Project


@dataclass(frozen=True)
class Case:
    task: str
    mode: str
    cls: str
    expect: bool
    reply: str | None
    calls: list[Any]
    tool_errors: list[int]
    why: str

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Case:
        return cls(
            task=str(raw["task"]),
            mode=str(raw["mode"]),
            cls=str(raw.get("class", "-")),
            expect=raw["expect"] == "pass",
            reply=raw.get("reply"),
            calls=list(raw.get("calls") or []),
            tool_errors=list(raw.get("tool_errors") or []),
            why=str(raw.get("why", "")),
        )


@dataclass(frozen=True)
class Graded:
    case: Case
    verdict: ResponseVerdict
    refused: list[int]  # the calls refused as malformed (submit mode)

    @property
    def agrees(self) -> bool:
        return self.verdict.passed == self.case.expect and (
            self.case.mode != "submit" or self.refused == self.case.tool_errors
        )


def load(path: Path) -> list[Case]:
    return [Case.of(raw) for raw in load_text(path.read_text(encoding="utf-8"), str(path)) or []]


def grade(case: Case, task: Task, fixture: Mapping[str, Any]) -> Graded:
    """The case graded as an episode of `task` in its mode (no judge)."""
    assert task.answer is not None, f"{task.id} has no answer to grade"
    pool = list(fixture.get("answer_pool") or [])
    if case.mode == "text":
        verdict = score_text(case.reply or "", task.answer, task.system.today.year, pool, task.query)
        return Graded(case, verdict, [])
    channel = SubmitChannel(task.answer)
    stated, refused = [], []
    for k, arguments in enumerate(case.calls):
        try:
            stated.append(channel.read(arguments))
        except SubmissionError:
            refused.append(k)
    return Graded(case, score_submitted(task.answer, stated, pool), refused)


FROZEN = Path("tests") / "data" / "corpus_tasks"
"""Under a project's root: the task specs and gold fixtures the corpora were written against, for tasks rewritten
since (`<id>.yaml` and `<id>.json`; see the folder's README)."""


def corpus_tasks(project: Project) -> dict[str, tuple[Task, dict[str, Any]]]:
    """Every task a corpus case may name, with its gold fixture: the benchmark's, except a rewritten one, which
    is read as the corpora knew it (FROZEN)."""
    out: dict[str, tuple[Task, dict[str, Any]]] = {}
    for _, task in project.tasks:
        path = project.fixtures_dir / task.domain / f"{task.id}.json"
        out[task.id] = (task, json.loads(path.read_text(encoding="utf-8")))
    for spec in sorted((project.root / FROZEN).glob("*.yaml")):
        frozen = Task.model_validate(yaml.safe_load(spec.read_text(encoding="utf-8")))
        out[frozen.id] = (frozen, json.loads(spec.with_suffix(".json").read_text(encoding="utf-8")))
    return out


def grade_all(cases: Iterable[Case], tasks: Mapping[str, tuple[Task, Mapping[str, Any]]]) -> list[Graded]:
    return [grade(c, *tasks[c.task]) for c in cases]


def table(graded: Sequence[Graded]) -> str:
    """Agreement by class and mode, as a markdown table (the closing notes print it)."""
    total: Counter[tuple[str, str]] = Counter()
    agree: Counter[tuple[str, str]] = Counter()
    for g in graded:
        key = (g.case.cls, g.case.mode)
        total[key] += 1
        agree[key] += g.agrees
    lines = ["| class | text | submit |", "|---|---|---|"]
    for cls in sorted({c for c, _ in total}):
        cells = [f"{agree[cls, m]}/{total[cls, m]}" if total[cls, m] else "-" for m in ("text", "submit")]
        lines.append(f"| {cls} | {cells[0]} | {cells[1]} |")
    for m in ("text", "submit"):
        n = sum(v for (_, mode), v in total.items() if mode == m)
        a = sum(v for (_, mode), v in agree.items() if mode == m)
        lines.append(f"| **all {m}** | {a}/{n} | |" if m == "text" else f"| **all {m}** | | {a}/{n} |")
    return "\n".join(lines)

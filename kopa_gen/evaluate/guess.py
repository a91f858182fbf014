"""What guessing earns: the exact expected score of the `pool-guess` policy, which makes the gold calls and then
answers one candidate of the answer's pool at random.

For a task, p = (pool candidates the grader passes) / (pool size), each candidate graded as `pool-guess` would
state it in the answer mode (a submission, or a `최종 답:` line). Its writes are the gold's, so a task scored on
ENVIRONMENT alone has p = 1, and a task with an empty pool p = 0. Rollouts draw independently, so the expected
pass@k of a task is 1 - (1 - p)^k, exactly; a set's figure is the mean over its tasks, as pass@k's is.
A model scoring at or below this has shown nothing the answer pool does not give away; a task with a small pool
(`kopa-gen build` warns at 5 candidates or fewer) gives much away.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kopa_gen.evaluate.response import score_submitted, score_text
from kopa_gen.evaluate.submission import SubmissionError, SubmitChannel
from kopa_gen.language.functions import to_text
from kopa_gen.language.task import AnswerMode, Task


@dataclass(frozen=True)
class Guess:
    """One task's pool and how much of it passes."""

    task: str
    domain: str
    pool: int
    passing: int
    scored: bool  # RESPONSE decides the task (else guessing changes nothing: p = 1)

    @property
    def p(self) -> Fraction:
        if not self.scored:
            return Fraction(1)
        return Fraction(self.passing, self.pool) if self.pool else Fraction(0)

    def pass_at(self, k: int) -> float:
        return float(1 - (1 - self.p) ** k)


def guess_task(task: Task, fixture: Mapping[str, Any], mode: AnswerMode) -> Guess:
    """The pool-guess figures of one task (`fixture`: its gold fixture, with `answer_pool`)."""
    pool = list(fixture.get("answer_pool") or [])
    if task.answer is None or "RESPONSE" not in task.reward:
        return Guess(task.id, task.domain, len(pool), len(pool), scored=False)
    channel = SubmitChannel(task.answer)
    year = task.system.today.year
    passing = 0
    for candidate in pool:
        if mode == "submit":
            try:
                stated = channel.read(channel.arguments_for(candidate))
            except SubmissionError:
                continue
            ok = score_submitted(task.answer, [stated], pool).passed
        else:
            ok = score_text(f"최종 답: {to_text(candidate)}", task.answer, year, pool).passed
        passing += ok
    return Guess(task.id, task.domain, len(pool), passing, scored=True)


def guesses(items: Iterable[tuple[Task, Mapping[str, Any]]], mode: AnswerMode) -> list[Guess]:
    return [guess_task(task, fixture, mode) for task, fixture in items]


def expectation(found: list[Guess], k: int) -> tuple[float, float]:
    """(expected pass@1, expected pass@k) over the tasks: means of the tasks' exact figures."""
    if not found:
        return float("nan"), float("nan")
    return (
        float(sum((g.p for g in found), Fraction(0)) / len(found)),
        sum(g.pass_at(k) for g in found) / len(found),
    )


def by_domain(found: list[Guess], k: int) -> dict[str, tuple[float, float]]:
    """Per domain and 'all': (expected pass@1, expected pass@k)."""
    domains = sorted({g.domain for g in found})
    out = {d: expectation([g for g in found if g.domain == d], k) for d in domains}
    out["all"] = expectation(found, k)
    return out


def manifest_entry(found: list[Guess]) -> dict[str, Any]:
    """What run.json keeps, so that `kopa-gen report` can print the expectation beside every run."""
    return {
        g.task: {"domain": g.domain, "pool": g.pool, "passing": g.passing, "scored": g.scored} for g in found
    }


def from_manifest(entry: Mapping[str, Any]) -> list[Guess]:
    return [
        Guess(task, str(v["domain"]), int(v["pool"]), int(v["passing"]), bool(v["scored"]))
        for task, v in sorted(entry.items())
    ]


def summary_line(found: list[Guess], k: int) -> str:
    one, at_k = expectation(found, k)
    small = sum(1 for g in found if g.scored and g.pool <= 5)
    return (
        f"pool-guess expectation on these {len(found)} tasks: pass@1 {one:.4f}"
        + (f", pass@{k} {at_k:.4f} " if k > 1 else " ")
        + f"(the gold calls, then one answer-pool candidate at random; {small} task(s) have a pool of 5 or fewer)"
    )

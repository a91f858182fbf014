"""The optional LLM-as-judge fallback for RESPONSE in text mode: when the sentence rules cannot read a reply
(no `최종 답:` line and no candidate they can read), a model behind an OpenAI-compatible endpoint decides, with a
versioned rubric (kopa_gen/evaluate/prompts/judge.md; its version is logged with every verdict). Off unless
configured (`kopa-gen eval --answer-mode text --judge-base-url URL --judge-model M`). `kopa-gen judge calibrate`
runs it over the labelled corpora and prints its agreement by class (`calibrate`)."""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import httpx

from kopa_gen.evaluate.corpus import Case
from kopa_gen.language.answers import Answer
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.task import Task
from kopa_gen.plugins import Registry
from kopa_gen.policies.openai import EndpointDown, EndpointError, bearer, parse_turn, post_chat


@dataclass(frozen=True)
class Rubric:
    version: str
    template: str


@functools.cache
def rubric() -> Rubric:
    """The judge's rubric: `rubric: <version>` on the first line, the prompt after the `---` line."""
    text = resources.files("kopa_gen.evaluate").joinpath("prompts/judge.md").read_text(encoding="utf-8")
    head, _, template = text.partition("\n---\n")
    return Rubric(head.removeprefix("rubric:").strip(), template.strip())


VERIFY_PROMPT = (
    "You check answers to questions about Korean public data against the API results they came from.\n"
    "Question: {query}\nAPI results (JSON, call id -> result): {evidence}\nProposed answer: {candidate}\n"
    "Is the proposed answer the correct answer to the question according to these results? "
    "Reply with exactly YES or NO."
)


JUDGES: Registry[Callable[..., OpenAIJudge]] = Registry(
    "judge", hint="register a judge class in kopa_gen/evaluate/judge.py"
)
"""Judges by name; each is built from `EndpointSettings` (kopa_gen/language/settings.py)."""


@JUDGES.register("openai")
class OpenAIJudge:
    """A model behind an OpenAI-compatible endpoint that answers YES or NO; its requests carry the endpoint's
    generation settings (temperature 0 by default)."""

    def __init__(self, endpoint: EndpointSettings) -> None:
        self.endpoint = endpoint

    @property
    def model(self) -> str:
        return self.endpoint.model

    @property
    def signature(self) -> str:
        """What a verdict records: the rubric version and the judge model."""
        return f"{rubric().version} ({self.model})"

    async def judge(self, query: str, gold: Answer, message: str) -> bool | None:
        """Does `message` commit to the gold answer? True/False from the model's YES/NO; None (abstain) on any
        other reply. Raises `EndpointDown` when the judge cannot be reached after its retries: the episode cannot
        be graded, and grading it by the rules alone would count the judge's outage as the model's failure."""
        prompt = rubric().template.format(gold=gold.model_dump_json(), query=query, message=message)
        return await self._ask(prompt, down_raises=True)

    async def verify(self, query: str, evidence: str, candidate: Answer) -> bool | None:
        """Is `candidate` the correct answer to `query` given the executed results `evidence`? (EDGE's re-solve
        stage asks this before an answer a re-solver found replaces the stored one.)"""
        return await self._ask(
            VERIFY_PROMPT.format(query=query, evidence=evidence, candidate=candidate.model_dump_json())
        )

    async def _ask(self, content: str, down_raises: bool = False) -> bool | None:
        e = self.endpoint
        key, headers = bearer(e.api_key_env)
        body = {"model": e.model, "messages": [{"role": "user", "content": content}], **e.generation.body()}
        try:
            async with httpx.AsyncClient(headers=headers, timeout=e.timeout_s) as http:
                data = await post_chat(
                    http,
                    e.base_url,
                    body,
                    key=key,
                    retries=e.retries,
                    backoff_s=e.backoff_s,
                    call_timeout_s=e.timeout_s,
                )
            text = parse_turn(data, 0).content
        except EndpointDown as exc:
            if down_raises:
                raise
            self.last_error = str(exc)
            return None
        except EndpointError as exc:
            self.last_error = str(exc)
            return None
        word = text.strip().upper()
        if word.startswith("YES"):
            return True
        if word.startswith("NO"):
            return False
        return None


@dataclass(frozen=True)
class Calibration:
    """The judge's verdicts on labelled replies: per case (class, label, verdict)."""

    rubric: str
    rows: list[tuple[str, bool, bool | None]]

    def table(self) -> str:
        total: Counter[str] = Counter()
        agree: Counter[str] = Counter()
        abstain: Counter[str] = Counter()
        for cls, label, said in self.rows:
            total[cls] += 1
            agree[cls] += said == label
            abstain[cls] += said is None
        lines = [f"judge rubric {self.rubric}", "| class | cases | agree | abstained |", "|---|---|---|---|"]
        for cls in sorted(total):
            lines.append(f"| {cls} | {total[cls]} | {agree[cls]} | {abstain[cls]} |")
        n, a = sum(total.values()), sum(agree.values())
        false_pass = sum(1 for _, label, said in self.rows if said is True and not label)
        false_fail = sum(1 for _, label, said in self.rows if said is False and label)
        lines.append(
            f"| **all** | {n} | {a} ({a / n:.1%}) | {sum(abstain.values())} |"
            if n
            else "| **all** | 0 | - | - |"
        )
        lines.append(f"false passes {false_pass}, false fails {false_fail}")
        return "\n".join(lines)


async def calibrate(
    judge: OpenAIJudge,
    cases: Sequence[Case],
    tasks: Mapping[str, tuple[Task, Mapping[str, Any]]],
    concurrency: int = 8,
) -> Calibration:
    """Ask `judge` about every text-mode case (the replies it would judge in an eval) and compare with the
    labels."""
    gate = asyncio.Semaphore(max(1, concurrency))
    text = [c for c in cases if c.mode == "text" and c.reply is not None]

    async def one(case: Case) -> tuple[str, bool, bool | None]:
        task, _ = tasks[case.task]
        assert task.answer is not None
        async with gate:
            said = await judge.judge(task.query, task.answer, case.reply or "")
        return case.cls, case.expect, said

    return Calibration(rubric().version, list(await asyncio.gather(*(one(c) for c in text))))


__all__ = ["Calibration", "OpenAIJudge", "Rubric", "calibrate", "rubric"]

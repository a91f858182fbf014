"""The RESPONSE grader against a hand-written corpus (tests/data/response_corpus.yaml): answers worded to fool it
must fail and right answers worded freely must pass. The expectations were written from the grading rules
(docs/evaluation.md), independently of the code; each case names its failure class."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from kopa_gen.evaluate.response import score_response
from kopa_gen.language.answers import answer_adapter

CORPUS: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "response_corpus.yaml").read_text(encoding="utf-8")
)
YEAR = 2026


def _id(case: dict[str, Any]) -> str:
    return f"{case['class']}-{case['expect']}-{CORPUS.index(case)}"


@pytest.mark.parametrize("case", CORPUS, ids=_id)
def test_corpus_case(case: dict[str, Any]) -> None:
    answer = answer_adapter.validate_python(case["answer"])
    verdict = score_response(case["message"], answer, YEAR, case.get("distractors") or [])
    assert verdict.passed == (case["expect"] == "pass"), (
        f"{case['class']}: {case['message']!r} should {case['expect']} ({case.get('why')}); grader: {verdict.reason}"
    )


def test_corpus_covers_every_class_in_both_directions() -> None:
    counts = Counter((c["class"], c["expect"]) for c in CORPUS)
    classes = {c["class"] for c in CORPUS}
    assert len(CORPUS) >= 200
    assert len(classes) >= 10
    for name in classes:
        assert counts[(name, "pass")] >= 5 and counts[(name, "fail")] >= 5, name

"""The RESPONSE axis: find the answer an agent stated in its final message and match it against the gold.

Where the stated answer is (`answer_span`):
    1. After the last explicit marker, if any: '정답:', '답:', '답변:', '최종 답:', '최종 답변:', '최종 정답:',
       'Answer:', 'Final answer:' (a colon is required; bold around the marker is fine). The span is the rest
       of that line, or the next paragraph when the line ends at the marker. A marker is authoritative: a
       marked answer without the value fails even if the value appears elsewhere.
    2. Otherwise the whole message.
    3. For scalar number and date answers only, bold text ('**...**') inside that span narrows it further,
       if the bold text holds at least one candidate of the answer's kind. Bold labels ('**주의**:' or
       '**정답:**' at the start of a line) and markdown heading lines are not answer text.

How the span is matched (`score_response`):
    number  The LAST number in the span must be within tolerance: |stated - gold| <= max(tolerance,
            rel_tolerance * |gold|). So '1,000명 중 324명' passes for 324, while a list of ten numbers with the
            right one in the middle fails. Numbers that are not amounts (dates, '2026년', '11월', '3위',
            '1.' list enumerators) are skipped, unless the span holds nothing else.
    date    The LAST date in the span must equal the gold date (month-day forms take `reference_year`).
    text    Any gold spelling (value or alias), normalized, occurs in the normalized span.
    list    Every gold item is stated. For number and date items, every stated number (date) must also match
            some gold item: no extras. Ordered lists compare the stated values in order of first appearance
            (repeats of an earlier value ignored) item by item, so extras or a wrong order fail. Text items
            cannot have detectable extras; an ordered text list needs the first occurrences in gold order.

No LLM is involved. An LLM judge can be plugged in later as a `Judge`; nothing calls one by default.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, Protocol, assert_never

from pydantic import Field

from kopa_gen.evaluate.answers import Answer, DateAnswer, ListAnswer, NumberAnswer, TextAnswer
from kopa_gen.evaluate.normalize import NumberMatch, find_dates, find_numbers, find_text, fold, normalize_text
from kopa_gen.spec.kopa import StrictModel

Source = Literal["marker", "bold", "message"]
Candidate = int | float | str | dt.date

_MARKER = re.compile(
    r"(?P<open>\*\*\s*)?(?<![가-힣A-Za-z])(?:최종\s*(?:정답|답변|답)|정답|답변|답|final\s+answer|answer)"
    r"\s*(?P<shut>\*\*\s*)?:(?P<after>\s*\*\*)?",
    re.IGNORECASE,
)
_BOLD = re.compile(r"\*\*(?!\s)(.+?)(?<!\s)\*\*")
_LINE_LEAD = re.compile(r"[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?")


class Judge(Protocol):
    """An optional fallback that decides a response the rules could not (an LLM behind an endpoint)."""

    async def judge(self, query: str, gold: Answer, message: str) -> bool | None:
        """True or False for a verdict; None to abstain."""
        ...


class ResponseVerdict(StrictModel):
    """The RESPONSE axis result for one final message."""

    passed: bool = Field(description="True when the stated answer matches the gold answer.")
    extracted: str = Field(
        description="What was compared, as text: the last number or date as written, the stated list values "
        "joined by ' | ', or the normalized text span."
    )
    reason: str = Field(description="Why it passed or failed, in one short English sentence.")
    source: Source = Field(
        description="Where the compared span came from: after a marker, bold text, or the whole message."
    )


@dataclass(frozen=True)
class AnswerSpan:
    """The part of a message taken as the agent's stated answer."""

    text: str
    source: Source


def _unbold_edges(text: str) -> str:
    """Drop an unpaired '**' left at either end by a marker inside bold ('**정답: 324명**')."""
    text = text.strip()
    if text.count("**") % 2 == 1:
        text = text[:-2] if text.endswith("**") else text.removeprefix("**")
    return text.strip()


def _marked(message: str) -> str | None:
    """The text after the last marker: the rest of its line, else the following paragraph."""
    markers = list(_MARKER.finditer(message))
    if not markers:
        return None
    m = markers[-1]
    # '**정답:** 324' closes the bold after the colon; in '정답: **324**' the '**' opens the answer's bold.
    closes = m.group("after") and m.group("open") and not m.group("shut")
    after = message[m.end() if closes or not m.group("after") else m.start("after") :]
    line, _, rest = after.partition("\n")
    if _unbold_edges(line):
        return _unbold_edges(line)
    paragraph: list[str] = []
    for row in rest.split("\n"):
        if row.strip():
            paragraph.append(row)
        elif paragraph:
            break
    return "\n".join(paragraph).strip()


def _bold(text: str) -> str:
    """The bold runs in `text`, each on its own line; bold labels and markdown heading lines left out."""
    runs: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith("#"):
            continue
        for m in _BOLD.finditer(line):
            content = m.group(1).strip()
            label = content.endswith(":") or line[m.end() :].lstrip().startswith(":")
            if label and _LINE_LEAD.fullmatch(line[: m.start()]):
                continue
            runs.append(content)
    return "\n".join(runs)


def answer_span(message: str, answer: Answer, reference_year: int) -> AnswerSpan:
    """The agent's stated answer in `message` (rules in the module docstring)."""
    message = fold(message)
    marked = _marked(message)
    span = AnswerSpan(marked, "marker") if marked is not None else AnswerSpan(message, "message")
    if isinstance(answer, NumberAnswer | DateAnswer):
        bold = _bold(span.text)
        if bold and extract(bold, answer, reference_year):
            return AnswerSpan(bold, "bold")
    return span


# ------------------------------------------------------------------------------------------- candidates


def _numbers(text: str) -> list[NumberMatch]:
    """Amounts in `text`; every number when it holds no amount (a bare '2026년' is then a candidate)."""
    found = find_numbers(text)
    return [m for m in found if m.quantity] or found


def _text_hits(text: str, items: list[TextAnswer]) -> list[tuple[int, str]]:
    """(position, spelling) of the first occurrence of each gold spelling found, in order of appearance."""
    hits = []
    for item in items:
        for spelling in item.spellings():
            at = find_text(text, spelling)
            if at is not None:
                hits.append((at, spelling))
    return sorted(hits)


def extract(message: str, answer: Answer, reference_year: int) -> list[Candidate]:
    """Candidate values of the answer's kind in `message`, in order of appearance.

    Numbers: amounts as int or float (see `_numbers`). Dates: `datetime.date`. Text: the gold spellings that
    occur (free text has no other candidates). Lists: the candidates of their items' kind.
    """
    if isinstance(answer, ListAnswer):
        texts = [i for i in answer.items if isinstance(i, TextAnswer)]
        if texts:
            return [s for _, s in _text_hits(message, texts)]
        return extract(message, answer.items[0], reference_year)  # items are all of one kind
    if isinstance(answer, NumberAnswer):
        return [m.value for m in _numbers(message)]
    if isinstance(answer, DateAnswer):
        return [m.value for m in find_dates(message, reference_year)]
    if isinstance(answer, TextAnswer):
        return [s for _, s in _text_hits(message, [answer])]
    assert_never(answer)


# --------------------------------------------------------------------------------------------- matching


def _decimal(x: int | float) -> Decimal:
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))


def _show(d: Decimal) -> str:
    return format(d.normalize(), "f")


def _allowed(gold: NumberAnswer) -> Decimal:
    return max(_decimal(gold.tolerance), _decimal(gold.rel_tolerance) * abs(_decimal(gold.value)))


def _number_ok(stated: NumberMatch, gold: NumberAnswer) -> bool:
    return abs(stated.exact - _decimal(gold.value)) <= _allowed(gold)


def _where(span: AnswerSpan) -> str:
    return {"marker": "the marked answer", "bold": "the bold answer", "message": "the message"}[span.source]


def _score_number(span: AnswerSpan, gold: NumberAnswer) -> ResponseVerdict:
    found = _numbers(span.text)
    if not found:
        return ResponseVerdict(
            passed=False, extracted="", reason=f"no number in {_where(span)}", source=span.source
        )
    last = found[-1]
    off, allowed, want = abs(last.exact - _decimal(gold.value)), _allowed(gold), _show(_decimal(gold.value))
    if off <= allowed:
        reason = (
            f"last number {_show(last.exact)} matches {want} (off by {_show(off)}, allowed {_show(allowed)})"
        )
    else:
        reason = (
            f"last number {_show(last.exact)} is off from {want} by {_show(off)} (allowed {_show(allowed)})"
        )
    return ResponseVerdict(passed=off <= allowed, extracted=last.text, reason=reason, source=span.source)


def _score_date(span: AnswerSpan, gold: DateAnswer, reference_year: int) -> ResponseVerdict:
    found = find_dates(span.text, reference_year)
    if not found:
        return ResponseVerdict(
            passed=False, extracted="", reason=f"no valid date in {_where(span)}", source=span.source
        )
    last = found[-1]
    ok = last.value == gold.value
    reason = f"last date {last.value} {'equals' if ok else 'differs from'} {gold.value}"
    return ResponseVerdict(passed=ok, extracted=last.text, reason=reason, source=span.source)


def _score_text(span: AnswerSpan, gold: TextAnswer) -> ResponseVerdict:
    hits = _text_hits(span.text, [gold])
    shown = normalize_text(span.text)
    if hits:
        reason = f"found {hits[0][1]!r} in {_where(span)}"
        return ResponseVerdict(passed=True, extracted=shown, reason=reason, source=span.source)
    n = len(gold.spellings())
    reason = f"none of {n} gold spelling{'s' if n > 1 else ''} occurs in {_where(span)}"
    return ResponseVerdict(passed=False, extracted=shown, reason=reason, source=span.source)


def _score_text_list(span: AnswerSpan, gold: ListAnswer) -> ResponseVerdict:
    items = [i for i in gold.items if isinstance(i, TextAnswer)]
    firsts: list[int] = []
    for n, item in enumerate(items, 1):
        at = [p for p, _ in _text_hits(span.text, [item])]
        if not at:
            return ResponseVerdict(
                passed=False,
                extracted=normalize_text(span.text),
                reason=f"item {n} ({item.value!r}) not found in {_where(span)}",
                source=span.source,
            )
        firsts.append(min(at))
    shown = " | ".join(s for _, s in _text_hits(span.text, items))
    if gold.ordered and firsts != sorted(firsts):
        return ResponseVerdict(
            passed=False, extracted=shown, reason="items stated out of order", source=span.source
        )
    return ResponseVerdict(
        passed=True, extracted=shown, reason=f"all {len(items)} items found", source=span.source
    )


def _score_value_list(span: AnswerSpan, gold: ListAnswer, reference_year: int) -> ResponseVerdict:
    """Number and date lists: stated values and gold items must match one to one (in order when ordered)."""
    numbers = [i for i in gold.items if isinstance(i, NumberAnswer)]
    dates = [i for i in gold.items if isinstance(i, DateAnswer)]
    stated: list[tuple[str, str]] = []  # (source text, shown value)
    matches: list[list[bool]] = []  # matches[s][g]: stated value s matches gold item g
    if numbers:
        for m in _numbers(span.text):
            stated.append((m.text, _show(m.exact)))
            matches.append([_number_ok(m, g) for g in numbers])
        wanted = [_show(_decimal(g.value)) for g in numbers]
    else:
        for d in find_dates(span.text, reference_year):
            stated.append((d.text, d.value.isoformat()))
            matches.append([d.value == g.value for g in dates])
        wanted = [g.value.isoformat() for g in dates]
    extracted = " | ".join(text for text, _ in stated)

    def fail(reason: str) -> ResponseVerdict:
        return ResponseVerdict(passed=False, extracted=extracted, reason=reason, source=span.source)

    if gold.ordered:
        seen: set[str] = set()
        order: list[int] = []
        for s, (_, shown) in enumerate(stated):
            if shown not in seen:
                seen.add(shown)
                order.append(s)
        values = [stated[s][1] for s in order]
        if len(order) != len(wanted) or not all(matches[s][g] for g, s in enumerate(order)):
            return fail(f"stated {values} in order, expected {wanted}")
    else:
        for g, want in enumerate(wanted):
            if not any(row[g] for row in matches):
                return fail(f"item {g + 1} ({want}) not stated in {_where(span)}")
        for (_, shown), row in zip(stated, matches, strict=True):
            if not any(row):
                return fail(f"extra value {shown} is not a gold item")
    return ResponseVerdict(
        passed=True, extracted=extracted, reason=f"all {len(wanted)} items stated", source=span.source
    )


def score_response(message: str, answer: Answer, reference_year: int) -> ResponseVerdict:
    """Match the answer stated in `message` against the gold `answer` (rules in the module docstring).

    `reference_year` completes month-day dates ('11월 29일'); use the task world's year.
    """
    span = answer_span(message, answer, reference_year)
    if isinstance(answer, NumberAnswer):
        return _score_number(span, answer)
    if isinstance(answer, DateAnswer):
        return _score_date(span, answer, reference_year)
    if isinstance(answer, TextAnswer):
        return _score_text(span, answer)
    if isinstance(answer, ListAnswer):
        if isinstance(answer.items[0], TextAnswer):
            return _score_text_list(span, answer)
        return _score_value_list(span, answer, reference_year)
    assert_never(answer)

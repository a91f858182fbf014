"""The RESPONSE axis: read the answer an agent committed to in its final message, as a careful grader would, and
match it against the typed gold answer. docs/evaluation.md states the rules with examples; in short:

1. Span. After the last marker ('정답:', '답:', '답변:', '최종 답(변):', 'Answer:', 'Final answer:'; or a sentence
   opening '정답은 …' / '답은 …'): the rest of that line, or with it the next paragraph when the line holds no
   candidate. Otherwise the whole message. For one number or date, bold text inside the span narrows it.
2. Pasted data (JSON or XML) is not an answer. An empty message is not an answer.
3. Asides in ( ), （ ）, [ ] neither break nor make an answer, unless nothing outside them can be read.
4. The span is split into sentences; a negated sentence ('… 아닙니다', 'not') commits to nothing.
5. number: the committed sentence is the first with a candidate of a compatible unit (won vs dollar vs percent vs
   persons...); its last such candidate is the stated value, unless only a list or range connector stands before
   it ('1,444~1,446원', '1,446원 또는 1,447원') or a bound follows ('이상', '미만'): several values or a bound fail.
   The value matches within the declared tolerance, or when it is the gold rounded to the precision it is written
   in and within 0.5% ('약 1051 kcal' for 1051.4, '310.6조 원'). Per-unit phrases ('1주당') are no amounts.
6. date: the committed sentence is the first with a date ('10/16', '10월 16일', ISO, dotted, YYYYMMDD); a stated
   period ('10월 13일부터 16일까지') answers only a gold with `period` (its first or last day); a list of dates
   fails; else its last date.
7. text: the gold (value or alias) must be named in a committed sentence, and no distractor (the other values the
   chain offered where the answer was chosen) named outside asides, and no '또는' / '혹은' / 'or' / '/' hedge.
8. list: every item stated; no distractor (text) or extra value (numbers, dates); in order when ordered.

A verdict is `readable=False` only when the span holds no candidate of the answer's kind at all: then, and only
then, an optional LLM judge may decide (it never overrides a rule's fail). No LLM is involved otherwise.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Literal, Protocol, assert_never

from pydantic import Field

from kopa_gen.evaluate.clauses import Reading, another_reading, evidence_free, read, sentence_texts, withholds
from kopa_gen.evaluate.clauses import role_of as clause_role
from kopa_gen.evaluate.clauses import sentences as clause_sentences
from kopa_gen.evaluate.finalline import Unread, read_final
from kopa_gen.evaluate.submission import grade_submissions
from kopa_gen.evaluate.typed import (
    Stated,
    StatedDate,
    StatedList,
    StatedNumber,
    grade,
    grade_number,
    longer_name,
    name_ends,
    name_spellings,
    parts,
    phrases,
)
from kopa_gen.language.answers import Answer, CodeAnswer, DateAnswer, ListAnswer, NumberAnswer, TextAnswer
from kopa_gen.language.kopa import StrictModel
from kopa_gen.language.normalize import (
    DateMatch,
    NumberMatch,
    compatible_units,
    find_dates,
    find_numbers,
    find_periods,
    fold,
    mention_pattern,
    normalize_text,
)

Source = Literal["marker", "bold", "message", "final-line", "submission"]
Decider = Literal["submission", "final-line", "rules", "judge"]

_MARKER = re.compile(
    r"(?P<open>\*\*\s*)?(?<![가-힣A-Za-z])(?:최종\s*(?:정답|답변|답)|정답|답변|답|final\s+answer|answer)"
    r"\s*(?P<shut>\*\*\s*)?:(?P<after>\s*\*\*)?",
    re.IGNORECASE,
)
_PHRASE_MARKER = re.compile(
    r"(?:^|(?<=[.!?。\n])\s*|(?<=\s))(?:최종\s*)?(?:정답|답)(?:은|는)\s+", re.MULTILINE
)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_BOLD = re.compile(r"\*\*(?!\s)(.+?)(?<!\s)\*\*")
_LINE_LEAD = re.compile(r"[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?")
_ASIDE = re.compile(r"\([^()]*\)|（[^（）]*）|\[[^\[\]]*\]")
# after a digit a period is no sentence end: '2026. 10. 16.', '1. 보통주' (an enumerator), '324.' before a line
_SENTENCE_END = re.compile(r"(?<!\d)[.!?。](?=\s|$)|\n|;")
_NEGATION = re.compile(
    r"아니(?:다|라|며|고|었|에요|예요|요|오|ㅂ)|아닙|아닌|아님|않|(?<![a-z])(?:not|isn't|no)(?![a-z])",
    re.IGNORECASE,
)
_LIST_LINK = re.compile(
    r"^\s*(?:,|、|/|~|〜|-|–|—|또는|혹은|이나|나|및|와|과|그리고|부터|or|and|to|,\s*(?:또는|혹은|or))?\s*$",
    re.IGNORECASE,
)
_SAME_LINK = re.compile(
    r"^\s*,?\s*(?:즉|곧|다시 말해(?:서)?|바꿔 말하면|i\.e\.,?|that is,?)\s*$", re.IGNORECASE
)
"""Between two amounts that say one amount twice ('14분 22초, 즉 862초')."""
_LESS = re.compile(r"^\s*(?:만큼\s*)?(?:더\s*)?(?:적|작|낮|줄었|줄어|감소|모자라|덜)")
"""After an amount compared with '보다': the first is less by it."""
_BOUND_AFTER = re.compile(r"^\s*(?:이상|이하|미만|초과|이내|넘게|넘는|남짓|가까이|사이)")
_BOUND_BEFORE = re.compile(
    r"(?:최소|최대|적어도|at least|up to|more than|less than|over|under)\s*$", re.IGNORECASE
)
_HEDGE_TEXT = re.compile(r"또는|혹은|(?<![a-z])or(?![a-z])|/|(?<=[가-힣])(?:이나|거나)\s", re.IGNORECASE)
_JSON_KEY = re.compile(r"\"[^\"\n]{1,60}\"\s*:")
_XML_TAG = re.compile(r"</?[A-Za-z_][\w:.-]*(?:\s[^<>]*)?/?>")
_ROUNDING_SHARE = Decimal("0.005")


class Judge(Protocol):
    """An optional fallback that decides a response the rules could not read (an LLM behind an endpoint)."""

    async def judge(self, query: str, gold: Answer, message: str) -> bool | None:
        """True or False for a verdict; None to abstain."""
        ...


class ResponseVerdict(StrictModel):
    """The RESPONSE axis result for one final message."""

    passed: bool = Field(description="True when the stated answer matches the gold answer.")
    extracted: str = Field(description="What was compared, as text: the stated value(s) or the read span.")
    reason: str = Field(description="Why it passed or failed, in one short English sentence.")
    source: Source = Field(
        description="Where the compared span came from: after a marker, bold text, or the whole message."
    )
    readable: bool = Field(
        default=True,
        description="False when the span holds no candidate of the answer's kind: only then may a judge decide.",
    )
    judge: str | None = Field(
        default=None, description="When the LLM judge decided: its rubric version and model, as logged."
    )
    decided_by: Decider = Field(
        default="rules",
        description="What decided: the typed submission, the typed `최종 답:` line, the sentence rules (text "
        "mode without that line), or the LLM judge (only where the rules could not read the reply).",
    )


@dataclass(frozen=True)
class AnswerSpan:
    """The part of a message taken as the agent's stated answer."""

    text: str
    source: Source


# ------------------------------------------------------------------------------------------------ spans


def _unbold_edges(text: str) -> str:
    """Drop an unpaired '**' left at either end by a marker inside bold ('**정답: 324명**')."""
    text = text.strip()
    if text.count("**") % 2 == 1:
        text = text[:-2] if text.endswith("**") else text.removeprefix("**")
    return text.strip()


def _quoted_or_example(message: str, at: int) -> bool:
    """A marker quoted as a format ('형식은 "최종 답: …"', "'정답: 하동군'처럼") marks no answer."""
    if message[max(0, at - 2) : at].strip()[-1:] in ('"', "'", "“", "‘", "「", "`"):
        return True
    start = max(message.rfind(".", 0, at), message.rfind("\n", 0, at)) + 1
    return clause_role(message[start:at]) == "example"


def _after_marker(message: str) -> tuple[str, str] | None:
    """(rest of the marker's line, the paragraph after it) for the last marker, or None without one. An
    <answer>…</answer> element is a marker whose span is its content."""
    tagged = _ANSWER_TAG.findall(message)
    if tagged:
        return tagged[-1].strip(), ""
    colon = [m for m in _MARKER.finditer(message) if not _quoted_or_example(message, m.start())]
    phrase = [m for m in _PHRASE_MARKER.finditer(message) if not _quoted_or_example(message, m.start())]
    last_colon = colon[-1] if colon else None
    last_phrase = phrase[-1] if phrase else None
    if last_colon is None and last_phrase is None:
        return None
    if last_colon is not None and (last_phrase is None or last_colon.start() >= last_phrase.start()):
        m = last_colon
        # '**정답:** 324' closes the bold after the colon; in '정답: **324**' the '**' opens the answer's bold.
        closes = m.group("after") and m.group("open") and not m.group("shut")
        after = message[m.end() if closes or not m.group("after") else m.start("after") :]
    else:
        assert last_phrase is not None
        after = message[last_phrase.end() :]
    line, _, rest = after.partition("\n")
    paragraph: list[str] = []
    for row in rest.split("\n"):
        if row.strip():
            paragraph.append(row)
        elif paragraph:
            break
    return _unbold_edges(line), "\n".join(paragraph).strip()


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


def answer_span(
    message: str, answer: Answer, reference_year: int, distractors: Sequence[Any] = ()
) -> AnswerSpan:
    """The agent's stated answer in `message` (rules 1 and 3 of the module docstring)."""
    message = fold(message)
    marked = _after_marker(message)
    if marked is None:
        span = AnswerSpan(message.strip(), "message")
    else:
        line, paragraph = marked
        holds = bool(_candidates(line, answer, reference_year, distractors))
        span = AnswerSpan(line if holds or not paragraph else f"{line}\n{paragraph}".strip(), "marker")
    bold = _bold(span.text)
    if bold and isinstance(answer, NumberAnswer | DateAnswer):
        if _candidates(bold, answer, reference_year, distractors):
            return AnswerSpan(bold, "bold")
    elif (  # the one name set in bold, where a reply marks its pick
        bold
        and isinstance(answer, TextAnswer)
        and len({m[2] for m in _candidates(bold, answer, reference_year, distractors)}) == 1
    ):
        return AnswerSpan(bold, "bold")
    return span


def without_asides(text: str) -> str:
    """The text with parenthesised and bracketed asides replaced by a space (nested ones too)."""
    previous = None
    while previous != text:
        previous, text = text, _ASIDE.sub(" ", text)
    return text


def sentences(text: str) -> list[str]:
    """Sentences: split after . ! ? 。 before a space or the end (never inside a number), at line breaks and ;."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        out.append(text[start : m.end()])
        start = m.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def pasted(text: str) -> bool:
    """Whether the span is structured data (JSON or XML) rather than a stated answer."""
    stripped = text.strip()
    if len(_JSON_KEY.findall(stripped)) >= 2:
        return True
    if stripped[:1] in "{[" and stripped[-1:] in "}]":
        try:
            return isinstance(json.loads(stripped), dict | list)
        except ValueError:
            return False
    return len(_XML_TAG.findall(stripped)) >= 2


def _negated(sentence: str) -> bool:
    return _NEGATION.search(sentence) is not None


# ----------------------------------------------------------------------------------------- candidates


def _amounts(text: str, calendar: bool = False) -> list[NumberMatch]:
    """Amounts in `text`; with `calendar`, every number (calendar words too: for a reply that holds no amount at
    all, '1969년' for a year)."""
    found = [m for m in find_numbers(text) if not m.per_unit]
    return found if calendar else [m for m in found if m.quantity]


def _distractors(answer: Answer, pool: Sequence[Any]) -> list[str]:
    """Pool values that are not a gold spelling (normalized), as text."""
    items = answer.items if isinstance(answer, ListAnswer) else [answer]

    # keys as mentions are found: normalized, spaces optional
    gold = {_unspaced(s) for i in items if isinstance(i, TextAnswer) for s in i.spellings()}
    out: dict[str, None] = {}  # in pool order, once each
    for v in pool:
        text = str(v).strip()
        key = _unspaced(text)
        if key and key not in gold:
            out[text] = None
    return list(out)


@functools.lru_cache(maxsize=1 << 16)
def _unspaced(needle: str) -> str:
    return normalize_text(needle).replace(" ", "")


# a name glued after Hangul is the end of a longer name ('환경부' in '기후에너지환경부')
_NAME_CAME_ON = re.compile(r"[가-힣]$")


def _mentions(text: str, needles: Sequence[str]) -> list[tuple[int, int, str]]:
    """(start, end, needle) of every mention in normalized `text`, spaces optional; a mention inside a longer
    mention of another needle is dropped ('과학' inside '지구과학'), and so is one that runs on into a longer word
    ('현재디자인' in '현재디자인테크', '환경부' in '기후에너지환경부', '하동군' in '하동군의회': kopa_gen/evaluate/typed.py,
    `name_ends`)."""
    hay = normalize_text(text)
    letters = set(hay)
    found: list[tuple[int, int, str]] = []
    for needle in needles:
        key = _unspaced(needle)
        if not key or not letters.issuperset(key):  # a needle with a letter the text lacks cannot match
            continue
        found += [
            (m.start(), m.end(), needle)
            for m in mention_pattern(key).finditer(hay)
            if name_ends(hay, m.end()) and not _NAME_CAME_ON.search(hay, 0, m.start())
        ]
    return [
        f
        for f in found
        if not any(o[0] <= f[0] and f[1] <= o[1] and (o[1] - o[0]) > (f[1] - f[0]) for o in found)
    ]


def _candidates(text: str, answer: Answer, year: int, pool: Sequence[Any]) -> list[Any]:
    """Anything of the answer's kind in `text` (used to choose a span)."""
    if isinstance(answer, ListAnswer):
        return (
            _candidates(text, answer.items[0], year, pool)
            if not isinstance(answer.items[0], TextAnswer)
            else [m for item in answer.items for m in _candidates(text, item, year, pool)]
        )
    if isinstance(answer, NumberAnswer):
        return _amounts(text) or _amounts(text, calendar=True)
    if isinstance(answer, DateAnswer):
        return [*find_dates(text, year), *find_periods(text, year)]
    if isinstance(answer, TextAnswer):
        return _mentions(text, [*answer.spellings(), *_distractors(answer, pool)])
    if isinstance(answer, CodeAnswer):
        return _candidates(text, TextAnswer(value=answer.value), year, pool)
    assert_never(answer)


# ---------------------------------------------------------------------------------------------- verdicts


def _verdict(
    passed: bool, extracted: str, reason: str, span: AnswerSpan, readable: bool = True
) -> ResponseVerdict:
    return ResponseVerdict(
        passed=passed, extracted=extracted, reason=reason, source=span.source, readable=readable
    )


def _where(span: AnswerSpan) -> str:
    return {"marker": "the marked answer", "bold": "the bold answer"}.get(span.source, "the message")


def _decimal(x: int | float) -> Decimal:
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))


def _show(d: Decimal) -> str:
    return format(d.normalize(), "f")


def _main(span: AnswerSpan, has: Any) -> str:
    """The span without asides, or the whole span when nothing outside the asides can be read."""
    main = without_asides(span.text)
    return main if has(main) else span.text


def number_matches(stated: NumberMatch, gold: NumberAnswer, pool: Sequence[Any] = ()) -> tuple[bool, str]:
    """The typed number rule (kopa_gen/evaluate/typed.py), for a number found in prose."""
    graded = grade_number(StatedNumber(stated.exact, stated.unit, stated.precision, stated.text), gold, pool)
    return graded.passed, graded.reason


_BARE_REST = re.compile(r"^[\s\-*+•·,.:;)(\d]*(?:입니다|이다|임|예요|이에요)?[\s.!]*$")


def _bare(sentence: str, spans: list[tuple[int, int]]) -> bool:
    """A sentence that is only its candidate (a list line such as '- 1,447원' or '1,447원입니다')."""
    rest = "".join(ch for i, ch in enumerate(sentence) if not any(a <= i < b for a, b in spans))
    return _BARE_REST.match(rest) is not None


_STEM_TAIL = re.compile(r"(?:은|는|이|가|을|를|의|에|에서|으로|로|와|과|도|만|까지)$")


def _stems(text: str) -> set[str]:
    words = re.findall(r"[가-힣A-Za-z]{2,}", text)
    return {w for w in (_STEM_TAIL.sub("", w) for w in words) if len(w) >= 2}


def _labelled(options: Sequence[tuple[str, Any]], query: str) -> Any | None:
    """Of several values a sentence states, the one labelled as the question labels it ('보통주 3,070원, 우선주
    3,120원' for a question on 보통주; '상행 … 12개이고, 하행까지 합치면 24개'): the only one whose label (the
    two words before it, or the condition it is stated under) shares a word with the question that no other label
    has. None when no label singles one out."""
    if not query or len(options) < 2:
        return None
    asked = _stems(query)
    labels = []
    for text, _ in options:
        words = re.findall(r"\S+", text)
        labels.append(_stems(" ".join(words[-2:])) & asked)
    distinct = [
        lab - set().union(*(o for j, o in enumerate(labels) if j != i)) for i, lab in enumerate(labels)
    ]
    picked = [c for (_, c), d in zip(options, distinct, strict=True) if d]
    return picked[0] if len(picked) == 1 else None


def _bounded(text: str, m: NumberMatch) -> bool:
    """A bound ('이상', '최대') or a range word ('안팎', '내외', '22,000원대', '20여 개') around the number."""
    return m.ranged or bool(_BOUND_AFTER.match(text[m.end :]) or _BOUND_BEFORE.search(text[: m.start]))


def _where_of(m: Any) -> tuple[int, int]:
    return (m.start, m.end) if hasattr(m, "start") and isinstance(m.start, int) else (m[0], m[1])


def _score_number(
    span: AnswerSpan, gold: NumberAnswer, query: str = "", pool: Sequence[Any] = ()
) -> ResponseVerdict:
    body = evidence_free(span.text)
    calendar = not _amounts(body)  # no amount at all: a year or a day may be the number stated
    everything = _amounts(body, calendar)
    if not everything:
        return _verdict(False, "", f"no number in {_where(span)}", span, readable=False)

    def compatible(text: str) -> list[NumberMatch]:
        return [m for m in _amounts(text, calendar) if compatible_units(gold.unit, m.unit)]

    def unbounded(text: str) -> list[NumberMatch]:  # '…21,450원 이하였습니다' bounds other values
        return [m for m in compatible(text) if not _bounded(text, m)]

    def with_unit(text: str) -> list[NumberMatch]:
        return [m for m in unbounded(text) if m.unit]

    reading = read(span.text, with_unit, _where_of) if gold.unit else Reading()
    if not reading.chosen and reading.problem is None:
        reading = read(span.text, unbounded, _where_of)
    if not reading.chosen and reading.problem is None:
        reading = read(span.text, compatible, _where_of)
    if reading.problem is not None:
        return _verdict(False, ", ".join(m.text for m in everything), reading.problem, span)
    if not reading.chosen:
        if not any(compatible_units(gold.unit, m.unit) for m in everything):
            units = sorted({m.unit for m in everything if m.unit})
            return _verdict(
                False, everything[-1].text, f"stated in {', '.join(units)}, not {gold.unit}", span
            )
        return _verdict(
            False,
            everything[-1].text,
            "no statement commits to a value (negated, an example, a possibility or a condition)",
            span,
        )
    numbers: list[NumberMatch] = [m for m in reading.chosen if isinstance(m, NumberMatch)]
    picked = _labelled(reading.options, query)
    stated = picked if isinstance(picked, NumberMatch) else numbers[-1]
    clause = next((text for text, c in reading.options if c is stated), "") + stated.text
    clause = reading.clause if stated in numbers else clause
    beside = compatible(clause)  # a unitless value next to it counts too ('1,444~1,446원')
    at = next((k for k, m in enumerate(beside) if m.start == stated.start and m.end == stated.end), None)
    linked = at is not None and (
        (at > 0 and _LIST_LINK.match(clause[beside[at - 1].end : stated.start]))
        or (at + 1 < len(beside) and _LIST_LINK.match(clause[stated.end : beside[at + 1].start]))
    )
    if linked:
        shown = " | ".join(m.text for m in beside)
        return _verdict(False, shown, "states several values (a list or a range), not one", span)
    if at is not None:
        pairs = [(beside[k], beside[k + 1]) for k in (at - 1, at) if 0 <= k < len(beside) - 1]
        for a, b in pairs:  # '240초, 즉 199초': the same amount said twice must be one amount
            if a.unit == b.unit and a.exact != b.exact and _SAME_LINK.match(clause[a.end : b.start]):
                return _verdict(
                    False, f"{a.text} | {b.text}", "contradicts itself: says one amount as two", span
                )
    if _bounded(clause, stated):
        return _verdict(
            False,
            stated.text,
            "states a bound or a range (이상, 최대, 안팎, 내외, …대, …여), not a value",
            span,
        )
    lines = [s for s in sentence_texts(body) if compatible(s)]
    if len(lines) >= 2 and all(_bare(s, [(m.start, m.end) for m in compatible(s)]) for s in lines):
        return _verdict(False, " | ".join(lines), "lists values line by line, not one", span)
    rivals = [m for m in reading.possible if isinstance(m, NumberMatch) and m.exact != stated.exact]
    if rivals:
        return _verdict(
            False, stated.text, f"hedges: {rivals[0].text!r} is offered as a possibility too", span
        )
    ok, why = number_matches(_signed(clause, stated), gold, pool)
    return _verdict(ok, stated.text, why, span)


def _signed(clause: str, stated: NumberMatch) -> NumberMatch:
    """A difference said in words is negative when the first is less: 'A가 B보다 1억 원 적습니다' states A - B =
    -1억 원, as a Cmp question ('A에서 B를 빼면 얼마인가요?') asks it. 'B보다 … 많습니다' keeps its sign."""
    if stated.exact > 0 and "보다" in clause[: stated.start] and _LESS.match(clause[stated.end :]):
        return replace(stated, exact=-stated.exact, text=f"-{stated.text}")
    return stated


def _score_date(span: AnswerSpan, gold: DateAnswer, year: int) -> ResponseVerdict:
    def dated(sentence: str) -> list[Any]:
        return [*find_dates(sentence, year), *find_periods(sentence, year)]

    body = evidence_free(span.text)
    if not dated(body):
        return _verdict(False, "", f"no valid date in {_where(span)}", span, readable=False)
    reading = read(span.text, dated, _where_of)
    if reading.problem is not None:
        return _verdict(False, "", reading.problem, span)
    if not reading.chosen:
        return _verdict(
            False, "", "no statement commits to a date (negated, an example or a possibility)", span
        )
    clause = reading.clause
    periods = find_periods(clause, year)
    dates = find_dates(clause, year)
    if periods:
        period = periods[-1]
        if gold.period is None:
            return _verdict(False, f"{period.first}..{period.last}", "states a period, not one day", span)
        day = period.last if gold.period == "end" else period.first
        ok = day == gold.value
        return _verdict(
            ok,
            day.isoformat(),
            f"the period's {gold.period} {day} {'equals' if ok else 'differs from'} {gold.value}",
            span,
        )
    if not dates:
        return _verdict(False, "", "no statement commits to a date", span)
    if len(dates) >= 2 and _LIST_LINK.match(clause[dates[-2].end : dates[-1].start]):
        return _verdict(False, " | ".join(d.text for d in dates), "states several dates, not one", span)
    lines = [s for s in sentence_texts(body) if find_dates(s, year)]
    if len(lines) >= 2 and all(_bare(s, [(d.start, d.end) for d in find_dates(s, year)]) for s in lines):
        return _verdict(False, " | ".join(lines), "lists dates line by line, not one", span)
    last: DateMatch = dates[-1]
    rivals = [d for d in reading.possible if isinstance(d, DateMatch) and d.value != last.value]
    if rivals:
        return _verdict(False, last.text, f"hedges: {rivals[0].text!r} is offered as a possibility too", span)
    ok = last.value == gold.value
    return _verdict(
        ok, last.text, f"date {last.value} {'equals' if ok else 'differs from'} {gold.value}", span
    )


def _score_text(span: AnswerSpan, gold: TextAnswer, pool: Sequence[Any], query: str = "") -> ResponseVerdict:
    others = _distractors(gold, pool)
    spellings = name_spellings(gold, pool)
    needles = [*spellings, *others]

    def named(text: str) -> list[tuple[int, int, str]]:
        return _mentions(text, needles)

    body = evidence_free(span.text)
    shown = normalize_text(without_asides(body))
    if not named(body):
        return _verdict(
            False, shown, f"the gold {gold.value!r} is not named in {_where(span)}", span, readable=False
        )
    reading = read(span.text, named, _where_of)
    if reading.problem is not None:
        return _verdict(False, shown, reading.problem, span)
    if not reading.chosen:
        return _verdict(
            False, shown, "no statement commits to a name (negated, an example or a possibility)", span
        )
    chosen = [m for m in reading.chosen if isinstance(m, tuple)]
    rivals = list(dict.fromkeys(m[2] for m in chosen if m[2] in others))
    golds = [m for m in chosen if m[2] not in others]
    if rivals:
        return _verdict(
            False, shown, f"also names {', '.join(rivals)}, so it does not commit to one answer", span
        )
    if not golds:
        return _verdict(False, shown, f"the gold {gold.value!r} is not the committed name", span)
    if _HEDGE_TEXT.search(reading.clause):
        return _verdict(False, shown, "hedges between alternatives (또는 / 혹은 / or)", span)
    possible = [m[2] for m in reading.possible if isinstance(m, tuple) and m[2] in others]
    if possible:
        return _verdict(False, shown, f"hedges: {possible[0]!r} is offered as a possibility too", span)
    if span.source == "marker" and len(parts(without_asides(span.text))) > 1:
        return _verdict(False, shown, "the marked answer lists several values, not one", span)
    lines = [t for t in sentence_texts(body) if named(t)]
    if len(lines) >= 2 and all(_bare_name(t, named(t)) for t in lines):
        return _verdict(False, shown, "lists names line by line, not one", span)
    for stated in dict.fromkeys((reading.clause, reading.sentence)):  # the clause, and how its sentence ends
        said = _predicate(stated)
        tail = " ".join(without_asides(stated).split()[-3:])
        if said is not None and _same_kind(said, gold) and not _mentions(tail, spellings):
            return _verdict(False, shown, f"its answer is {said!r}, not {gold.value!r}", span)
    for phrase in phrases(reading.clause, spellings):
        hay = normalize_text(phrase)
        for _, end, name in _mentions(phrase, spellings):
            word = longer_name(hay, end, query, needles, spellings)
            if word is not None:
                return _verdict(
                    False, shown, f"its answer is {name} {word}, a longer name than {gold.value!r}", span
                )
    return _verdict(True, shown, f"names {golds[0][2]!r} and no other candidate", span)


_PREDICATE = re.compile(r"(\S+?)(?:입니다|이다|예요|이에요|이었습니다|였습니다|임)[\s.!。]*$")


def _predicate(clause: str) -> str | None:
    """The word a clause ends on before its copula ('…바뀌었으므로 기후에너지환경부입니다' -> '기후에너지환경부')."""
    m = _PREDICATE.search(without_asides(clause).strip())
    return normalize_text(m.group(1)) or None if m else None


def _same_kind(word: str, gold: TextAnswer) -> bool:
    """A word that names a thing of the gold's kind: it ends as the gold ends ('…부' for a ministry, '…군' for a
    county), so a copula on it states another answer of the same kind."""
    key, gold_key = _unspaced(word), _unspaced(gold.value)
    return len(key) > 1 and bool(gold_key) and key[-1] == gold_key[-1] and not key.isdigit()


def _bare_name(line: str, found: list[tuple[int, int, str]]) -> bool:
    """A line that is only a name ('- 지구과학', '**창녕군**')."""
    hay = normalize_text(line)
    rest = "".join(ch for i, ch in enumerate(hay) if not any(a <= i < b for a, b, _ in found))
    return _BARE_REST.match(rest) is not None


def _score_text_list(span: AnswerSpan, gold: ListAnswer, pool: Sequence[Any]) -> ResponseVerdict:
    items = [i for i in gold.items if isinstance(i, TextAnswer)]
    others = _distractors(gold, pool)
    spellings = [s for i in items for s in i.spellings()]
    main = _main(span, lambda t: bool(_mentions(t, [*spellings, *others])))
    shown = normalize_text(main)
    named = [m for m in _mentions(main, [*spellings, *others]) if m[2] in others]
    if named:
        return _verdict(False, shown, f"also names {named[0][2]!r}, which is not a gold item", span)
    firsts: list[int] = []
    for n, item in enumerate(items, 1):
        hits = _mentions(main, item.spellings())
        if not hits:
            readable = n > 1 or any(_mentions(main, i.spellings()) for i in items)
            return _verdict(
                False, shown, f"item {n} ({item.value!r}) not named in {_where(span)}", span, readable
            )
        firsts.append(min(h[0] for h in hits))
    if gold.ordered and firsts != sorted(firsts):
        return _verdict(False, shown, "items stated out of order", span)
    return _verdict(True, shown, f"all {len(items)} items named, no other candidate", span)


def _score_value_list(span: AnswerSpan, gold: ListAnswer, year: int) -> ResponseVerdict:
    """Number and date lists: stated values and gold items must match one to one (in order when ordered)."""
    numbers = [i for i in gold.items if isinstance(i, NumberAnswer)]
    dates = [i for i in gold.items if isinstance(i, DateAnswer)]
    stated: list[tuple[str, str]] = []  # (source text, shown value)
    matches: list[list[bool]] = []  # matches[s][g]: stated value s matches gold item g
    if numbers:
        main = _main(span, _amounts)
        for m in _amounts(main):
            if not all(compatible_units(g.unit, m.unit) for g in numbers):
                return _verdict(
                    False, m.text, f"{m.text!r} is stated in {m.unit}, not {numbers[0].unit}", span
                )
            stated.append((m.text, _show(m.exact)))
            matches.append([number_matches(m, g)[0] for g in numbers])
        wanted = [_show(_decimal(g.value)) for g in numbers]
    else:
        main = _main(span, lambda t: bool(find_dates(t, year)))
        for d in find_dates(main, year):
            stated.append((d.text, d.value.isoformat()))
            matches.append([d.value == g.value for g in dates])
        wanted = [g.value.isoformat() for g in dates]
    extracted = " | ".join(text for text, _ in stated)
    if not stated:
        return _verdict(False, "", f"no values in {_where(span)}", span, readable=False)

    def fail(reason: str) -> ResponseVerdict:
        return _verdict(False, extracted, reason, span)

    if gold.ordered:
        seen: set[str] = set()
        order: list[int] = []
        for s, (_, value) in enumerate(stated):
            if value not in seen:
                seen.add(value)
                order.append(s)
        values = [stated[s][1] for s in order]
        if len(order) != len(wanted) or not all(matches[s][g] for g, s in enumerate(order)):
            return fail(f"stated {values} in order, expected {wanted}")
    else:
        for g, want in enumerate(wanted):
            if not any(row[g] for row in matches):
                return fail(f"item {g + 1} ({want}) not stated in {_where(span)}")
        for (_, value), row in zip(stated, matches, strict=True):
            if not any(row):
                return fail(f"extra value {value} is not a gold item")
    return _verdict(True, extracted, f"all {len(wanted)} items stated", span)


def score_response(
    message: str, answer: Answer, reference_year: int, distractors: Sequence[Any] = (), query: str = ""
) -> ResponseVerdict:
    """Match the answer stated in `message` against the gold `answer` (rules in the module docstring).

    `reference_year` completes month-day dates ('11월 29일', '10/16'); use the task's year. `distractors` are the
    other values the chain offered where the answer was chosen (a fixture's `answer_pool`; gold values in it are
    ignored). `query` (the task's question) tells labelled values apart ('보통주 3,070원, 우선주 3,120원').
    """
    if not message.strip():
        return ResponseVerdict(passed=False, extracted="", reason="empty message", source="message")
    answer = _codes_as_text(answer)  # the rules read a code as a name made of digits and letters
    span = answer_span(message, answer, reference_year, distractors)
    rest = evidence_free(span.text)
    if pasted(rest) or not rest.strip():
        return _verdict(False, span.text[:80], "pasted data (JSON/XML), not a stated answer", span)
    if isinstance(answer, NumberAnswer):
        return _score_number(span, answer, query, distractors)
    if isinstance(answer, DateAnswer):
        return _score_date(span, answer, reference_year)
    if isinstance(answer, TextAnswer):
        return _score_text(span, answer, distractors, query)
    if isinstance(answer, ListAnswer):
        if isinstance(answer.items[0], TextAnswer):
            return _score_text_list(span, answer, distractors)
        return _score_value_list(span, answer, reference_year)
    if isinstance(answer, CodeAnswer):  # read as text above
        raise AssertionError("unreachable")
    assert_never(answer)


def _codes_as_text(answer: Answer) -> Answer:
    if isinstance(answer, CodeAnswer):
        return TextAnswer(value=answer.value)
    if isinstance(answer, ListAnswer) and isinstance(answer.items[0], CodeAnswer):
        items: list[Any] = [TextAnswer(value=i.value) for i in answer.items]
        return ListAnswer(items=items, ordered=answer.ordered)
    return answer


def score_text(
    message: str, answer: Answer, reference_year: int, pool: Sequence[Any] = (), query: str = ""
) -> ResponseVerdict:
    """Text mode: the reply's `최종 답:` line, read by type and graded as a submission is
    (kopa_gen/evaluate/finalline.py); without that line, the sentence rules (`score_response`). When the rules are
    unsure they fail and say "unreadable"."""
    final = read_final(message, answer, reference_year, pool, query)
    if final is None:
        verdict = score_response(message, answer, reference_year, pool, query)
        if not verdict.readable:
            verdict = verdict.model_copy(update={"reason": f"unreadable: {verdict.reason}"})
        return verdict
    stated = final.stated
    if isinstance(stated, Unread):
        reason = stated.reason if stated.committed else f"unreadable: {stated.reason}"
        return ResponseVerdict(
            passed=False,
            extracted="",
            reason=reason,
            source="final-line",
            readable=stated.committed,
            decided_by="final-line",
        )
    reopened = _reopened(final.after, answer, reference_year, pool)
    if reopened is not None:
        return ResponseVerdict(
            passed=False,
            extracted=_stated_text(stated),
            reason=reopened,
            source="final-line",
            decided_by="final-line",
        )
    graded = grade(stated, answer, pool)
    return ResponseVerdict(
        passed=graded.passed,
        extracted=_stated_text(stated),
        reason=graded.reason,
        source="final-line",
        decided_by="final-line",
    )


def _reopened(after: str, answer: Answer, year: int, pool: Sequence[Any]) -> str | None:
    """Why what a reply wrote after its final line takes that line back: a correction that states a value, or a
    possibility that offers another ('…17개일 가능성도 있으니')."""
    answer = _codes_as_text(answer)
    other = another_reading(after, lambda t: _candidates(t, answer, year, pool))
    if other is not None:
        return f"answers another reading of the question after its final line ({other!r} …)"
    correcting = False
    for s in clause_sentences(after):
        for clause in s.clauses:
            if clause.role == "refusal" and withholds(clause.text):
                return "takes its final answer back after it"
            correcting = correcting or clause.role == "correction"
            if not _candidates(clause.text, answer, year, pool):
                continue
            if correcting:
                return "corrects its final line after it"
            if clause.role == "possible":
                return "offers another answer as a possibility after its final line"
    return None


def score_submitted(
    answer: Answer, submissions: Sequence[Stated], pool: Sequence[Any] = ()
) -> ResponseVerdict:
    """Submit mode: the episode's submissions, graded by type (kopa_gen/evaluate/submission.py)."""
    graded = grade_submissions(answer, submissions, pool)
    return ResponseVerdict(
        passed=graded.passed,
        extracted=" | ".join(_stated_text(s) for s in submissions),
        reason=graded.reason,
        source="submission",
        readable=bool(submissions),
        decided_by="submission",
    )


def _stated_text(stated: Stated) -> str:
    if isinstance(stated, StatedList):
        return ", ".join(_stated_text(i) for i in stated.items)
    if isinstance(stated, StatedNumber):
        return stated.text
    if isinstance(stated, StatedDate):
        return stated.value.isoformat()
    return stated.text


__all__ = [
    "Judge",
    "ResponseVerdict",
    "answer_span",
    "number_matches",
    "score_response",
    "score_submitted",
    "score_text",
    "without_asides",
]

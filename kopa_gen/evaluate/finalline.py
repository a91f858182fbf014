"""Text mode's committed answer: the reply's `최종 답: …` line, read into one typed value (kopa_gen/evaluate/typed.py
grades it exactly as it grades a submission).

The system prompt of text mode asks for one last line `최종 답: <one answer>`. Accepted spellings of the label:
최종 답, 최종 답변, 최종 정답, Final answer (bold, a list bullet or a heading mark before it allowed). The last such
line counts; several such lines that state different values commit to none. On the line, bold, backticks, quotes,
a closing copula ('…입니다.') and asides in parentheses are dropped; an aside that hedges ('(또는 창녕군)') or a
line that lists values fails. A line with no value of the asked kind is read as no answer.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kopa_gen.evaluate.clauses import CORRECTION as _CORRECTION
from kopa_gen.evaluate.clauses import another_reading, role_of
from kopa_gen.evaluate.typed import (
    Stated,
    StatedDate,
    StatedList,
    StatedNumber,
    StatedText,
    list_readings,
    longer_name,
    name_ends,
    name_spellings,
    parts,
    phrases,
    strong_parts,
    unspaced,
)
from kopa_gen.language.answers import (
    Answer,
    CodeAnswer,
    DateAnswer,
    ItemAnswer,
    ListAnswer,
    NumberAnswer,
    TextAnswer,
)
from kopa_gen.language.normalize import (
    find_dates,
    find_numbers,
    find_periods,
    fold,
    mention_pattern,
    normalize_text,
)

_LABEL = re.compile(
    r"^[ \t>#*+\-]*(?:\*\*|__)?[ \t]*(?:최종[ \t]*(?:답변|정답|답)|final[ \t]+answer)[ \t]*(?:\*\*|__)?[ \t]*[:：]"
    r"(?:[ \t]*(?:\*\*|__))?(?P<rest>[^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)
_DECOR = re.compile(r"\*\*|__|`|[\"“”‘’「」『』]")
_COPULA = re.compile(r"(?:\s*(?:입니다|이에요|예요|이다|임|이요|요|입니당))?\s*[.!。]*\s*$")
_ASIDE = re.compile(r"\(([^()]*)\)|（([^（）]*)）|\[([^\[\]]*)\]")
_HEDGE = re.compile(r"또는|혹은|아니면|이거나|(?<![a-z])or(?![a-z])|일 수도|일수도|가능성", re.IGNORECASE)
_BOUND = re.compile(
    r"(?:이상|이하|미만|초과|이내|넘게|남짓|가까이|최소|최대|at least|up to|more than|less than)"
)
_DIGIT = re.compile(r"\d")
_CODE = re.compile(r"(?<![0-9A-Za-z])[0-9A-Za-z]*\d[0-9A-Za-z\-]*(?![0-9A-Za-z])")


@dataclass(frozen=True)
class Unread:
    """The line holds no single value of the asked kind; `committed` is False when it states none at all."""

    reason: str
    committed: bool = True


@dataclass(frozen=True)
class Line:
    """One `최종 답:` line: its content (with a continuation on the next line: the answer itself when the label
    stands alone, or an aside such as '(단위: 천원)'), and where the line ends in the folded message."""

    content: str
    end: int


_JSON_ANSWER = re.compile(
    r"\{\s*\"(?:answer|final_answer|최종\s*답|정답)\"\s*:\s*(?P<v>\"[^\"\n]*\"|-?[\d.]+)\s*\}"
)


_ITEM = re.compile(r"^[ \t]*(?:[-*+•·]|\d{1,2}[.)])[ \t]+")


def final_lines(message: str) -> list[Line]:
    """Every `최종 답:` line, in order (a pasted `{"answer": …}` object counts as one)."""
    text = fold(message)
    out: list[Line] = []
    for m in _LABEL.finditer(text):
        content, end = m.group("rest").strip(), m.end()
        following = text[end:].split("\n")[1:]
        rest = [(k, line) for k, line in enumerate(following) if line.strip()]
        if not _DECOR.sub("", content).strip() and rest:
            first = rest[0][0]
            items = list(itertools.takewhile(_ITEM.match, following[first:]))
            if len(items) > 1:  # 'final answer:' alone, then a bulleted or numbered list: one value per item
                content = "\n".join(_ITEM.sub("", line).strip() for line in items)
                end += sum(len(line) + 1 for line in following[: first + len(items)])
            else:
                content = rest[0][1].strip()  # 'final answer:' alone, the answer on the next line
                end += sum(len(line) + 1 for line in following[: first + 1])
        elif rest and rest[0][0] == 0 and rest[0][1].lstrip().startswith(("(", "（")):
            content = f"{content} {rest[0][1].strip()}"  # an aside continued on the next line
            end += len(following[0]) + 1
        out.append(Line(content, end))
    for m in _JSON_ANSWER.finditer(text):
        value = m.group("v")
        out.append(Line(value[1:-1] if value.startswith('"') else value, m.end()))
    return sorted(out, key=lambda line: line.end)


def _clean(text: str) -> str:
    return _COPULA.sub("", _DECOR.sub("", text)).strip()


def _split_asides(text: str) -> tuple[str, list[str]]:
    asides = ["".join(g for g in m.groups() if g) for m in _ASIDE.finditer(text)]
    return _ASIDE.sub(" ", text).strip(), asides


def _number(text: str, notes: Sequence[str] = ()) -> Stated | Unread:
    found = [m for m in find_numbers(text) if m.quantity and not m.per_unit]
    if not found:
        return Unread("the final line states no number", committed=False)
    if len(found) > 1:
        return Unread(f"the final line states {len(found)} numbers: {', '.join(m.text for m in found)}")
    m = found[0]
    if _BOUND.search(text[m.end :]) or _BOUND.search(text[: m.start]):
        return Unread(f"the final line states a bound, not a value ({text!r})")
    if m.ranged:
        return Unread(f"the final line states a range, not a value ({text!r})")
    declared = next((u.group("unit") for n in notes if (u := _UNIT_NOTE.search(n))), None)
    if m.unit is None and declared is not None:  # '154,329,557 (단위: 천원)'
        return StatedNumber(m.exact, declared, m.precision, f"{m.text} {declared}")
    return StatedNumber(m.exact, m.unit, m.precision, m.text)


def _mentions(text: str, needle: str) -> bool:
    key = unspaced(needle)
    return bool(key) and mention_pattern(key).search(unspaced(text)) is not None


def _whole(text: str, needle: str, query: str, names: Sequence[str] = ()) -> bool:
    """Whether `text` names `needle` as a whole name: not glued after other letters, nothing but particles or the
    copula glued after it, and no closing word it modifies (kopa_gen/evaluate/typed.py, names)."""
    key = unspaced(needle)
    if not key:
        return False
    for phrase in phrases(text, [needle]):
        hay = normalize_text(phrase)
        for m in mention_pattern(key).finditer(hay):
            before = hay[m.start() - 1 : m.start()]
            if before.isalnum() or not name_ends(hay, m.end()):
                continue
            if longer_name(hay, m.end(), query, names, [needle]) is None:
                return True
    return False


def _text(
    text: str, gold: TextAnswer, pool: Sequence[Any], query: str = "", whole: bool = False
) -> StatedText:
    """A stated name; `whole`: the text is one value even where it holds commas (a list's reading)."""
    if not whole and len(parts(text)) > 1:
        return StatedText(text)  # graded as several values
    spellings = name_spellings(gold, pool)
    keys = {unspaced(s) for s in spellings}
    others = [str(v) for v in pool if unspaced(str(v)) not in keys]
    named = [s for s in spellings if _whole(text, s, query, [*spellings, *others])]
    rivals = [o for o in others if _mentions(text, o) and not any(_mentions(o, s) for s in spellings)]
    if named and not rivals and unspaced(text) not in keys:
        return StatedText(named[0])  # a sentence naming the gold and no other candidate
    return StatedText(text)


def _names_any(text: str, gold: Answer, pool: Sequence[Any]) -> bool:
    spellings = gold.spellings() if isinstance(gold, TextAnswer) else []
    return any(_mentions(text, str(v)) for v in [*spellings, *pool])


def _code(text: str) -> Stated | Unread:
    codes = [m.group() for m in _CODE.finditer(text)]
    if not codes:
        return Unread("the final line states no code", committed=False)
    if len(codes) > 1:
        return Unread(f"the final line states {len(codes)} codes: {', '.join(codes)}")
    return StatedText(codes[0])


def _date(text: str, gold: DateAnswer, year: int) -> Stated | Unread:
    periods = find_periods(text, year)
    if periods:
        if gold.period is None:
            return Unread("the final line states a period, not one day")
        p = periods[-1]
        day = p.last if gold.period == "end" else p.first
        return StatedDate(day, text)
    dates = find_dates(text, year)
    if not dates:
        return Unread("the final line states no date", committed=False)
    if len({d.value for d in dates}) > 1:
        return Unread(f"the final line states {len(dates)} dates")
    return StatedDate(dates[0].value, dates[0].text)


def _item(
    text: str, gold: ItemAnswer, year: int, pool: Sequence[Any], notes: Sequence[str] = (), query: str = ""
) -> Stated | Unread:
    if isinstance(gold, NumberAnswer):
        return _number(text, notes)
    if isinstance(gold, TextAnswer):
        return _text(text, gold, pool, query)
    if isinstance(gold, CodeAnswer):
        return _code(text)
    return _date(text, gold, year)


def read_line(
    line: str, answer: Answer, year: int, pool: Sequence[Any] = (), query: str = ""
) -> Stated | Unread:
    """One `최종 답:` line's content as a typed value."""
    main, asides = _split_asides(_DECOR.sub("", line))
    if any(_HEDGE.search(a) for a in asides) or _HEDGE.search(main):
        return Unread(f"the final line hedges between values ({line.strip()!r})")

    def valued(text: str) -> list[str]:
        return ["value"] if _DIGIT.search(text) or _names_any(text, answer, pool) else []

    other = next((r for a in asides if (r := another_reading(a, valued)) is not None), None)
    if other is not None:
        return Unread(f"the final line answers another reading of the question too ({other!r} …)")
    if role_of(main) == "possible":
        return Unread(f"not committed: the final line guesses or asks ({line.strip()!r})")
    if isinstance(answer, TextAnswer) and asides and not _names_any(main, answer, pool):
        main = f"{main} {' '.join(asides)}"  # '제115조(양벌 규정)': the name stands in the aside
    text = _clean(main)
    if not text:
        return Unread("the final line is empty", committed=False)
    if isinstance(answer, ListAnswer):
        return _list(text, answer, year, pool, query)
    return _item(text, answer, year, pool, asides, query)


def _list(text: str, answer: ListAnswer, year: int, pool: Sequence[Any], query: str) -> Stated | Unread:
    """A listed line: its plain reading, and for names the readings that keep commas inside values."""
    first, *others = list_readings(text, len(answer.items))
    kind = answer.items[0]
    if isinstance(kind, TextAnswer) and len(strong_parts(text)) > 1:
        # cut at semicolons or line breaks: each part is one value, commas and all
        return StatedList([_listed_name(_clean(part), answer, pool, query) for part in first], text)
    items: list[Stated] = []
    for part in first:
        one = _item(_clean(part), kind, year, pool, query=query)
        if isinstance(one, Unread):
            return one
        if isinstance(kind, TextAnswer):
            # a labelled value ('중학교 042-703-8110') names whichever item it names
            one = _listed_name(_clean(part), answer, pool, query)
        items.append(one)
    readings: list[list[Stated]] = []
    if isinstance(kind, TextAnswer):
        for reading in others:
            readings.append([_listed_name(_clean(part), answer, pool, query) for part in reading])
    return StatedList(items, text, tuple(readings))


def _listed_name(text: str, answer: ListAnswer, pool: Sequence[Any], query: str) -> Stated:
    """One value of a listed line read as a whole name: the gold item it names behind a label ('보금: 266
    Munhwa-ro, …', '에테(주) 146 …'), else the text as stated. Beside the name only a label may stand: no digit,
    no second value."""
    for item in answer.items:
        if isinstance(item, TextAnswer):
            read = _text(text, item, pool, query, whole=True)
            rest = text.replace(read.text, " ") if read.text in text else text
            if read.text != text and len(parts(rest)) <= 1 and not _DIGIT.search(rest):
                return read
    return StatedText(text)


@dataclass(frozen=True)
class Final:
    """A text-mode reply's committed value (or why it has none), with what it wrote after its last final line
    (which may take the answer back) and whether it corrected itself between two final lines."""

    stated: Stated | Unread
    after: str
    corrected: bool


_UNIT_NOTE = re.compile(r"단위\s*[:：]?\s*(?P<unit>[^\s,)）]+)")


def read_final(
    message: str, answer: Answer, year: int, pool: Sequence[Any] = (), query: str = ""
) -> Final | None:
    """The committed value of a text-mode reply: its `최종 답:` line read by type; None without such a line.
    Several final lines commit only when they state the same value, or when the reply corrected itself between
    them (then the last counts)."""
    lines = final_lines(message)
    if not lines:
        return None
    text = fold(message)
    read = [read_line(line.content, answer, year, pool, query) for line in lines]
    last = read[-1]
    after = text[lines[-1].end :]
    between = text[lines[-2].end : lines[-1].end] if len(lines) > 1 else ""
    corrected = bool(between) and _CORRECTION.search(between) is not None
    if isinstance(last, Unread):
        return Final(last, after, corrected)
    earlier = [r for r in read[:-1] if not (isinstance(r, Unread) and not r.committed)]
    if not corrected and any(_key(r) != _key(last) for r in earlier):
        return Final(Unread(f"{len(lines)} final lines state different answers"), after, corrected)
    return Final(last, after, corrected)


def _key(stated: Stated | Unread) -> object:
    """What two final lines must share to state the same answer."""
    if isinstance(stated, StatedNumber):
        return ("number", stated.exact, stated.unit)
    if isinstance(stated, StatedText):
        return ("text", unspaced(stated.text))
    if isinstance(stated, StatedDate):
        return ("date", stated.value)
    if isinstance(stated, StatedList):
        return ("list", tuple(_key(i) for i in stated.items))
    return ("unread", stated.reason)

"""Typed grading: one stated value against the typed gold answer, with no sentence reading at all.

Both answer channels end here: a `submit_answer` call (kopa_gen/evaluate/submission.py) and, in text mode, the
reply's `최종 답:` line (kopa_gen/evaluate/finalline.py) are read into a `Stated` value first; `grade` then decides.

- number: the stated value and the gold are scaled to their unit's dimension (kopa_gen/language/units.py:
  천원, 억원 for 원; 곳, 명 for 개) and must be equal, within the task's declared `tolerance` / `rel_tolerance`, or
  be the gold rounded to the precision the value is written in and within 0.1% of it ('1,543억 원' for
  154,329,557,000원; not '930' for 927.8), and no other value of the answer pool rounds to it at that precision
  ('52.4%' for 52.42 fails when 52.36 is a candidate too: the rounded value does not say which). A unit of
  another dimension or an unknown unit fails.
- text: equal to the gold or an alias after normalization (corporate forms, spacing, punctuation, case and
  full-width letters ignored); administrative qualifiers before it are allowed ('경상남도 하동군' for 하동군), and
  so is the stem without its administrative suffix when no other pool candidate begins with it ('하동').
  Several values ('환경부, 기후에너지환경부') fail, whether or not the others are candidates; so does a longer name
  ('하동군의회'). The names section below says how prose states a name whole (text mode reads it).
- code: the same characters, spaces and hyphens ignored.
- date: the same day.
- list: stated items and gold items match one to one (in order when the gold is ordered); a missing or an extra
  item fails.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, assert_never

from kopa_gen.language.answers import (
    Answer,
    CodeAnswer,
    DateAnswer,
    ItemAnswer,
    ListAnswer,
    NumberAnswer,
    TextAnswer,
    code_key,
)
from kopa_gen.language.functions import maybe_number
from kopa_gen.language.normalize import normalize_text
from kopa_gen.language.units import parse_unit

ROUNDING_SHARE = Decimal("0.001")
"""A value rounded as written passes only within this share of the gold (0.1%)."""


@dataclass(frozen=True)
class StatedNumber:
    """A number as stated: its exact value in `unit` (None: no unit given), and the place value of its last written
    significant digit in that unit ('1,543억' -> 10^8 when read as won, '1051.4' -> 0.1)."""

    exact: Decimal
    unit: str | None
    precision: Decimal
    text: str


@dataclass(frozen=True)
class StatedText:
    text: str


@dataclass(frozen=True)
class StatedDate:
    value: dt.date
    text: str


@dataclass(frozen=True)
class StatedList:
    """A stated list; `readings` are other cuts of the same text into values (typed.list_readings), tried when
    the plain cut does not pass."""

    items: list[Stated]
    text: str
    readings: tuple[list[Stated], ...] = ()


Stated = StatedNumber | StatedText | StatedDate | StatedList


@dataclass(frozen=True)
class Graded:
    passed: bool
    reason: str


def decimal_of(x: int | float | Decimal) -> Decimal:
    if isinstance(x, Decimal):
        return x
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))


def show(d: Decimal) -> str:
    return format(d.normalize(), "f")


def precision_of(exact: Decimal, written: str | None = None) -> Decimal:
    """The place value of the last significant digit: its decimals, or its trailing zeros ('1500' -> 100)."""
    digits = (written or show(exact)).replace(",", "").lstrip("+-")
    if "." in digits:
        return Decimal(1).scaleb(-len(digits.split(".")[1]))
    whole = digits.rstrip("0")
    return Decimal(10) ** (len(digits) - len(whole)) if whole.strip("0") else Decimal(1)


@functools.lru_cache(maxsize=256)
def _pool_numbers(pool: tuple[str, ...]) -> tuple[Decimal, ...]:
    return tuple(d for d in (maybe_number(v) for v in pool) if d is not None)


def grade_number(stated: StatedNumber, gold: NumberAnswer, pool: Sequence[Any] = ()) -> Graded:
    """Rule 'number' of the module docstring."""
    want_unit = parse_unit(gold.unit) if gold.unit else None
    unit = parse_unit(stated.unit) if stated.unit else None
    if stated.unit and unit is None:
        return Graded(False, f"{stated.text!r}: unknown unit {stated.unit!r}")
    if want_unit is not None and unit is not None and unit.dimension != want_unit.dimension:
        return Graded(
            False,
            f"{stated.text!r} is stated in {unit.text} ({unit.dimension}); the question asks for "
            f"{want_unit.text} ({want_unit.dimension})",
        )
    gold_scale = want_unit.scale if want_unit is not None else Decimal(1)
    scale = unit.scale if unit is not None else gold_scale
    have = stated.exact * scale
    want = decimal_of(gold.value) * gold_scale
    off = abs(have - want)
    allowed = max(decimal_of(gold.tolerance) * gold_scale, decimal_of(gold.rel_tolerance) * abs(want))
    where = show(want / gold_scale) + (f" {gold.unit}" if gold.unit else "")
    if off <= allowed:
        return Graded(True, f"{stated.text!r} equals {where}")
    step = stated.precision * scale
    rounded = (want / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step
    if step > 0 and rounded == have and off <= ROUNDING_SHARE * abs(want):
        gold_value = decimal_of(gold.value)
        for other in _pool_numbers(tuple(str(v) for v in pool)):
            scaled = other * gold_scale
            if (
                other != gold_value
                and (scaled / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step == have
            ):
                return Graded(
                    False,
                    f"{stated.text!r} is {where} rounded to {show(stated.precision)}, but the candidate "
                    f"{show(other)} rounds to it too: it does not say which",
                )
        return Graded(True, f"{stated.text!r} is {where} rounded to {show(stated.precision)}")
    return Graded(False, f"{stated.text!r} is off from {where} by {show(off / gold_scale)}")


# a comma between a digit and three digits ('1,234') groups thousands; a slash between digits writes a date
_SEPARATORS = re.compile(
    r"\s*(?:(?<!\d),|,(?!\d{3}(?!\d))|(?<!\d)/|/(?!\d)|[、;|·]|\s(?:및|그리고|또는|혹은|이나|or|and)\s|\n)\s*",
    re.IGNORECASE,
)
# separators that never sit inside one value: when a list uses them, its commas belong to its values
_STRONG = re.compile(r"\s*(?:[;|]|\s/\s|\n)\s*")
_QUALIFIER = re.compile(r"^[가-힣]+(?:도|시|군|구)$")
_COUNTER = re.compile(r"(?:번|호|호선|번버스|번노선)$")
_KIND_WORD = re.compile(r"(?:버스정류소|버스정류장|정류소|정류장|휴게소|노선)$")


def parts(text: str) -> list[str]:
    """The values a stated text lists (split at commas, slashes, 및 / 또는 / or, line breaks)."""
    return [p for p in (s.strip() for s in _SEPARATORS.split(text)) if p]


def strong_parts(text: str) -> list[str]:
    """The values a stated text lists at separators that never sit inside one value (;, |, ' / ', line breaks)."""
    return [p for p in (s.strip() for s in _STRONG.split(text)) if p]


def list_readings(text: str, n: int, limit: int = 200) -> list[list[str]]:
    """The ways to read a stated list as values, the plain reading first. A list cut by semicolons, bars, spaced
    slashes or line breaks is cut there only ('서울 중구 세종대로 110; 부산 …'). Otherwise, when commas give more
    than the `n` values asked, each cut of the same text into `n` runs of neighbouring pieces is a reading too:
    a value may hold commas itself ('146 Beonyeong-ro, Suji-myeon, Namwon-si, 266 Munhwa-ro, …'). Every reading
    uses the whole text, so no reading drops or adds a stated value. At most `limit` readings."""
    strong = strong_parts(text)
    if len(strong) > 1:
        return [strong]
    spans = [(m.start(), m.end()) for m in _SEPARATORS.finditer(text)]
    bounds = [0, *(x for span in spans for x in span), len(text)]
    pieces = [(bounds[2 * i], bounds[2 * i + 1]) for i in range(len(spans) + 1)]
    pieces = [(a, b) for a, b in pieces if text[a:b].strip()]
    plain = [text[a:b].strip() for a, b in pieces]
    readings = [plain]
    if not 1 < n < len(pieces):
        return readings
    for cut in itertools.combinations(range(1, len(pieces)), n - 1):
        if len(readings) > limit:
            break
        edges = [0, *cut, len(pieces)]
        readings.append([text[pieces[edges[k]][0] : pieces[edges[k + 1] - 1][1]].strip() for k in range(n)])
    return readings


# ------------------------------------------------------------------------------------------------ names
#
# A name is stated only as a whole name. Glued to it may come particles, the copula and its endings, an honorific
# or a counter ('하동군에서', '양벌규정입니다', '양영수씨', '504번'); any other letters make it part of a longer
# name ('하동군의회', '현재디자인홀딩스', '지구과학Ⅱ', '양벌규정등'). After a space, a noun phrase that closes the
# statement makes the name its modifier ('초ㆍ중등교육법 시행령', '이상훈의 배우자', '환경부 산하 기상청'), unless
# its closing word only says what the thing is (the question's own words for it, a part of the gold's name, or
# 후보, 정류소, 과목, …): `longer_name`.

_ENDINGS = (
    # particles
    "이", "가", "은", "는", "을", "를", "의", "에", "에서", "에게", "께", "께서", "한테", "으로", "로", "와", "과", "도",
    "만", "까지", "부터", "처럼", "보다", "랑", "이랑", "하고", "뿐", "밖에", "마다", "조차", "이란", "란", "이든", "든",
    "이나", "나", "서",
    # the copula and its endings
    "이다", "다", "입니다", "입니까", "니다", "습니다", "이에요", "에요", "예요", "이야", "야", "이요", "요", "임", "인",
    "일", "이며", "며", "이고", "고", "이었", "었", "였", "이지만", "지만", "인데", "데", "이라", "라", "이라고", "라고",
    "이라는", "라는", "이라서", "라서", "이므로", "므로", "이니", "니", "니까", "이면", "면", "라면", "다면", "겠", "지",
    "죠", "네", "군요", "구나", "까", "예",
    # honorifics, counters, plural
    "씨", "님", "측", "번", "호", "들",
)  # fmt: skip
_ENDING_RUN = re.compile("(?:" + "|".join(sorted(_ENDINGS, key=lambda w: (-len(w), w))) + ")*")
_GLUED = re.compile(r"[^\s]*")
_KIND_WORDS = frozenset(
    "후보 후보자 의원 당선인 씨 님 선생님 측 과목 교과 수업 시간 지역 일대 정류소 정류장 버스 노선 휴게소 회사 법인 기업 "
    "업체 부처 기관 번 호".split()
)
"""Words that say what a name is, allowed as the last word after it ('이상훈 후보', '지구과학 시간')."""


def name_ends(hay: str, end: int) -> bool:
    """Whether a name that ends at `end` of normalized `hay` ends there: what is glued to it is only particles,
    the copula, an honorific or a counter (module comment above)."""
    run = _GLUED.match(hay, end)
    tail = run.group() if run is not None else ""
    return not tail or _ENDING_RUN.fullmatch(tail) is not None


def _stems_of(text: str) -> set[str]:
    return {w for w in re.findall(r"[가-힣]{2,}", text)}


def longer_name(
    text: str, end: int, query: str = "", names: Sequence[str] = (), golds: Sequence[str] = ()
) -> str | None:
    """The noun a name ending at `end` of normalized `text` modifies when the noun phrase after it closes the text
    ('시행령' in '초ㆍ중등교육법 시행령입니다', '배우자' in '이상훈의 배우자', '아들' in '이상훈 후보의 아들입니다',
    '기상청' in '환경부 산하 기상청입니다'), or None: when a particle ends the name's phrase ('하동군에서 …'), or the
    closing word only says what the name is (the question's words, `_KIND_WORDS`, or a part of the gold's own name:
    '창체 활동' for 창의적 체험활동; not after the genitive '의'), or is itself one of `names` (another spelling:
    'Samsung Electronics, 삼성전자')."""
    run = _GLUED.match(text, end)
    tail = run.group() if run is not None else ""
    if tail and tail != "의":
        return None
    rest = text[end + len(tail) :].split()
    genitive = tail == "의"
    asked = _stems_of(query)
    keys = [k for k in (unspaced(n) for n in names) if k]
    own = [k for k in (unspaced(g) for g in golds) if k]
    while rest and re.match(r"[가-힣]", rest[0]):
        word = rest[0]
        if _ENDING_RUN.fullmatch(word):
            if len(rest) == 1 or not word.endswith("의"):
                return None  # the copula after a closing quote or mark ('양벌규정' 입니다), or a particle
            genitive, rest = True, rest[1:]  # '양영수 씨의 배우자'
            continue
        stem, after = word, ""
        for cut in range(
            1, len(word) + 1
        ):  # the word without its copula or particle: '시행령입니다' -> '시행령'
            if _ENDING_RUN.fullmatch(word[cut:]):
                stem, after = word[:cut], word[cut:]
                break
        if any(k in stem for k in keys):
            return None
        kind = stem in _KIND_WORDS or any(q.startswith(stem) for q in asked) or any(stem in g for g in own)
        if len(rest) == 1:  # the closing word
            return stem if genitive or not kind else None
        if after not in ("", "의"):
            return None  # a particle ends the phrase: the name is no modifier of what closes the text
        genitive = after == "의"
        rest = rest[1:]
    return None


_PHRASE_BREAK = re.compile(r"\s*(?:[,←→⇒:;|/=~–—]|\s-\s)\s*")


def phrases(text: str, names: Sequence[str] = ()) -> list[str]:
    """`text` cut where punctuation ends a phrase ('코재정보통신(주) ← 영업이익 최대'): a name's phrase never runs
    past one, so `longer_name` reads each piece alone. Uncut when one of `names` holds such a mark itself ('Lg
    America, Inc.'): a cut would split the name."""
    if any(_PHRASE_BREAK.search(n) for n in names):
        return [text]
    return [p for p in _PHRASE_BREAK.split(text) if p.strip()]


def name_spellings(gold: TextAnswer, pool: Sequence[Any] = ()) -> list[str]:
    """The gold's spellings, and its stem without an administrative suffix when no other candidate shares that
    stem ('하동' for 하동군 among the counties of 경상남도; never '창원' for 창원시의창구 beside 창원시성산구)."""
    return list(_name_spellings(gold.value, tuple(gold.spellings()), tuple(str(v) for v in pool)))


@functools.lru_cache(maxsize=1024)
def _name_spellings(value: str, spellings: tuple[str, ...], pool: tuple[str, ...]) -> tuple[str, ...]:
    key = unspaced(value)
    if len(key) < 3 or key[-1] not in _ADMIN_SUFFIX or not re.fullmatch(r"[가-힣]+", key):
        return spellings
    stem = key[:-1]
    others = [unspaced(v) for v in pool if unspaced(v) != key]
    if any(o.startswith(stem) for o in others):
        return spellings
    return (*spellings, stem)


_ADMIN_SUFFIX = "시군구읍면동리"


@functools.lru_cache(maxsize=1 << 16)
def unspaced(text: str) -> str:
    """Normalized and without spaces: how names compare (cached: a task's pool is compared in every episode)."""
    return normalize_text(text).replace(" ", "")


_ASIDE = re.compile(r"\s*(?:\(([^()]*)\)|（([^（）]*)）)")
_HEDGE = re.compile(r"또는|혹은|아니면|이거나|(?<![a-z])or(?![a-z])|수도\s*있|일지도|/", re.IGNORECASE)


def _noted(text: str, pool: Sequence[Any]) -> str:
    """A name with a note in parentheses ('양영수 (추정)', '하동군 (득표수 기준)') as the name alone; a note that
    hedges or names another candidate stays, and fails the name."""
    if "(" not in text and "（" not in text:
        return text
    notes = ["".join(g for g in m.groups() if g) for m in _ASIDE.finditer(text)]
    others = {unspaced(str(v)) for v in pool}
    if any(_HEDGE.search(n) or unspaced(n) in others for n in notes):
        return text
    return _ASIDE.sub("", text).strip() or text


def grade_text(stated: StatedText, gold: TextAnswer, pool: Sequence[Any] = ()) -> Graded:
    """Rule 'text' of the module docstring."""
    stated = StatedText(_noted(stated.text, pool))
    key = unspaced(stated.text)
    golds = [unspaced(s) for s in name_spellings(gold, pool)]
    if key in golds:
        return Graded(True, f"{stated.text!r} names {gold.value!r}")
    counted = _COUNTER.sub("", key)
    if counted != key and counted in golds and counted.isdigit():  # '504번' for the route 504
        return Graded(True, f"{stated.text!r} names {gold.value!r} with its counter")
    kind = _KIND_WORD.sub("", key)
    if kind != key and kind in golds:  # '임기리입구 정류소' for the stop 임기리입구
        return Graded(True, f"{stated.text!r} names {gold.value!r} with the word for what it is")
    listed = parts(stated.text)
    if len(listed) > 1:
        return Graded(False, f"{stated.text!r} states {len(listed)} values where one is asked")
    words = normalize_text(stated.text).split()
    for cut in range(1, len(words)):  # '경상남도 하동군': region words before the name
        if not _QUALIFIER.match(words[cut - 1]):
            break
        if "".join(words[cut:]) in golds:
            return Graded(True, f"{stated.text!r} names {gold.value!r} with its region")
    if key in _keys(tuple(str(v) for v in pool)):
        return Graded(False, f"{stated.text!r} is another candidate, not {gold.value!r}")
    return Graded(False, f"{stated.text!r} is not {gold.value!r}")


@functools.lru_cache(maxsize=256)
def _keys(pool: tuple[str, ...]) -> frozenset[str]:
    return frozenset(unspaced(v) for v in pool)


def grade_code(stated: StatedText, gold: CodeAnswer) -> Graded:
    if code_key(stated.text) == gold.key():
        return Graded(True, f"{stated.text!r} is the code {gold.value}")
    if len(parts(stated.text)) > 1:
        return Graded(False, f"{stated.text!r} states several codes where one is asked")
    return Graded(False, f"{stated.text!r} is not the code {gold.value}")


def grade_item(stated: Stated, gold: ItemAnswer, pool: Sequence[Any] = ()) -> Graded:
    """One stated value against one gold item (a value of the wrong kind fails)."""
    if isinstance(gold, NumberAnswer):
        if not isinstance(stated, StatedNumber):
            return Graded(False, "a number is asked")
        return grade_number(stated, gold, pool)
    if isinstance(gold, TextAnswer):
        if not isinstance(stated, StatedText):
            return Graded(False, "a name is asked")
        return grade_text(stated, gold, pool)
    if isinstance(gold, CodeAnswer):
        if not isinstance(stated, StatedText):
            return Graded(False, "a code is asked")
        return grade_code(stated, gold)
    if isinstance(gold, DateAnswer):
        if not isinstance(stated, StatedDate):
            return Graded(False, "a date is asked")
        ok = stated.value == gold.value
        return Graded(ok, f"{stated.value} {'is' if ok else 'is not'} {gold.value}")
    assert_never(gold)


def _one_to_one(matches: list[list[bool]], n_gold: int) -> bool:
    """Whether stated values and gold items can be paired one to one (augmenting paths; lists are short)."""
    owner: list[int | None] = [None] * n_gold

    def place(s: int, seen: set[int]) -> bool:
        for g in range(n_gold):
            if matches[s][g] and g not in seen:
                seen.add(g)
                holder = owner[g]
                if holder is None or place(holder, seen):
                    owner[g] = s
                    return True
        return False

    return all(place(s, set()) for s in range(len(matches)))


def grade_list(stated: StatedList, gold: ListAnswer, pool: Sequence[Any] = ()) -> Graded:
    first = _grade_items(stated.items, gold, pool)
    if first.passed:
        return first
    for items in stated.readings:
        other = _grade_items(items, gold, pool)
        if other.passed:
            return Graded(True, f"{other.reason}, reading the commas inside values")
    return first


def _grade_items(items: list[Stated], gold: ListAnswer, pool: Sequence[Any]) -> Graded:
    n = len(gold.items)
    if len(items) != n:
        return Graded(False, f"states {len(items)} values; the question asks for {n}")
    if gold.ordered:
        for k, (s, g) in enumerate(zip(items, gold.items, strict=True), 1):
            one = grade_item(s, g, pool)
            if not one.passed:
                return Graded(False, f"item {k}: {one.reason}")
        return Graded(True, f"all {n} items, in order")
    matches = [[grade_item(s, g, pool).passed for g in gold.items] for s in items]
    if not _one_to_one(matches, n):
        for at, item in enumerate(gold.items, 1):
            if not any(row[at - 1] for row in matches):
                return Graded(False, f"gold item {at} ({_gold_text(item)}) is not among the stated values")
        return Graded(False, "the stated values do not pair one to one with the gold items")
    return Graded(True, f"all {n} items")


def _gold_text(item: ItemAnswer) -> str:
    return str(item.value)


def grade(stated: Stated, gold: Answer, pool: Sequence[Any] = ()) -> Graded:
    """The verdict for one stated value (rules in the module docstring)."""
    if isinstance(gold, ListAnswer):
        if not isinstance(stated, StatedList):
            return Graded(False, f"the question asks for {len(gold.items)} values; one was stated")
        return grade_list(stated, gold, pool)
    if isinstance(stated, StatedList):
        return Graded(False, f"states {len(stated.items)} values where one is asked")
    return grade_item(stated, gold, pool)

"""Korean-aware normalization of numbers, dates and names, as pure functions.

Every function first applies `fold` (NFC, full-width ASCII to ASCII, invisible characters dropped), so '１２３'
and '123' read alike.

Numbers (`find_numbers`, `parse_number`)
    Digits with optional thousands commas and a decimal part ('57,600', '0.35', '1,234.5'), followed by
    Korean unit words that multiply: 조 = 10^12, 억 = 10^8, 만 = 10^4 (big units, strictly descending across
    groups, groups separated by at most one space) and 천 = 10^3, 백 = 10^2 inside a group:
    '1조 2,345억 6,789만' = 1234567890000, '3천만' = 30000000, '1.2만' = 12000, '3억5000' = 300005000.
    A scale word may stand after a space when a unit, a number, a particle or no word follows it ('22 천원',
    '1,543 억 원'; not '2 천안'). Scientific notation reads too ('1.0514e3 kcal', '1.54329557E+11원').
    A plain number after a space continues an amount only after 만 ('6,789만 1,234원'). Sino-Korean numeral
    words are read when a unit follows ('천사백사십육 원' = 1446, '이십삼 명' = 23, '천만 원'); alone they are
    words ('구조', '이 회사').
    Arithmetic is exact (Decimal); the value is an int when whole, else a float.
    Signs: '-' or '−' directly before the digits (and not after a letter or digit, so '02-123' is not
    negative), '△' or '▼' (accounting negative, a space allowed after) give a negative; '+' and '▲' positive.
    After the number, '여' ('2만여') and one unit from `UNITS` (optionally after one space; a one-letter unit after
    a space must end its word or take a particle: '6 명이', not '3 인천') are taken as part of the match; '$', 'US$',
    '₩', 'KRW', 'USD' before it are units too; kopa_gen/language/units.py says which name the same quantity. A number
    whose unit is followed by '당' is a per-unit phrase ('1주당'). `precision` is the place value of the last
    written significant digit ('310.6조' 10^11), for rounding. `ranged` is True when a range word widens the
    number into an interval, which states no value ('20개 안팎', '내외', '전후', '남짓', '22,000원대', '20여 개').
    Digit strings with a leading zero ('005930', '02') are identifiers, never numbers; '제3조' is article 3.
    `NumberMatch.quantity` is False for numbers that are not amounts: inside a date or a calendar word
    ('2026년', '11월', '3분기', '14:30', '2026-11'), ranks with an attached unit ('3위', '2등', '1순위'),
    '제N', and list enumerators ('1. ' or '2) ' at the start of a line, followed by text).

Dates (`find_dates`, `find_periods`, `parse_date`)
    '2026년 11월 29일', '2026. 11. 29.', '2026.11.29', '2026-11-29', '2026/11/29', '20261129', English month
    names ('Oct 16, 2026', '16 October 2026', 'OCT. 16': capitalized or in capitals, so 'may 3' is none), and
    the month-day forms '11월 29일', '11/29' and 'Oct 16', which need a reference year. Impossible dates ('2026년 2월 30일') are
    rejected. Periods: two dates joined by 부터 / 에서 / ~ / -, a bare day after one ('10월 13일부터 16일까지'),
    '10월 13~16일'.

Text (`normalize_text`, `find_text`)
    NFC, casefold, corporate-form markers removed ((주), ㈜, 주식회사, (유), ㈲, 유한회사), punctuation and
    symbols turned into spaces, whitespace collapsed.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import itertools
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

from kopa_gen.language import units

# Full-width ASCII (U+FF01..U+FF5E) to ASCII and the ideographic space to a space; nothing else changes.
_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
# invisible format characters a reader never sees: zero-width space and joiners, word joiner, byte-order mark,
# soft hyphen, directional marks
_INVISIBLE = dict.fromkeys(
    [0x00AD, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0x2061, 0x2062, 0x2063, 0xFEFF]
)


def fold(text: str) -> str:
    """NFC-normalize, turn full-width ASCII (and the ideographic space) into ASCII and drop invisible format
    characters (zero-width spaces, byte-order marks), so that what a reader sees is what is compared."""
    return unicodedata.normalize("NFC", text).translate(_WIDTH).translate(_INVISIBLE)


# ---------------------------------------------------------------------------------------------- numbers

# Words read as a number's unit in prose: every unit of kopa_gen/language/units.py but the one-letter Latin ones
# that are mostly something else ('3 m', '2 h', '5 t'), plus ranks and calendar words, which make a number no amount.
_UNIT_WORDS = (
    *(w for w in units.UNIT_WORDS if len(w) > 1 or not w.isascii() or w in "%$p"),
    "번째", "순위", "분기", "위", "등", "호", "초",
)  # fmt: skip
UNITS: tuple[str, ...] = tuple(sorted(set(_UNIT_WORDS), key=len, reverse=True))
"""Unit words recognised right after a number (longest first, so '개월' wins over '개' and '%p' over '%')."""


def unit_family(unit: str) -> str:
    """The dimension a unit word names (kopa_gen/language/units.py), or the word itself when unknown."""
    return units.dimension(unit) or ""


def compatible_units(gold: str | None, stated: str | None) -> bool:
    """Whether a stated unit can state the gold quantity: either side without a unit, or one dimension."""
    return units.compatible(gold, stated)


_ORDINAL_UNITS = frozenset({"위", "등", "번째", "순위"})
_BIG = {"조": 10**12, "억": 10**8, "만": 10**4}
_SMALL = (("천", 1000), ("백", 100))
# A big unit character that begins a common word is not a unit ('조회', '조사', '만큼', '만약').
_NOT_BIG = {"조": "회사건정합항치", "만": "큼약"}

_START = re.compile(r"(?:(?P<neg>(?<![\w.,])[-−]|[△▼] ?)|(?<![\w.,])\+|▲ ?)?(?<![0-9A-Za-z_.])\d")
_DIGIT_RUN = re.compile(r"[\d,.]+")
# thousands separated by commas, or by spaces in three groups or more ('154 329 557 000')
_DIGITS = re.compile(
    r"\d+(?:\.\d+)?[eE][+-]?\d{1,2}(?![\dA-Za-z])"  # scientific notation: '1.0514e3', '1.54329557E+11'
    r"|\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d{1,3}(?: \d{3}){2,}(?![\d,.])|\d+(?:\.\d+)?"
)
_SCIENTIFIC = re.compile(r"\d+(?:\.(?P<frac>\d+))?[eE](?P<exp>[+-]?\d+)")
_UNIT = re.compile(
    "(?P<about>여)?(?: ?(?P<unit>(?:" + "|".join(re.escape(u) for u in UNITS) + ")(?![A-Za-z])))?",
    re.IGNORECASE,
)
_PREFIX_UNIT = re.compile(r"(?:(?P<cur>US\$|\$|₩|€|£|¥|KRW|USD|EUR|GBP|JPY|CNY)\s?)$", re.IGNORECASE)
# English scale words after an amount: '154.33 billion won'
_ENGLISH_SCALE = re.compile(r" ?(?P<w>thousand|million|billion|trillion|bn|mn)(?![A-Za-z])", re.IGNORECASE)
_ENGLISH_FACTOR = {
    "thousand": 10**3,
    "million": 10**6,
    "mn": 10**6,
    "billion": 10**9,
    "bn": 10**9,
    "trillion": 10**12,
}
_KOREAN_DIGITS = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
# two or more numeral letters, or one that is no common word ('이' this, '일' day, '사' company, '구' district)
_KOREAN_NUMERAL = re.compile(r"(?<![가-힣])(?:[일이삼사오육칠팔구십백천만억조]{2,}|[삼오육칠팔](?= ))")
_PARTICLE = re.compile(
    r"(?:입니다|입니까|이다|이며|이고|이었|였|이에요|예요|이요|을|를|이|가|은|는|의|에|으로|로|과|와|도|만|씩|까지|부터|정도|가량)"
)
_GLUED = re.compile(r"[가-힣]{1,4}")
_AFTER_NUMBER = re.compile(
    r"(?:[^가-힣]|$|입니|입니까|이다|이며|이고|이었|였|이에|예요|이요|이나|이라|라고|라는|라서|을|를|이|가|은|는|의|에|에서"
    r"|으로|로|과|와|도|만|씩|까지|부터|정도|가량|보다|대비|처럼|쯤|여|이상|이하|미만|초과|이내|남짓|가까이|뿐|밖에|마다|중|인|일|임"
    r"|이면|면|이니|니|이므로|므로|이지만|지만|인데|이던|던|짜리|째|배"
    r"|월|년|분기|시|분|초|주차|차|기|대|위|등|호|조|항|번째|학년|반|교시)"  # calendar and ranks: read elsewhere
)
# after a number and its unit: a range word ('안팎', '내외', '전후', '남짓'; '대' glued to the unit: '22,000원대')
_RANGE_AFTER = re.compile(
    r"\s?(?:안팎|내외|전후|남짓)|대(?![가-힣])|대(?=입니|이다|이며|이고|이었|였|에서|에|의|로|으로|를|가|는|인|라)"
)
_ENUMERATOR_LEAD = re.compile(r"[ \t]*(?:[-*+][ \t]+)?")  # from the line start to a list number
_ENUMERATOR_TAIL = re.compile(r"[.)][ \t]+\S")  # '1. 삼성전자', not '324.' ending a line
_CALENDAR = re.compile(
    r"(?<!\d)\d{4}\s*년(?:도)?|(?<!\d)\d{4}\s*(?:사업|회계|학)연도|(?<!\d)\d{1,2}\s*월|(?<!\d)\d\s*분기"
    r"|(?<!\d)\d{1,2}:\d{2}(?!\d)"
    r"|(?<![\d.])(?:19|20|21)\d\d[.\-/](?:0?[1-9]|1[0-2])(?![\d])"
)


@dataclass(frozen=True)
class NumberMatch:
    """One number found in a text (positions are in `fold(text)`)."""

    text: str
    """The matched source text, sign and unit included ('△1,234', '1.2만 명')."""
    exact: Decimal
    """The exact value."""
    unit: str | None
    """The unit word after the number ('원', '%', '명'), if any."""
    start: int
    end: int
    quantity: bool
    """False for numbers that are not amounts: parts of dates and calendar words ('2026년', '11월', '3분기',
    '14:30'), ordinals ('3위', '제3조') and list enumerators ('1.' at the start of a line)."""
    per_unit: bool = False
    """A per-unit phrase ('1주당', '1인당'): the number names the unit, it is no amount stated."""
    precision: Decimal = Decimal(1)
    """The place value of the last significant digit as written ('1,051.4' 0.1, '310.6조' 10^11, '1,500' 100)."""
    ranged: bool = False
    """A range word widens the number into an interval, so it states no value: '20개 안팎', '22,000원 내외',
    '전후', '남짓', '22,000원대', '20여 개'. ('약', '대략', '정도', '쯤', '가량' say "about" and leave the value:
    it is compared at the precision it is written in.)"""

    @property
    def value(self) -> int | float:
        """The value as an int when whole, else a float."""
        return _plain(self.exact)


def _plain(d: Decimal) -> int | float:
    return int(d) if d == d.to_integral_value() else float(d)


def _digits_at(t: str, i: int) -> tuple[int, Decimal] | None:
    """Digits starting exactly at `i`: (end, value), or None when absent or an identifier like '005930'."""
    m = _DIGITS.match(t, i)
    if m is None:
        return None
    whole = m.group().split(".")[0].replace(",", "").replace(" ", "")
    if len(whole) > 1 and whole.startswith("0"):
        return None
    return m.end(), Decimal(m.group().replace(",", "").replace(" ", ""))


def _group_at(t: str, i: int) -> tuple[int, Decimal] | None:
    """'5천3백', '1.2', '2,345': the amount before a big unit. (end, value) or None."""
    total, p, found = Decimal(0), i, False
    for word, mult in _SMALL:
        got = _digits_at(t, p)
        if got is None:
            continue
        at = got[0] + 1 if t.startswith(" " + word, got[0]) and _scale_follows(t, got[0] + 1) else got[0]
        if t.startswith(word, at):
            total += got[1] * mult
            p, found = at + len(word), True
    got = _digits_at(t, p)
    if got is not None and not t.startswith(tuple(w for w, _ in _SMALL), got[0]):
        total += got[1]
        p, found = got[0], True
    return (p, total) if found else None


_SCALE_RUN = re.compile(r"[천백만억조]+")


def _scale_follows(t: str, i: int) -> bool:
    """Whether the scale word at `i`, written after a space ('22 천원', '1,543 억 원'), belongs to the number
    before it: what follows the scale words is a unit, a number, a particle, or no word ('2 천안' is no 2,000)."""
    run = _SCALE_RUN.match(t, i)
    if run is None:
        return False
    j = run.end()
    if j >= len(t) or not ("가" <= t[j] <= "힣" or t[j] == " "):
        return True
    unit = _UNIT.match(t, j)
    if unit is not None and unit.group("unit"):
        return True
    if t[j] == " ":
        return t[j + 1 : j + 2].isdigit() or j + 1 >= len(t)
    return _PARTICLE.match(t, j) is not None


def _big_at(t: str, i: int) -> int | None:
    if i >= len(t) or t[i] not in _BIG:
        return None
    if i + 1 < len(t) and t[i + 1] in _NOT_BIG.get(t[i], ""):
        return None
    return _BIG[t[i]]


def _amount_at(t: str, i: int) -> tuple[int, Decimal] | None:
    """A whole Korean amount starting at digit `i` ('1조 2,345억 6,789만'): (end, value) or None."""
    total, end, p = Decimal(0), -1, i
    last_big: int | None = None
    while True:
        group = _group_at(t, p)
        if group is None:
            break
        q, amount = group
        big = _big_at(t, q)
        if (
            big is None
            and t.startswith(" ", q)
            and _big_at(t, q + 1) is not None
            and _scale_follows(t, q + 1)
        ):
            q, big = q + 1, _big_at(t, q + 1)  # '1,543 억 원'
        if big is not None and (last_big is None or big < last_big):
            total += amount * big
            last_big, end = big, q + 1
            p = end + 1 if t.startswith(" ", end) and end + 1 < len(t) and t[end + 1].isdigit() else end
            continue
        if big is None and last_big is not None:
            spaced = p > end  # the group came after a space
            if amount < last_big and (not spaced or last_big == _BIG["만"]):
                total, end = total + amount, q
        elif big is None:
            total, end = amount, q
        break
    return (end, total) if end >= 0 else None


def _calendar_spans(t: str) -> list[tuple[int, int]]:
    """Calendar words and date-shaped spans, merged and sorted; an 8-digit run counts only as a valid date."""
    spans = [(m.start(), m.end()) for m in _CALENDAR.finditer(t)]
    spans += [(s, e) for s, e, v in _date_shapes(t, None) if v is not None or not t[s:e].isdigit()]
    merged: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if merged and s < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps any of the merged, sorted `spans`."""
    i = bisect.bisect_left(spans, (end,))  # spans that begin before `end`
    return i > 0 and spans[i - 1][1] > start


def _unit_at(t: str, i: int) -> tuple[str | None, int]:
    """The unit word after a number ending at `i` (with a '여' before it), and where the match ends."""
    u = _UNIT.match(t, i)  # always matches, possibly empty
    assert u is not None
    bare = max(i, u.end("about"))  # after '여' when present
    unit = u.group("unit")
    spaced = unit is not None and u.start("unit") != bare
    if unit in _ORDINAL_UNITS and spaced:  # '3위' is a rank; in '324 등', 등 means "etc."
        unit = None
    # after a space a one-letter unit must end its word, but for a particle: '3 인천' is no '3인', '5 일반' no
    # '5일', while '1,446 원입니다' and '6 명이' are
    word_goes_on = re.match(r"[가-힣A-Za-z]", t[u.end() : u.end() + 1]) is not None
    if spaced and unit is not None and len(unit) == 1 and word_goes_on and not _PARTICLE.match(t, u.end()):
        unit = None
    if unit is None and not _AFTER_NUMBER.match(t, bare):
        # a word glued to the number that is no unit we know and no particle names an unknown unit ('…000냥',
        # '5교시'), which states no quantity of a known unit
        word = _GLUED.match(t, bare)
        if word is not None:  # the word up to a particle: '5학급입니다' -> '학급'
            cut = next(
                (k for k in range(1, len(word.group())) if _AFTER_NUMBER.match(t, bare + k)),
                len(word.group()),
            )
            return t[bare : bare + cut], bare + cut
    return unit, (u.end() if unit else bare)


_BIG_OR_SMALL = {"조": 10**12, "억": 10**8, "만": 10**4, "천": 1000, "백": 100}


def _precision(text: str, value: Decimal) -> Decimal:
    """The place value of the last written significant digit: its decimals, or its trailing zeros, times the
    units written after it ('6,789만' 10^4, '3천만' 10^7, '1.2만' 10^3); in scientific notation, the mantissa's last
    digit at the exponent's scale ('1.0514e3' 0.1)."""
    sci = _SCIENTIFIC.fullmatch(text.strip())
    if sci is not None:
        return Decimal(1).scaleb(int(sci.group("exp")) - len(sci.group("frac") or ""))
    runs = list(re.finditer(r"\d[\d,]*(?: \d{3})*(?:\.\d+)?", text))
    if not runs:
        whole = abs(value).to_integral_value()
        zeros = len(str(int(whole))) - len(str(int(whole)).rstrip("0")) if whole else 0
        return Decimal(10) ** zeros
    last = runs[-1]
    digits = last.group().replace(",", "").replace(" ", "")
    if "." in digits:
        place = Decimal(1).scaleb(-len(digits.split(".")[1]))
    else:
        place = Decimal(10) ** (len(digits) - len(digits.rstrip("0"))) if digits.strip("0") else Decimal(1)
    for ch in text[last.end() :]:
        if ch in _BIG_OR_SMALL:
            place *= _BIG_OR_SMALL[ch]
        elif not ch.isspace():
            break
    return place


def _korean_numeral(word: str) -> Decimal | None:
    """A sino-Korean numeral word ('천사백사십육' 1446, '삼천만' 30000000), or None when it is not one."""
    total, section, digit = 0, 0, None
    last_big = None
    for ch in word:
        if ch in _KOREAN_DIGITS:
            if digit is not None:
                return None
            digit = _KOREAN_DIGITS[ch]
        elif ch in "십백천":
            section += (digit or 1) * {"십": 10, "백": 100, "천": 1000}[ch]
            digit = None
        else:  # 만 억 조
            big = _BIG[ch]
            if last_big is not None and big >= last_big:
                return None
            total += (section + (digit or 0) or 1) * big
            section, digit, last_big = 0, None, big
    if len(word) > 1 and not any(ch in "십백천만억조" for ch in word):
        return None  # '오육' is no numeral
    return Decimal(total + section + (digit or 0))


def _numeral_runs(t: str) -> list[tuple[int, int, Decimal]]:
    """Sino-Korean numeral words, a spaced amount read as one ('천오백사십삼억 이천구백오십오만 칠천'): a run that
    ends in 조, 억 or 만 continues into the next after one space while the big units keep falling."""
    found = list(_KOREAN_NUMERAL.finditer(t))
    runs: list[tuple[int, int, Decimal]] = []
    k = 0
    while k < len(found):
        start, stop, word = found[k].start(), found[k].end(), found[k].group()
        value = _korean_numeral(word)
        k += 1
        while value is not None and k < len(found) and word[-1] in "조억만" and found[k].start() == stop + 1:
            longer = _korean_numeral(word + found[k].group())
            if longer is None:
                break
            word, value, stop = word + found[k].group(), longer, found[k].end()
            k += 1
        if value is not None:
            runs.append((start, stop, value))
    return runs


_NATIVE_UNITS = {"한": 1, "하나": 1, "두": 2, "둘": 2, "세": 3, "셋": 3, "석": 3, "네": 4, "넷": 4, "넉": 4,
                 "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}  # fmt: skip
_NATIVE_TENS = {"열": 10, "스물": 20, "스무": 20, "서른": 30, "마흔": 40, "쉰": 50, "예순": 60, "일흔": 70,
                "여든": 80, "아흔": 90}  # fmt: skip
_NATIVE = re.compile(
    "(?<![가-힣])(?P<sino>(?:[이삼사오육칠팔구]?천)?(?:[이삼사오육칠팔구]?백)?)"
    "(?P<tens>" + "|".join(sorted(_NATIVE_TENS, key=len, reverse=True)) + ")?"
    "(?P<ones>" + "|".join(sorted(_NATIVE_UNITS, key=len, reverse=True)) + ")?"
    r"(?= (?:개|명|곳|군데|가지|대|건|시간|달|번|표|가구|세대))"  # spaced, as orthography writes it
)


def _native_numerals(t: str) -> list[tuple[int, int, Decimal]]:
    """Native Korean numerals before a counting word ('스무 개', '열두 곳', '세 명', after sino hundreds: '백아흔두
    명')."""
    out: list[tuple[int, int, Decimal]] = []
    for m in _NATIVE.finditer(t):
        tens, ones = m.group("tens"), m.group("ones")
        if not (tens or ones) or (tens == "스무" and ones):
            continue
        if tens == "스물" and not ones:
            continue  # '스물' counts only with ones ('스물한'); twenty before a noun is '스무'
        sino = _korean_numeral(m.group("sino")) if m.group("sino") else Decimal(0)
        native = _NATIVE_TENS.get(tens or "", 0) + _NATIVE_UNITS.get(ones or "", 0)
        out.append((m.start(), m.end(), (sino or Decimal(0)) + native))  # '백아흔두' 192
    return out


def _numeral_words(t: str, taken: list[tuple[int, int]]) -> list[NumberMatch]:
    """Korean numeral words followed by a unit ('천사백사십육 원', '스무 개'); without a unit they are only words."""
    out: list[NumberMatch] = []
    native = _native_numerals(t)
    for start, stop, value in [*_numeral_runs(t), *native]:
        if _overlaps(taken, start, stop):
            continue
        unit, end = _unit_at(t, stop)
        if unit is None or unit in _ORDINAL_UNITS:
            continue
        word = t[start:stop]
        if len(word) == 2 and word[1] in "만억조" and not t.startswith(" ", stop):
            continue  # '구조원', '오만한' are words; '일억 원' is an amount
        # a numeral spelled out states every place: exact, whatever its zeros
        out.append(
            NumberMatch(t[start:end], value, unit, start, end, True, t.startswith("당", end), Decimal(1))
        )
    return out


def _scan_numbers(t: str) -> list[NumberMatch]:
    calendar = _calendar_spans(t)
    found: list[NumberMatch] = []
    pos = 0
    while (m := _START.search(t, pos)) is not None:
        digit = m.end() - 1
        article = t[m.start() - 1 : m.start()] == "제"  # '제3조' is article 3, not 3 trillion
        amount = _digits_at(t, digit) if article else _amount_at(t, digit)
        if amount is None:
            skip = _DIGIT_RUN.match(t, digit)
            pos = skip.end() if skip else digit + 1
            continue
        end, value = amount
        scaled = _ENGLISH_SCALE.match(t, end)
        factor = _ENGLISH_FACTOR[scaled.group("w").casefold()] if scaled else 1
        if scaled:
            value *= factor
        digits_end = end
        end = scaled.end() if scaled else end
        if m.group("neg"):
            value = -value
        bare_end = end
        unit, end = _unit_at(t, end)
        ranged = (t.startswith("여", bare_end) and end > bare_end) or _RANGE_AFTER.match(t, end) is not None
        start = m.start()
        ordinal = (
            unit in _ORDINAL_UNITS
            or article
            or (
                _ENUMERATOR_TAIL.match(t, end) is not None
                and _ENUMERATOR_LEAD.fullmatch(t, t.rfind("\n", 0, start) + 1, start) is not None
            )
        )
        in_calendar = _overlaps(calendar, start, end)
        if unit is None and (prefix := _PREFIX_UNIT.search(t, max(0, start - 5), start)):
            unit = prefix.group("cur")
        precision = _precision(t[digit:digits_end], value) * factor
        per_unit = unit is not None and t.startswith("당", end)
        found.append(
            NumberMatch(
                t[start:end],
                value,
                unit,
                start,
                end,
                not (ordinal or in_calendar),
                per_unit,
                precision,
                ranged,
            )
        )
        pos = end
    found += _numeral_words(t, [(n.start, n.end) for n in found])
    return sorted(found, key=lambda n: n.start)


_CLOCK = {"시간": 3600, "분": 60, "초": 1}
"""Parts of one span of time as Korean writes it, in seconds: '3분 19초', '1시간 5분', '2시간 3분 4초'."""


def _durations(t: str, found: list[NumberMatch]) -> list[NumberMatch]:
    """Runs of time parts in falling order, only spaces between ('3분 19초'), as one amount in the last part's
    unit (199초): a reply that says the time as a person does states the one value the question asked, not its
    seconds alone. One part alone is left as it is (no 분 is read as 60 초: a school's 시간 is a class period)."""
    out: list[NumberMatch] = []
    i = 0
    while i < len(found):
        run = [found[i]]
        while (j := i + len(run)) < len(found) and _time_follows(t, run[-1], found[j]):
            run.append(found[j])
        i += len(run)
        if len(run) == 1:
            out.append(run[0])
            continue
        last = run[-1]
        step = _CLOCK[last.unit or ""]
        total = sum((m.exact * _CLOCK[m.unit or ""] for m in run), Decimal(0)) / step
        text = t[run[0].start : last.end]
        out.append(
            NumberMatch(
                text, total, last.unit, run[0].start, last.end, True, False, last.precision, last.ranged
            )
        )
    return out


def _time_follows(t: str, a: NumberMatch, b: NumberMatch) -> bool:
    return (
        a.quantity
        and b.quantity
        and not a.ranged
        and not a.per_unit
        and not b.per_unit
        and a.unit in _CLOCK
        and b.unit in _CLOCK
        and _CLOCK[a.unit or ""] > _CLOCK[b.unit or ""]
        and a.exact == a.exact.to_integral_value()
        and t[a.end : b.start].strip(" ") == ""
    )


def find_numbers(text: str) -> list[NumberMatch]:
    """Every number in `text`, in order of appearance (see the module docstring for what is read); a span of time
    in parts ('3분 19초') is one number."""
    t = fold(text)
    return _durations(t, _scan_numbers(t))


_HEDGE_BEFORE = re.compile(r"^(?:약|대략|총|합계|about|approx\.?|approximately|~)\s*", re.IGNORECASE)
_HEDGE_AFTER = re.compile(r"\s*(?:가량|정도|내외|쯤)$")


def parse_number(text: str) -> NumberMatch | None:
    """`text` as exactly one number, or None.

    Accepted: surrounding whitespace, one leading hedge ('약', '대략', '총', '합계', 'about', 'approx.', '~'),
    the number with its unit, and one trailing hedge ('가량', '정도', '내외', '쯤'). Anything else left over
    means None: '324명 이상' and '1, 2' are not one number.
    """
    core = _HEDGE_AFTER.sub("", _HEDGE_BEFORE.sub("", fold(text).strip()))
    found = _durations(core, _scan_numbers(core))
    if len(found) != 1 or found[0].start != 0 or found[0].end != len(core):
        return None
    return found[0]


# ------------------------------------------------------------------------------------------------ dates

_MONTH_NAMES = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10,
    "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH_WORDS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December", "Sept")  # fmt: skip
# a month's name or its first three letters, capitalized or in capitals ('may 3' is no date)
_MONTH_FORMS = sorted(
    {f(w[:n]) for w in _MONTH_WORDS for n in (3, len(w)) for f in (str, str.upper)},
    key=lambda w: (-len(w), w),
)
_MONTH = "(?:" + "|".join(_MONTH_FORMS) + ")"
_DATE = re.compile(
    # English: 'Oct 16, 2026', 'October 16th 2026', '16 October 2026', '16 Oct' (a year or the reference year)
    rf"(?P<e>(?<![A-Za-z])(?P<em>{_MONTH})\.?\s+(?P<ed>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,?\s+(?P<ey>\d{{4}})(?!\d))?)"
    rf"|(?P<f>(?<![\d.,])(?P<fd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<fm>{_MONTH})(?![A-Za-z])\.?"
    r"(?:,?\s+(?P<fy>\d{4})(?!\d))?)"
    r"|(?P<k>(?<!\d)(?P<ky>\d{4})\s*년\s*(?P<km>\d{1,2})\s*월\s*(?P<kd>\d{1,2})\s*일)"
    r"|(?P<p>(?<![\d.])(?P<py>\d{4})\.\s?(?P<pm>\d{1,2})\.\s?(?P<pd>\d{1,2})(?!\d)\.?)"
    r"|(?P<a>[\'’](?P<ay>\d{2})\.\s?(?P<am>\d{1,2})\.\s?(?P<ad>\d{1,2})(?!\d)\.?)"  # '26.10.16: 2026
    r"|(?P<h>(?<![\d\-])(?P<hy>\d{4})-(?P<hm>\d{1,2})-(?P<hd>\d{1,2})(?!\d))"
    r"|(?P<s>(?<![\d/])(?P<sy>\d{4})/(?P<sm>\d{1,2})/(?P<sd>\d{1,2})(?!\d))"
    r"|(?P<c>(?<![\d,.])(?P<cy>[1-9]\d{3})(?P<cm>\d\d)(?P<cd>\d\d)(?!\d)(?![.,]\d))"
    r"|(?P<md>(?<!\d)(?P<mm>\d{1,2})\s*월\s*(?P<mdd>\d{1,2})\s*일)"
    r"|(?P<sl>(?<![\d/.,])(?P<slm>1[0-2]|0?[1-9])/(?P<sld>3[01]|[12]\d|0?[1-9])(?![\d/]))"
)
_WEEKDAY = re.compile(r"\s*\(\s*[월화수목금토일](?:요일)?\s*\)$")


@dataclass(frozen=True)
class DateMatch:
    """One valid date found in a text (positions are in `fold(text)`)."""

    value: dt.date
    text: str
    start: int
    end: int


def _make_date(year: int | None, month: str, day: str) -> dt.date | None:
    if year is None:
        return None
    try:
        return dt.date(year, int(month), int(day))
    except ValueError:
        return None


def _date_shapes(t: str, reference_year: int | None) -> list[tuple[int, int, dt.date | None]]:
    """Every date-shaped span with its date, or None when impossible (or month-day without a year)."""
    shapes: list[tuple[int, int, dt.date | None]] = []
    for m in _DATE.finditer(t):
        g = m.groupdict()
        if g["e"] is not None or g["f"] is not None:
            e = "e" if g["e"] is not None else "f"
            month = str(_MONTH_NAMES[g[e + "m"][:3].casefold()])
            year_text = g[e + "y"]
            value = _make_date(int(year_text) if year_text else reference_year, month, g[e + "d"])
        elif g["md"] is not None:
            value = _make_date(reference_year, g["mm"], g["mdd"])
        elif g["sl"] is not None:
            value = _make_date(reference_year, g["slm"], g["sld"])
        else:
            form = next(k for k in "kpahsc" if g[k] is not None)
            year = int(g[form + "y"]) + (2000 if form == "a" else 0)
            value = _make_date(year, g[form + "m"], g[form + "d"])
        shapes.append((m.start(), m.end(), value))
    return shapes


def find_dates(text: str, reference_year: int | None = None) -> list[DateMatch]:
    """Every valid date in `text`, in order of appearance.

    Month-day forms ('11월 29일') take `reference_year` and are skipped without one; impossible dates are
    skipped.
    """
    t = fold(text)
    return [DateMatch(v, t[s:e], s, e) for s, e, v in _date_shapes(t, reference_year) if v is not None]


@dataclass(frozen=True)
class Period:
    """A stated period: 'A부터 B까지', 'A~B', '10월 13~16일', 'A부터 16일까지' (a bare day takes A's month)."""

    first: dt.date
    last: dt.date
    start: int
    end: int


_LINK = re.compile(
    r"\s*(?:일\s*)?(?:(?:부터|에서)\s*(?:[~〜\-–—]\s*)?|[~〜\-–—]\s*|(?:to|through|until|till)\s+)"
)
_TAIL_DAY = re.compile(r"(?P<d>\d{1,2})\s*일(?:\s*까지)?")
_SHORT = re.compile(
    r"(?:(?P<y>\d{4})\s*년\s*)?(?P<m>\d{1,2})\s*월\s*(?P<a>\d{1,2})\s*(?:일)?\s*(?:부터|[~〜\-–—])\s*"
    r"(?:(?P<m2>\d{1,2})\s*월\s*)?(?P<b>\d{1,2})\s*일"
)
_SHORT_EN = re.compile(  # 'Oct 13–16, 2026', 'October 13 to 16', 'Oct 13 - Nov 2'
    rf"(?<![A-Za-z])(?P<m>{_MONTH})\.?\s+(?P<a>\d{{1,2}})(?:st|nd|rd|th)?\s*(?:[-–—~〜]|to|through|until|till)\s*"
    rf"(?:(?P<m2>{_MONTH})\.?\s+)?(?P<b>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,?\s+(?P<y>\d{{4}})(?!\d))?"
)


def find_periods(text: str, reference_year: int | None = None) -> list[Period]:
    """Every stated period in `text` whose two ends are valid dates, in order of appearance."""
    t = fold(text)
    dates = find_dates(t, reference_year)
    out: list[Period] = []
    for a, b in itertools.pairwise(dates):
        link = _LINK.match(t, a.end)
        if link is not None and link.end() == b.start and a.value <= b.value:
            out.append(Period(a.value, b.value, a.start, b.end))
    for a in dates:
        link = _LINK.match(t, a.end)
        tail = _TAIL_DAY.match(t, link.end()) if link is not None else None
        if link is None or tail is None or any(p.start == a.start for p in out):
            continue
        last = _make_date(a.value.year, str(a.value.month), tail.group("d"))
        if last is not None and last >= a.value:
            out.append(Period(a.value, last, a.start, tail.end()))
    for m in [*_SHORT.finditer(t), *_SHORT_EN.finditer(t)]:
        year = int(m.group("y")) if m.group("y") else reference_year
        month, month2 = m.group("m"), m.group("m2") or m.group("m")
        if not month.isdigit():  # an English month name
            month, month2 = (str(_MONTH_NAMES[x[:3].casefold()]) for x in (month, month2))
        first = _make_date(year, month, m.group("a"))
        last = _make_date(year, month2, m.group("b"))
        if first and last and first <= last and not any(p.start <= m.start() < p.end for p in out):
            out.append(Period(first, last, m.start(), m.end()))
    return sorted(out, key=lambda p: p.start)


def parse_date(text: str, reference_year: int | None = None) -> dt.date | None:
    """`text` as exactly one date (surrounding whitespace and a weekday like '(토)' allowed), or None.

    None also for impossible dates and for month-day forms without `reference_year`.
    """
    t = _WEEKDAY.sub("", fold(text).strip())
    shapes = _date_shapes(t, reference_year)
    if len(shapes) != 1 or shapes[0][:2] != (0, len(t)):
        return None
    return shapes[0][2]


# ------------------------------------------------------------------------------------------------- text

_CORPORATE = re.compile(r"\(\s*[주유]\s*\)|[㈜㈲]|주식회사|유한회사")


def normalize_text(text: str) -> str:
    """NFC, casefold, corporate-form markers removed, punctuation/symbols to spaces, whitespace collapsed.

    '삼성전자(주)', '주식회사 삼성전자' and '㈜삼성전자' all become '삼성전자'; 'S-Oil' becomes 's oil'.
    """
    t = _CORPORATE.sub(" ", fold(text)).casefold()
    t = "".join(" " if unicodedata.category(c)[0] in "PS" else c for c in t)
    return " ".join(t.split())


def find_text(haystack: str, needle: str) -> int | None:
    """Where `needle` first occurs in `normalize_text(haystack)`, or None.

    Both sides are normalized and spaces are optional ('SK하이닉스' finds 'SK 하이닉스'), because Korean
    spacing varies. A needle that begins or ends with a Latin letter or digit must not continue into one
    ('LG' is not found in 'LGD'); Hangul edges are free, so '삼성전자가' contains '삼성전자'.
    """
    key = normalize_text(needle).replace(" ", "")
    if not key:
        return None
    m = mention_pattern(key).search(normalize_text(haystack))
    return m.start() if m else None


@functools.lru_cache(maxsize=1 << 16)
def mention_pattern(key: str) -> re.Pattern[str]:
    """The pattern of a normalized, unspaced needle in normalized text (see `find_text`); compiled once, as
    scoring looks for the same gold spellings and distractor pools in every episode of a task."""
    pattern = " ?".join(re.escape(c) for c in key)
    if key[0].isascii() and key[0].isalnum():
        pattern = r"(?<![a-z0-9])" + pattern
    if key[-1].isascii() and key[-1].isalnum():
        pattern += r"(?![a-z0-9])"
    return re.compile(pattern)

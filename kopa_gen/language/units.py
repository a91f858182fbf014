"""Units of numeric answers: which quantity a unit word names (its dimension) and by how much it scales.

A number is compared with a gold number only within one dimension, after scaling both to the dimension's base
unit: '154,329,557천원' and '1,543.29557억원' are 154,329,557,000원; '12곳' states the same count as '12개'.
Units of different dimensions never compare ('1,446달러' for 원, '52.42표' for %, '1051.4 kJ' for kcal), and a
unit word outside this table is unknown, which fails any gold that has a unit.

Dimensions and their words (case and spaces do not matter):

    won                원 원화 KRW ₩ won
    dollar / euro / yen / yuan / pound     달러 USD $ · 유로 EUR € · 엔 JPY ¥ · 위안 CNY · 파운드 GBP £
    percent            % 퍼센트 percent pct        (a share)
    percentage point   %p %포인트 퍼센트포인트 pp  (a difference of shares: never equal to a percent)
    count              개 명 곳 건 대 개소 군데 가지 개사 종목 표 인 회 번 가구 세대 개교 and their English
                       words: Korean counting words differ by what is counted, the number they state does not
    hours · minutes · seconds · days · months · years   시간 차시 · 분 · 초 · 일 · 개월 · 년  (no conversion between them:
                       a school's '시간' is a class period, not sixty minutes)
    kcal · cal · kJ · index points · km · m · kg · ton · m² · pyeong · times · floors · shares · seats · score points

Scale words go before the unit: Korean 천 만 십만 백만 천만 억 십억 백억 천억 조 (천원, 백만원, 억원, 만명) and
English thousand, million, billion, trillion (k, mn, bn). A scale word alone ('억') is a won amount only when
the gold is one: it never stands for a unit by itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

_WORDS: dict[str, tuple[str, ...]] = {
    "won": ("원", "원화", "krw", "₩", "won", "korean won"),
    "dollar": ("달러", "usd", "$", "us$", "dollar", "dollars", "미국달러", "불"),
    "euro": ("유로", "eur", "€", "euro", "euros"),
    "yen": ("엔", "엔화", "jpy", "¥", "yen"),
    "yuan": ("위안", "위안화", "cny", "rmb", "yuan"),
    "pound": ("파운드", "gbp", "£", "pound", "pounds"),
    "percent": ("%", "％", "퍼센트", "프로", "percent", "pct", "per cent"),
    "permille": ("‰", "퍼밀", "permille"),
    "percentage point": ("%p", "%포인트", "퍼센트포인트", "pp", "%pt", "percentage point", "percentage points"),
    "count": (
        "개", "명", "곳", "건", "대", "개소", "군데", "가지", "개사", "종목", "표", "인", "회", "번", "가구",
        "세대", "개교", "학급", "items", "item", "people", "persons", "person", "places", "cases", "votes", "count",
    ),
    "hours": ("시간", "차시", "hours", "hour", "h", "hrs"),
    "minutes": ("분", "minutes", "minute", "min", "mins"),
    "seconds": ("초", "seconds", "second", "sec", "secs"),
    "days": ("일", "days", "day"),
    "months": ("개월", "달", "months", "month"),
    "years": ("년", "년간", "years", "year"),
    "kcal": ("kcal", "칼로리", "킬로칼로리", "kilocalories"),
    "cal": ("cal",),  # the small calorie: 1051.4 cal is not 1051.4 kcal
    "kJ": ("kj", "킬로줄", "kilojoules"),
    "index points": ("pt", "포인트", "p", "points", "point", "pts"),
    "km": ("km", "킬로미터"),
    "m": ("m", "미터"),
    "kg": ("kg", "킬로그램"),
    "ton": ("톤", "t", "tons", "tonnes"),
    "m²": ("㎡", "m2", "m²", "제곱미터"),
    "pyeong": ("평",),
    "times": ("배", "times"),
    "floors": ("층",),
    "shares": ("주", "shares"),
    "seats": ("석", "seats"),
    "score points": ("점",),
}  # fmt: skip

_SCALES: dict[str, int] = {
    "천": 10**3, "만": 10**4, "십만": 10**5, "백만": 10**6, "천만": 10**7, "억": 10**8, "십억": 10**9,
    "백억": 10**10, "천억": 10**11, "조": 10**12, "십조": 10**13, "백조": 10**14, "천조": 10**15,
    "thousand": 10**3, "k": 10**3, "million": 10**6, "mn": 10**6, "mil": 10**6, "billion": 10**9, "bn": 10**9,
    "trillion": 10**12, "tn": 10**12,
}  # fmt: skip

DIMENSION_OF: dict[str, str] = {word: dim for dim, words in _WORDS.items() for word in words}
"""Every base unit word (casefolded) -> its dimension."""

UNIT_WORDS: tuple[str, ...] = tuple(sorted(DIMENSION_OF, key=len, reverse=True))
"""Every base unit word, longest first (so '개월' wins over '개' and '%p' over '%')."""

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Unit:
    """A parsed unit: the quantity it names and its factor to the dimension's base unit ('억원': won, 10^8)."""

    text: str
    dimension: str
    scale: Decimal

    def __str__(self) -> str:
        return self.text


def _key(text: str) -> str:
    return _SPACE.sub(" ", text.strip().casefold().rstrip(".")).strip()


def parse_unit(text: str) -> Unit | None:
    """The unit a word names ('원', '천원', '백만 원', '억원', 'billion won', '만 명', '%p'), or None when unknown.
    Scale words alone are no unit ('억' -> None)."""
    key = _key(text)
    if not key:
        return None
    for joined in (key, key.replace(" ", "")):
        if joined in DIMENSION_OF:
            return Unit(text.strip(), DIMENSION_OF[joined], Decimal(1))
    for scale in sorted(_SCALES, key=len, reverse=True):
        if not key.startswith(scale):
            continue
        rest = key[len(scale) :].strip()
        if scale.isascii() and key[len(scale) : len(scale) + 1].isalpha():
            continue  # 'kcal' is no 'k' + 'cal', 'million' no 'mil' + 'lion'
        base = DIMENSION_OF.get(rest) or DIMENSION_OF.get(rest.replace(" ", ""))
        if base is not None and rest:
            return Unit(text.strip(), base, Decimal(_SCALES[scale]))
    return None


def dimension(text: str | None) -> str | None:
    """The dimension of a unit word; the word itself (casefolded) when unknown, so that it matches only itself;
    None without a unit."""
    if text is None or not text.strip():
        return None
    unit = parse_unit(text)
    return unit.dimension if unit is not None else _key(text)


def compatible(gold: str | None, stated: str | None) -> bool:
    """Whether a stated unit can state the gold quantity: either side without a unit, or one dimension."""
    return gold is None or stated is None or dimension(gold) == dimension(stated)


def known_units() -> list[str]:
    """The base unit words, for messages and tool descriptions."""
    return [w for words in _WORDS.values() for w in words]

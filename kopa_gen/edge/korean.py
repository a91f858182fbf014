"""How values read in a Korean question: dates as dates, amounts with their unit, codes by their labels, literal
arguments as the meaning file says them. Particles are written in both forms (`을(를)`) and fixed last by
kopa_gen.language.particles, once the words before them are known."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from kopa_gen.language.functions import maybe_number
from kopa_gen.language.meaning import FieldMeaning, ParamMeaning
from kopa_gen.language.particles import attach_particles

_YMD = re.compile(r"^((?:19|20)\d{2})-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])$")
_YM = re.compile(r"^((?:19|20)\d{2})-?(0[1-9]|1[0-2])$")
_SPACES = re.compile(r"\s+")


def date_words(value: Any) -> str | None:
    """'20250305' / '2025-03-05' -> '2025년 3월 5일'; '202503' -> '2025년 3월'; None for anything else."""
    text = str(value).strip()
    m = _YMD.match(text)
    if m:
        return f"{m.group(1)}년 {int(m.group(2))}월 {int(m.group(3))}일"
    m = _YM.match(text)
    if m:
        return f"{m.group(1)}년 {int(m.group(2))}월"
    return None


def number_words(value: Decimal | int | float, unit: str | None) -> str:
    """A number as a question writes it: thousands separated, decimals kept as they are, the unit attached
    ('1,500원', '12.5%', '45명')."""
    d = Decimal(str(value))
    text = f"{d:,}" if d == d.to_integral_value() else f"{d.normalize():,f}"
    if text.endswith(".0"):
        text = text[:-2]
    return f"{text}{unit or ''}"


def value_words(value: Any, meaning: FieldMeaning | None) -> str:
    """A field's value as a person reads it: its label, a date in words, a measure with its unit."""
    if meaning is not None:
        if meaning.labels and str(value) in meaning.labels:
            return meaning.labels[str(value)]
        if meaning.role == "date":
            return date_words(value) or str(value)
        if meaning.role == "measure":
            n = maybe_number(value)
            if n is not None:
                return number_words(n, meaning.unit)
    return str(value).strip()


def arg_words(value: Any, meaning: ParamMeaning | None) -> str | None:
    """A literal argument as a question states it (meaning.yaml `say` / `labels`; dates in words); None when the
    meaning gives no way to say it (such an argument is never put in a query)."""
    if meaning is None:
        return None
    said = meaning.phrase(value)
    if said is None:
        return None
    if meaning.kind in ("date", "month") and str(value) in said:
        words = date_words(value)
        if words:
            said = said.replace(str(value), words)
    return said


def sentence(text: str) -> str:
    """Spaces collapsed, particles fixed, one sentence mark at the end."""
    out = attach_particles(_SPACES.sub(" ", text).strip())
    out = re.sub(r"\s+([?.,])", r"\1", out)
    return out


def of(owner: str, noun: str, ctx: str = "") -> str:
    """'A의 B' without saying a word twice: '초평 영업소' + '영업소 교통량' -> '초평 영업소의 교통량', '… 전체 교통량'
    + '교통량' -> '… 전체 교통량', '… 마지막 정류소' + '정류소를 지나는 노선' -> '… 마지막 정류소를 지나는 노선',
    '… 노선 각각' + '노선 운행 정보' -> '… 노선 각각의 운행 정보'."""
    owner, noun = _SPACES.sub(" ", owner).strip(), _SPACES.sub(" ", noun).strip()
    if not owner:
        return f"{ctx} {noun}".strip()
    bare = owner.removesuffix(" 전체")
    if not noun or (bare.endswith(noun) and not ctx):
        return owner
    # the longest run of words the owner ends with (before a closing 전체) that the noun starts with
    said = owner.split(" ")
    if said[-1] in ("전체", "각각"):
        said = said[:-1]
    words = noun.split(" ")
    last, first = said[-1], words[0]
    if (
        not ctx
        and (owner == last or owner.endswith(f" {last}"))
        and first != last
        and first.startswith(last)
        and len(first) - len(last) <= 2
    ):
        # the noun starts with the owner's last word and a particle: '… 마지막 정류소' + '정류소를 지나는 노선'
        # -> '… 마지막 정류소를 지나는 노선'
        return _SPACES.sub(" ", f"{owner}{first[len(last) :]} {' '.join(words[1:])}").strip()
    for n in range(min(len(said), len(words) - 1), 0, -1):
        if said[-n:] == words[:n]:
            noun = " ".join(words[n:])
            break
    return _SPACES.sub(" ", f"{owner}의 {ctx} {noun}")


def written_numbers(text: str) -> set[str]:
    """The numbers a text writes, as plain digits ('제22대 2025년 1,234원' → 22, 2025, 1234): each maximal run of
    digits (with thousands commas and a decimal part), wherever it stands, even inside a word."""
    return {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}

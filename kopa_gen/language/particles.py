"""Korean particles chosen by the sound that ends the word before them.

Templates write a particle in both forms, as Korean style guides do when the word is not known yet (`을(를)`,
`이(가)`, `은(는)`, `과(와)`, `(으)로`, `(이)`); `attach_particles` replaces each with the one form that fits the
word it follows: after a final consonant 을/이/은/과/으로, after a vowel 를/가/는/와/로, and 로 also after ㄹ. Digits
are read as Sino-Korean numbers (3 삼, 7 칠, 10 십), Latin letters by their names (L 엘, M 엠, N 엔, S 에스).
"""

from __future__ import annotations

import re
from typing import Literal

Ending = Literal["vowel", "rieul", "consonant"]

# the written both-forms marker -> (after a final consonant, after a vowel); after ㄹ, (으)로 takes 로
_MARKERS: dict[str, tuple[str, str]] = {
    "을(를)": ("을", "를"),
    "를(을)": ("을", "를"),
    "이(가)": ("이", "가"),
    "가(이)": ("이", "가"),
    "은(는)": ("은", "는"),
    "는(은)": ("은", "는"),
    "과(와)": ("과", "와"),
    "와(과)": ("과", "와"),
    "(으)로": ("으로", "로"),
    "(이)": ("이", ""),
}
_MARKER = re.compile("|".join(re.escape(m) for m in sorted(_MARKERS, key=len, reverse=True)))

# how a last digit is read: 0 (영, or 십/백/천/만 at the end of a longer number), 1 일, 2 이, 3 삼, 4 사, 5 오,
# 6 육, 7 칠, 8 팔, 9 구
_DIGITS: dict[str, Ending] = {
    "0": "consonant",
    "1": "rieul",
    "2": "vowel",
    "3": "consonant",
    "4": "vowel",
    "5": "vowel",
    "6": "consonant",
    "7": "rieul",
    "8": "rieul",
    "9": "vowel",
}
# letter names: 엘 ends in ㄹ, 엠 and 엔 in another consonant, every other name in a vowel (에이, 비, 에스, ...)
_LETTERS: dict[str, Ending] = {"l": "rieul", "m": "consonant", "n": "consonant"}
# closing quotes and brackets are not read: the word before them decides
_CLOSERS = "'\"’”」』)]}>"

_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3
_RIEUL = 8  # index of ㄹ among the final consonants


def ending(word: str) -> Ending | None:
    """How `word` ends when read aloud; None when it ends in nothing readable (punctuation, an empty string)."""
    text = word.rstrip().rstrip(_CLOSERS)
    if not text:
        return None
    last = text[-1]
    if _HANGUL_FIRST <= ord(last) <= _HANGUL_LAST:
        final = (ord(last) - _HANGUL_FIRST) % 28
        return "vowel" if final == 0 else "rieul" if final == _RIEUL else "consonant"
    if last in _DIGITS:
        return _DIGITS[last]
    if last.isascii() and last.isalpha():
        return _LETTERS.get(last.lower(), "vowel")
    return None


def particle(word: str, marker: str) -> str:
    """The form of `marker` (e.g. `을(를)`, `(으)로`) that follows `word`; the consonant form where the ending cannot
    be read."""
    after_consonant, after_vowel = _MARKERS[marker]
    sound = ending(word)
    if sound == "vowel" or (sound == "rieul" and marker == "(으)로"):
        return after_vowel
    return after_consonant


def attach_particles(text: str) -> str:
    """`text` with every both-forms marker replaced by the form that fits the word just before it."""
    out: list[str] = []
    last = 0
    for match in _MARKER.finditer(text):
        before = text[: match.start()]
        out.append(text[last : match.start()])
        out.append(particle(before, match.group()))
        last = match.end()
    out.append(text[last:])
    return "".join(out)

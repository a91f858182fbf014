"""Shareholders of a listed company in the DART ownership simulation: the largest shareholder's group (최대주주 및
특수관계인), outside 5% holders, and the trades that move their stakes and officers' shares during the window.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from kopa_gen.world.generators.dart_corps import SIZE_BIG, SIZE_SMALL, Corp, Holder
from kopa_gen.world.generators.dart_disclosure import FIRST_DAY, weekday
from kopa_gen.world.names import FEMALE, MALE, person

EXTERNAL_HOLDERS = (
    "BlackRock Fund Advisors",
    "The Capital Group Companies, Inc.",
    "트러스톤자산운용",
    "브이아이피자산운용",
    "한국투자밸류자산운용",
    "미래에셋자산운용",
    "삼성자산운용",
    "신영자산운용",
    "KB자산운용",
    "라자드코리아자산운용",
    "에셋플러스자산운용",
    "머스트자산운용",
    "Norges Bank",
)


NPS = "국민연금공단"


def holders(
    c: Corp, common0: int, pref0: int, anchors: Mapping[str, Mapping[str, Any]], unlisted: Sequence[str]
) -> None:
    """The largest shareholder's group (an anchor's, or drawn by ownership kind: chaebol affiliate, founder
    family or dispersed with the pension fund on top) and outside 5% holders, at the start of the window."""
    rng = c.rng
    anchor = anchors.get(c.code, {})
    if "group" in anchor:
        for i, member in enumerate(anchor["group"]):
            c.group.append(
                Holder(
                    str(member["nm"]),
                    str(member["relate"]),
                    int(member["common"]),
                    int(member.get("pref", 0)),
                    major=i == 0,
                )
            )
        for member in anchor.get("outside", []):
            c.outside.append(Holder(str(member["nm"]), "-", int(member["common"])))
        return
    roll = rng.random()
    if c.cls == "Y" and c.size == SIZE_BIG:
        kind = "chaebol" if roll < 0.7 else "dispersed" if roll < 0.85 else "founder"
    elif c.cls == "Y":
        kind = "chaebol" if roll < 0.4 else "dispersed" if roll < 0.45 else "founder"
    else:
        kind = "chaebol" if c.cls == "K" and roll < 0.2 else "founder"

    def stake(lo: float, hi: float) -> int:
        return int(common0 * rng.uniform(lo, hi) / 100)

    short = c.name[:2]

    def relative() -> str:
        taken = {h.nm for h in c.group}
        name = person(rng, FEMALE if rng.random() < 0.5 else MALE)
        while name in taken:
            name = person(rng, FEMALE if rng.random() < 0.5 else MALE)
        return name

    if kind == "dispersed":
        c.group.append(Holder(NPS, "본인", stake(6, 11), major=True))
    elif kind == "founder":
        ceo_is_major = rng.random() < 0.7
        major = Holder(c.ceo if ceo_is_major else person(rng, MALE), "본인", stake(12, 35), major=True)
        if ceo_is_major:
            major.officer = c.officers[0]
            c.officers[0].relate = "본인"
        c.group.append(major)
        for _ in range(rng.randint(1, 4)):
            c.group.append(Holder(relative(), "친인척", stake(0.1, 4)))
        if rng.random() < 0.3:
            c.group.append(Holder(rng.choice(unlisted), "계열회사", stake(1, 10)))
        if rng.random() < 0.05:
            c.group.append(Holder(f"{short}문화재단", "비영리법인", stake(0.1, 1)))
    else:
        c.group.append(Holder(rng.choice(unlisted), "본인", stake(18, 40), major=True))
        for _ in range(rng.randint(0, 2)):
            name = rng.choice(unlisted)
            if name not in {h.nm for h in c.group}:
                c.group.append(Holder(name, "계열회사", stake(0.5, 6)))
        for _ in range(rng.randint(1, 3)):
            c.group.append(Holder(relative(), "친인척", stake(0.01, 1.5)))
        if rng.random() < 0.4:
            c.group.append(Holder(f"{short}복지재단", "비영리법인", stake(0.05, 0.8)))
    if pref0 and rng.random() < 0.4:
        c.group[0].pref = int(pref0 * rng.uniform(0.01, 0.05))
    # registered inside directors who hold shares are related parties (발행회사 임원)
    for o in c.officers:
        if (
            o.rgist == "사내이사"
            and o.shares
            and o.relate != "본인"
            and o.start <= FIRST_DAY
            and o.nm not in {h.nm for h in c.group}
        ):
            c.group.append(Holder(o.nm, "발행회사 임원", o.shares, officer=o))
            o.relate = "계열회사 임원" if kind == "chaebol" else "-"
    names = [h.nm for h in c.group]
    if c.cls == "Y" and kind != "dispersed" and c.size != SIZE_SMALL and rng.random() < 0.65:
        c.outside.append(Holder(NPS, "-", stake(4.6, 10)))
    if rng.random() < (0.25 if c.size == SIZE_BIG else 0.18):
        name = rng.choice(EXTERNAL_HOLDERS)
        if name not in names:
            c.outside.append(Holder(name, "-", stake(4.2, 8)))


def trades(c: Corp, cutoff: dt.date) -> list[tuple[dt.date, int, str, Any]]:
    """Trades of the group, outside holders and officers, treasury disposals and officer appointments."""
    rng = c.rng
    events: list[tuple[dt.date, int, str, Any]] = []
    last = cutoff - dt.timedelta(days=10)
    for year in range(FIRST_DAY.year, last.year + 1):
        first = dt.date(year, 1, 2)
        span = (min(dt.date(year, 12, 31), last) - first).days
        if span <= 0:
            continue

        def day(first: dt.date = first, span: int = span) -> dt.date:
            return weekday(first + dt.timedelta(days=rng.randrange(span)))

        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            holder = rng.choice(c.group)
            sell = rng.random() < 0.55
            cause = rng.choice(("장내매도", "장내매도", "시간외매매", "증여")) if sell else "장내매수"
            events.append(
                (
                    day(),
                    3,
                    "group",
                    (holder, -rng.uniform(0.05, 0.3) if sell else rng.uniform(0.0005, 0.004), cause),
                )
            )
        for holder in c.outside:
            for _ in range(rng.randint(1, 3)):
                events.append(
                    (day(), 3, "outside", (holder, rng.choice((-1, 1)) * rng.uniform(0.002, 0.012)))
                )
        for o in c.officers:
            if (
                o.shares
                and o.active(first)
                and not any(h.officer is o for h in c.group)
                and rng.random() < 0.3
            ):
                events.append(
                    (
                        day(),
                        3,
                        "insider",
                        (
                            o,
                            -rng.uniform(0.1, 0.5) if rng.random() < 0.4 else float(rng.randint(200, 5000)),
                        ),
                    )
                )
        if rng.random() < 0.15:
            events.append((weekday(dt.date(year, 3, 20)), 3, "dispose", rng.uniform(0.02, 0.1)))
    for o in c.officers:
        if o.shares and o.start > FIRST_DAY and o.start <= last:
            events.append((o.start, 3, "appoint", o))
    return events

"""The question at the end of a chain, asked of its focus (kopa_gen/edge/builder.py), with its answer path and the
typed answer. Only fields whose meaning has a question phrase are asked; a measure is summed, averaged or
compared, a name is asked of the row at an extreme, a category counts rows; ids and codes never are.

    one row      its field's value                          "…의 평일 배차 간격은 몇 분인가요?"
    a set        how many rows have a category or pass a threshold; the sum, mean, largest, smallest of a
                 measure; the name of the row at an extreme  "…중 직원 수가 가장 많은 회사는 어디인가요?"
    a fan-out    the sum of the items' values; each item's value; the item at an extreme
    two foci     both values (Sem); the first minus the second (Cmp)

A count of a whole result is never asked: its total is on the first page, so it needs no paging and no chain.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from kopa_gen.edge.builder import PHI, Chain, Focus, NotInstantiable, meaning_of, quote
from kopa_gen.edge.korean import of, value_words
from kopa_gen.edge.probe import rows_of
from kopa_gen.edge.signatures import OutField, ToolSig
from kopa_gen.language.answers import (
    Answer,
    CodeAnswer,
    DateAnswer,
    ItemAnswer,
    ListAnswer,
    NumberAnswer,
    TextAnswer,
)
from kopa_gen.language.functions import maybe_number, plain_number
from kopa_gen.language.meaning import FieldMeaning
from kopa_gen.language.task import Combine, From
from kopa_gen.language.units import parse_unit
from kopa_gen.runtime.answer import derive_answer
from kopa_gen.runtime.paths import PathError

AskKind = Literal["value", "count", "sum", "avg", "max", "min", "argmax", "argmin", "list", "diff"]


@dataclass(frozen=True)
class Ask:
    kind: AskKind
    answer_from: From | Combine
    answer: Answer
    value: Any
    question: str  # the question sentence, particles unresolved ('…은(는) 얼마인가요?')
    what: str  # the asked quantity in words, for the report


def asked_fields(sig: ToolSig, roles: Sequence[str] | None = None) -> list[OutField]:
    return [
        o
        for o in sig.outputs
        if o.meaning is not None and o.meaning.ask and (roles is None or o.meaning.role in roles)
    ]


def _labelled(path: str, m: FieldMeaning) -> str:
    """The path with a code translated into its label, when the meaning labels the field's values."""
    if not m.labels:
        return path
    table = ", ".join(quote(f"{k}={v}") for k, v in sorted(m.labels.items()))
    return f"{path} | map({table})"


def typed(value: Any, m: FieldMeaning | None, unit: str | None = None) -> ItemAnswer:
    """An executed value as a typed answer of the field's role."""
    role = m.role if m is not None else "measure"
    if role in ("measure", "year") or m is None:
        n = maybe_number(value)
        if n is None:
            raise NotInstantiable(f"{value!r} is not a number")
        u = unit if unit is not None else (m.unit if m is not None else None)
        return NumberAnswer(value=plain_number(n), unit=u)
    if role == "date":
        text = str(value).replace("-", "").replace(".", "")
        try:
            return DateAnswer(value=dt.date(int(text[:4]), int(text[4:6]), int(text[6:8])))
        except ValueError as exc:
            raise NotInstantiable(f"{value!r} is not a date") from exc
    if role == "code":
        try:
            return CodeAnswer(value=str(value).strip())
        except ValueError as exc:
            raise NotInstantiable(f"{value!r} is not a code") from exc
    text = str(value).strip()
    if not text or len(text) > 40:
        raise NotInstantiable(f"{text[:40]!r} is no short answer")
    try:
        return TextAnswer(value=text)
    except ValueError as exc:
        raise NotInstantiable(f"{text!r} cannot be graded") from exc


def _wh(m: FieldMeaning, unit: str | None = None) -> str:
    wh = m.question_word()
    if wh == "몇":
        return f"몇 {unit or m.unit or ''}".strip()
    return wh


def extreme_word(m: FieldMeaning, which: str) -> str:
    """'가장 많은' for a count, '가장 큰' for other quantities (and their opposites)."""
    unit = parse_unit(m.unit) if m.unit else None
    if unit is not None and unit.dimension == "count":
        return "가장 많은" if which == "max" else "가장 적은"
    return "가장 큰" if which == "max" else "가장 작은"


def _count_unit(counter: str) -> str | None:
    unit = parse_unit(counter)
    return counter if unit is not None and unit.dimension == "count" else None


def _derive(chain: Chain, answer_from: From | Combine) -> Any:
    try:
        return derive_answer(chain.walk.results, answer_from)
    except PathError as exc:
        raise NotInstantiable(f"the answer does not derive: {exc}") from exc


def _from(call: str, path: str) -> From:
    return From.model_validate({"from": call, "path": path})


def ask_one(chain: Chain, focus: Focus, rng: random.Random, avoid: set[str]) -> Ask:
    """A field of the one focus row: its value."""
    avoid = avoid | chain.known()
    sig = chain.sigs[focus.tool]
    row = focus.rows[0]
    options = [
        o
        for o in asked_fields(sig, ("measure", "name", "date", "enum", "code", "text", "time", "year"))
        if row.get(o.name) not in (None, "")
        and str(row.get(o.name)).strip() not in avoid
        and not chain.says(row.get(o.name))
        and (o.meaning is None or o.meaning.role != "text" or len(str(row.get(o.name))) <= 30)
    ]
    if not options:
        raise NotInstantiable(f"no field of {focus.tool} to ask about")
    out = rng.choice(options)
    m = out.meaning
    assert m is not None and m.ask is not None
    answer_from = _from(focus.call, _labelled(focus.path(out.name), m))
    value = _derive(chain, answer_from)
    question = f"{of(focus.phrase, m.ask)}은(는) {_wh(m)}인가요?"
    return Ask("value", answer_from, typed(value, m), value, question, m.ask)


def _extreme_on_first_page(chain: Chain, focus: Focus, field: str, which: str) -> bool:
    """Whether a row holding the extreme of `field` is on the call's first page (a policy that never pages reads
    the same extreme there)."""
    nums = [(maybe_number(r.get(field)), r) for r in focus.rows]
    values = [n for n, _ in nums if n is not None]
    if not values:
        return False
    extreme = max(values) if which == "max" else min(values)
    return any(chain.on_first_page(focus, [r]) for n, r in nums if n == extreme)


def _day(value: Any) -> str | None:
    """A date as YYYYMMDD (the API's 20240105, 2024-01-05 or 2024.01.05), None when it is not one: the order
    of these strings is the order of the days, whatever the API's format, and `[f=@max]` reads it alike."""
    text = str(value or "").strip().replace("-", "").replace(".", "")
    return text if len(text) == 8 and text.isdigit() else None


def ask_set(chain: Chain, focus: Focus, rng: random.Random, avoid: set[str], counts: bool = True) -> Ask:
    """A question over every row of the focus set (which the agent must read to the end). `counts=False` leaves
    out 'how many rows have category X': a count's answer pool is the count and the rows' total, so pool-guess
    passes it half the time and the shortcut filter (max_guess 0.2) drops every one."""
    avoid = avoid | chain.known()
    # the first page must not be enough: here, or at a reduction upstream (which chose past its first page)
    paged_before = focus.narrowed is not None or any(j.kind == "drv" for j in chain.junctions)
    if not paged_before and not chain.paged(focus):
        raise NotInstantiable(
            f"{focus.tool}: every row is on the first page, which a policy that never pages reads"
        )
    sig = chain.sigs[focus.tool]
    noun = sig.about.noun if sig.about is not None else "항목"
    counter = sig.about.counter if sig.about is not None else "개"
    rows = focus.rows
    kinds: list[tuple[str, OutField]] = []
    # rows that are each another quantity (account lines, indicators) are never compared with one another
    alike = sig.about is None or sig.about.rows == "alike"
    for o in asked_fields(sig, ("measure",)) if alike else ():
        nums = [maybe_number(r.get(o.name)) for r in rows]
        if (
            sum(n is not None for n in nums) >= max(2, len(rows) // 2)
            and len({n for n in nums if n is not None}) >= 2
        ):
            m = o.meaning
            over = [k for k in ("sum", "avg") if m is not None and k in m.over]  # meaning.yaml `over`
            kinds += [(k, o) for k in (*over, "max", "min", "argmax", "argmin")]
    for o in asked_fields(sig, ("date",)):
        days = [_day(r.get(o.name)) for r in rows]
        if sum(d is not None for d in days) >= max(2, len(rows) // 2) and len(set(days) - {None}) >= 2:
            kinds += [(k, o) for k in ("latest", "earliest")]
    for o in asked_fields(sig, ("enum",)):
        values = {str(r.get(o.name)) for r in rows if r.get(o.name) not in (None, "")}
        if counts and 2 <= len(values) <= 12:
            kinds.append(("count", o))
    # a name the rows do not all share (versions of one ordinance share theirs: the row at an extreme still has
    # one name, the answer)
    names = [o for o in asked_fields(sig, ("name",)) if len({str(r.get(o.name)) for r in rows}) >= 2]
    kinds = [(k, o) for k, o in kinds if k not in ("argmax", "argmin", "latest", "earliest") or names]
    rng.shuffle(kinds)
    # a count's answer pool is the count and the rows' total (pool-guess passes half the time): a question over
    # a measure goes first, a count only where no measure can be asked
    kinds.sort(key=lambda k: k[0] == "count")
    for kind, o in kinds:
        m = o.meaning
        assert m is not None and m.ask is not None
        every = f"{focus.sel}[*].{o.name}"
        if kind in ("max", "min") and not paged_before and _extreme_on_first_page(chain, focus, o.name, kind):
            continue
        if kind in ("sum", "avg", "max", "min"):
            answer_from = _from(focus.call, f"{kind}({every})")
            value = _derive(chain, answer_from)
            if kind == "avg":
                answer_from = _from(focus.call, f"avg({every}) | round(2)")
                value = _derive(chain, answer_from)
            word = {"sum": "합계", "avg": "평균", "max": "최댓값", "min": "최솟값"}[kind]
            whole = focus.phrase if focus.narrowed is not None else f"{focus.phrase} 전체"
            question = f"{of(whole, m.ask)} {word}은(는) {_wh(m)}인가요?"
            answer: Answer = typed(value, m)
            if kind == "avg":
                answer = answer.model_copy(update={"rel_tolerance": 0.001})
            return Ask(kind, answer_from, answer, value, question, f"{m.ask} {word}")  # type: ignore[arg-type]
        if kind in ("argmax", "argmin", "latest", "earliest"):
            # the name of the one row at an extreme: of a measure (as a number) or of a date (as YYYYMMDD)
            which = "max" if kind in ("argmax", "latest") else "min"
            read = _day if kind in ("latest", "earliest") else maybe_number
            keyed = [(read(r.get(o.name)), r) for r in rows]
            present = [k for k, _ in keyed if k is not None]
            extreme = max(present) if which == "max" else min(present)
            at = [r for k, r in keyed if k == extreme]
            if len(at) != 1:
                continue  # a tie has no single answer
            if not paged_before and chain.on_first_page(focus, at):
                continue
            name = rng.choice(names)
            nm = name.meaning
            assert nm is not None and nm.ask is not None
            answer_from = _from(focus.call, f"{focus.sel}[{o.name}=@{which}].{name.name}")
            value = _derive(chain, answer_from)
            if str(value).strip() in avoid or chain.says(value):
                continue
            if kind in ("latest", "earliest"):
                word = "가장 최근인" if which == "max" else "가장 이른"
            else:
                word = extreme_word(m, which)
            question = f"{focus.phrase} 중 {m.ask}이(가) {word} {noun}의 {nm.ask}은(는) {_wh(nm)}인가요?"
            asked: AskKind = "argmax" if which == "max" else "argmin"
            return Ask(asked, answer_from, typed(value, nm), value, question, f"{m.ask} {word} {noun}")
        if kind == "count":
            present = sorted({str(r.get(o.name)) for r in rows if r.get(o.name) not in (None, "")})
            value_ = rng.choice(present)
            hits = sum(str(r.get(o.name)) == value_ for r in rows)
            if hits == len(rows):
                continue
            answer_from = _from(focus.call, f"count({focus.sel}[{o.name}={quote(value_)}])")
            value = _derive(chain, answer_from)
            words = value_words(value_, m)
            unit = _count_unit(counter)
            question = f"{focus.phrase} 중 {m.ask}이(가) {words}인 {noun}은(는) 몇 {counter}인가요?"
            return Ask(
                "count",
                answer_from,
                NumberAnswer(value=int(value), unit=unit),
                value,
                question,
                f"{words}인 {noun} 수",
            )
    raise NotInstantiable(f"no question over the rows of {focus.tool}")


def ask_fan(chain: Chain, call: str, items: Focus, rng: random.Random) -> Ask:
    """A question over a fan-out's items: their values summed (an amount that adds up, meaning.yaml `over`),
    listed, or the item at an extreme."""
    sig = chain.sigs[chain_tool(chain, call)]
    results = chain.walk.results[call]
    singles = all(len(_item_rows(r)) == 1 for r in results)
    producer = chain.sigs[items.tool]
    names = [
        o
        for o in asked_fields(producer, ("name",))
        if len({str(r.get(o.name)) for r in items.rows}) == len(items.rows)
    ]
    options: list[tuple[str, OutField]] = []
    for o in asked_fields(sig, ("measure",)):
        if all(all(maybe_number(row.get(o.name)) is not None for row in _item_rows(r)) for r in results):
            if o.meaning is not None and "sum" in o.meaning.over:  # adds up across the items (meaning.yaml)
                options.append(("sum", o))
            if singles and names and len(results) >= 4:
                options += [("argmax", o), ("argmin", o)]
    if singles:
        for o in asked_fields(sig, ("measure", "date", "name", "enum")):
            if all(_item_rows(r)[0].get(o.name) not in (None, "") for r in results):
                options.append(("list", o))
    rng.shuffle(options)
    for kind, o in options:
        m = o.meaning
        assert m is not None and m.ask is not None
        if kind == "sum":
            path = f"sum([*].result.rows[0].{o.name})" if singles else f"sum([*].result.rows[*].{o.name})"
            answer_from = _from(call, path)
            value = _derive(chain, answer_from)
            question = f"{of(items.phrase, m.ask)}을(를) 모두 더하면 {_wh(m)}인가요?"
            return Ask("sum", answer_from, typed(value, m), value, question, f"{m.ask} 합계")
        if kind in ("argmax", "argmin"):
            which = "max" if kind == "argmax" else "min"
            vals = [maybe_number(_item_rows(r)[0].get(o.name)) for r in results]
            extreme = (
                max(v for v in vals if v is not None)
                if which == "max"
                else min(v for v in vals if v is not None)
            )
            if sum(v == extreme for v in vals) != 1:
                continue
            name = rng.choice(names)
            nm = name.meaning
            assert nm is not None and nm.ask is not None
            answer_from = _from(call, f"[result.rows[0].{o.name}=@{which}].each.{name.name}")
            value = _derive(chain, answer_from)
            word = extreme_word(m, which)
            noun = producer.about.noun if producer.about is not None else "항목"
            question = f"{items.phrase} 가운데 {m.ask}이(가) {word} {noun}의 {nm.ask}은(는) {_wh(nm)}인가요?"
            return Ask(kind, answer_from, typed(value, nm), value, question, f"{m.ask} {word}")  # type: ignore[arg-type]
        if kind == "list":
            answer_from = _from(
                call,
                _labelled(f"list([*].result.rows[0].{o.name})", m)
                if not m.labels
                else f"list([*].result.rows[0].{o.name})",
            )
            value = _derive(chain, answer_from)
            if not isinstance(value, list) or len(set(map(str, value))) < 2:
                continue
            echoed = [
                str(v).strip() in {str(x).strip() for x in row.values()}
                for v, row in zip(value, items.rows, strict=False)
            ]
            if any(echoed):
                continue  # an item's answer is its own row's value: the fan-out read back what it was sent
            items_ = [typed(v, m) for v in value]
            question = f"{of(items.phrase, m.ask)}을(를) 각각 알려 주세요."
            return Ask("list", answer_from, ListAnswer(items=items_), value, question, f"{m.ask} 각각")
    raise NotInstantiable(f"no question over the fan-out of {sig.name}")


def chain_tool(chain: Chain, call: str) -> str:
    for step in chain.steps:
        for c in step.calls:
            if c.id == call:
                return c.tool
    raise KeyError(call)


def _item_rows(item: Any) -> list[dict[str, Any]]:
    return rows_of(item.get("result") if isinstance(item, dict) else None)


@dataclass(frozen=True)
class Item:
    """One row of a `rows: kinds` result read by its name (meaning.yaml `item`): the path filters on every item
    field, `words` say the ones whose values differ among the rows ('연결재무제표 매출액')."""

    filters: str  # "[fs_div='CFS'][account_nm='매출액']"
    words: str
    name: tuple[tuple[str, str], ...]  # (field, value) of every item field: the same row on another result


def _item_words(value: str, m: FieldMeaning | None) -> str:
    return f"{value}년" if m is not None and m.role == "year" else value_words(value, m)


def items(chain: Chain, focus: Focus, name: Sequence[tuple[str, str]] | None = None) -> list[Item]:
    """The rows of a `rows: kinds` set that its item fields name alone (one row each), or only the row named
    `name` (another year's result read the same way); [] for any other set."""
    sig = chain.sigs[focus.tool]
    about = sig.about
    if focus.single or about is None or about.rows != "kinds" or not about.item:
        return []
    keys = [tuple(str(r.get(f, "")).strip() for f in about.item) for r in focus.rows]
    varied = [i for i, f in enumerate(about.item) if len({k[i] for k in keys}) > 1]
    seen = Counter(keys)
    out: list[Item] = []
    for key in sorted(set(keys)):
        if (
            seen[key] != 1
            or "" in key
            or (name is not None and tuple(zip(about.item, key, strict=True)) != tuple(name))
        ):
            continue
        try:
            filters = "".join(f"[{f}={quote(v)}]" for f, v in zip(about.item, key, strict=True))
        except NotInstantiable:
            continue
        words = " ".join(
            _item_words(key[i], meaning_of(sig, about.item[i])) for i in varied or range(len(key))
        )
        out.append(Item(filters, words, tuple(zip(about.item, key, strict=True))))
    return out


def ask_number(
    chain: Chain,
    focus: Focus,
    rng: random.Random,
    field: str | None = None,
    item: Sequence[tuple[str, str]] | None = None,
) -> tuple[From, FieldMeaning, str, Item | None]:
    """One number of a focus, for Cmp and Cond: a measure of the one row, of one named row of a `rows: kinds`
    set (`item` asks for the row another side named), or (of a set of rows of one kind) the sum of a measure that
    adds up. Returns the reference, the field's meaning, the quantity in words and the named row."""
    sig = chain.sigs[focus.tool]
    options = [o for o in asked_fields(sig, ("measure",)) if field is None or o.name == field]
    rng.shuffle(options)
    for o in options:
        m = o.meaning
        assert m is not None and m.ask is not None
        if focus.single:
            if maybe_number(focus.rows[0].get(o.name)) is None:
                continue
            return _from(focus.call, focus.path(o.name)), m, m.ask, None
        named = items(chain, focus, item)
        rng.shuffle(named)
        for it in named:
            row = next(r for r in focus.rows if all(str(r.get(f, "")).strip() == v for f, v in it.name))
            if maybe_number(row.get(o.name)) is not None:
                return _from(focus.call, f"{focus.sel}{it.filters}.{o.name}"), m, f"{it.words}의 {m.ask}", it
        alike = sig.about is None or sig.about.rows == "alike"
        if (
            item is None
            and alike
            and "sum" in m.over
            and all(maybe_number(r.get(o.name)) is not None for r in focus.rows)
        ):
            # a sum only where the measure adds up (meaning.yaml `over`) over rows of one kind
            return _from(focus.call, f"sum({focus.sel}[*].{o.name})"), m, f"{m.ask} 합계", None
    raise NotInstantiable(f"no number to compare in {focus.tool}")


def ask_pair(
    chain: Chain, a: Focus, b: Focus, rng: random.Random, op: Literal["list", "diff"], labels: Sequence[str]
) -> Ask:
    """Sem: the two values in turn; Cmp: the first minus the second (of one quantity)."""
    if op == "diff":
        why = "no difference to ask about"
        for _ in range(PAIR_TRIES):  # another quantity (or account line) when this one did not change
            try:
                ref_a, m, what, it = ask_number(chain, a, rng)
                field = ref_a.path.split(".")[-1].rstrip(")")
                # the same quantity on both sides, of the same named row
                ref_b, _, _, _ = ask_number(chain, b, rng, field, it.name if it is not None else None)
            except NotInstantiable as exc:
                why = str(exc)
                continue
            if ref_a.path.split("(")[0] != ref_b.path.split("(")[0]:
                why = "the two sides give different quantities"
                continue
            answer_from = Combine(op="diff", of=[ref_a, ref_b])
            value = _derive(chain, answer_from)
            if Decimal(str(value)) == 0:
                continue
            question = f"{of(labels[0], what)}에서 {of(labels[1], what)}을(를) 빼면 {_wh(m)}인가요?"
            return Ask("diff", answer_from, typed(value, m), value, question, f"{what} 차이")
        raise NotInstantiable(why)
    why = "no pair of questions"
    for _ in range(PAIR_TRIES):  # another draw of the two questions until they are of one kind
        mark = chain.mark()
        try:
            one, two = (ask_side(chain, f, rng, set()) for f in (a, b))
        except NotInstantiable as exc:
            chain.rollback(mark)
            why = str(exc)
            continue
        problem = _pair_problem(one, two)
        if problem is None:
            break
        chain.rollback(mark)
        why = problem
    else:
        raise NotInstantiable(why)
    answer_from = Combine(op="list", of=[one.answer_from, two.answer_from])
    value = _derive(chain, answer_from)
    question = f"{_stem(one.question)}, 그리고 {two.question}"
    return Ask(
        "list",
        answer_from,
        ListAnswer(items=[one.answer, two.answer], ordered=True),
        value,
        question,
        f"{one.what}, {two.what}",
    )


def ask_named(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    """A measure of one row of a `rows: kinds` set, the row named by its item fields ('X의 재무상태표 중 연결재무제표
    자산총계의 당기 금액')."""
    ref, m, what, _ = ask_number(chain, focus, rng)
    value = _derive(chain, ref)
    return Ask("value", ref, typed(value, m), value, f"{of(focus.phrase, what)}은(는) {_wh(m)}인가요?", what)


def ask_side(chain: Chain, focus: Focus, rng: random.Random, avoid: set[str]) -> Ask:
    """The question of one side of a pair, or of a chain's end: of the one row, of a named row of a `rows: kinds`
    set, or over the rows of a set."""
    if focus.single:
        return ask_one(chain, focus, rng, avoid)
    if items(chain, focus):
        try:
            return ask_named(chain, focus, rng)
        except NotInstantiable:
            pass
    return ask_set(chain, focus, rng, avoid)


PAIR_TRIES = 6
"""Draws of a Sem's two questions: one answer is a list of items of one kind (two amounts in one unit, two
names), and a random field on each side is rarely that."""


def _pair_problem(one: Ask, two: Ask) -> str | None:
    if not isinstance(one.answer_from, From) or not isinstance(two.answer_from, From):
        return "a pair needs one value from each side"
    if one.answer.kind != two.answer.kind or one.answer.kind == "list":
        return "the two answers are of different kinds"
    if (
        isinstance(one.answer, NumberAnswer)
        and isinstance(two.answer, NumberAnswer)
        and one.answer.unit != two.answer.unit  # one submission carries one unit
    ):
        return "the two numbers are in different units"
    if one.what == two.what or str(one.value) == str(two.value):
        return "the two sides ask the same thing"  # 법정동코드 of an address twice, from two searches
    return None


def _stem(question: str) -> str:
    """'…은(는) 얼마인가요?' -> '…은(는) 얼마인지': the first of two questions in one sentence."""
    return question.removesuffix("인가요?") + "인지"


__all__ = ["PHI", "Ask", "ask_fan", "ask_named", "ask_number", "ask_one", "ask_pair", "ask_set", "ask_side"]

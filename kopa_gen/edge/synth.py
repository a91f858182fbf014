"""EDGE Phase B: walk G*, execute candidate trajectories in the sandbox, type each junction by the number of
distinct values crossing it, and turn what was executed into tasks in the KOPA-Bench task schema.

Patterns (specs/templates/): Seq, Fan, Drv (junction cardinality, kopa_gen/edge/junction.py) and Sem (two tools fed
the same value), Cmp (one tool, two values of a literal argument, compared), Cond (a branch on an intermediate
result). Answers are derived from the executed results with the same path language the evaluator uses; the
query writer only words what was executed."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kopa_gen.edge.junction import PHI, choose_reduction, distinct, field_type, junction_kind, number
from kopa_gen.edge.probe import coerce, rows_of
from kopa_gen.edge.scorer import Examples
from kopa_gen.edge.signatures import ToolSig
from kopa_gen.language.answers import Answer, ListAnswer, NumberAnswer, TextAnswer
from kopa_gen.language.task import Combine, From, GoldCall, GoldStep
from kopa_gen.runtime.answer import derive_answer
from kopa_gen.runtime.paths import PathError
from kopa_gen.runtime.session import Session

Pattern = Literal["seq", "fan", "drv", "sem", "cmp", "cond"]
PATTERNS: tuple[Pattern, ...] = ("seq", "fan", "drv", "sem", "cmp", "cond")
AskKind = Literal["count", "value", "max", "min", "sum", "list", "diff", "argmax", "argmin"]


@dataclass(frozen=True)
class GEdge:
    """A kept edge of G*."""

    producer: str
    consumer: str
    bindings: tuple[tuple[str, str], ...]  # (consumer argument, producer field); [0] is the junction
    defaults: dict[str, tuple[Any, ...]]

    @property
    def key(self) -> tuple[str, str]:
        return self.bindings[0]


def kept_edges(doc: Mapping[str, Any]) -> list[GEdge]:
    return [
        GEdge(
            e["producer"],
            e["consumer"],
            tuple((b["param"], b["field"]) for b in e["bindings"]),
            {k: tuple(v) for k, v in e["defaults"].items()},
        )
        for e in doc["edges"]
        if e["status"] == "kept"
    ]


@dataclass
class Ask:
    kind: AskKind
    what: str  # Korean description of the answered field ('' for count)
    answer_from: From | Combine
    labels: list[str] = field(default_factory=list)


@dataclass
class Draft:
    """An executed trajectory, ready to be worded and filtered."""

    pattern: Pattern
    root: str
    steps: list[GoldStep]
    results: dict[str, dict[str, Any]]
    ask: Ask
    answer: Answer
    answer_value: Any
    slots: dict[str, str]
    junctions: list[dict[str, Any]]
    platforms: list[str]
    handoffs: list[tuple[str, str, str]]  # (call id, argument, producer call id): perturbed by the filter
    page_args: frozenset[str] = frozenset()  # the paging arguments of the draft's tools (never in the query)


class NotInstantiable(Exception):
    """This pattern cannot be made from this start (the reason is counted in the report)."""


def short(description: str, fallback: str) -> str:
    """The head of a field or argument description: '고유번호(8자리). dart_corp_code…' → '고유번호'."""
    head = re.split(r"[(.:;,\n]|\s-\s", description, maxsplit=1)[0].strip()
    return head or fallback


@dataclass
class Walk:
    """One draft under construction: the executed root call and what the pattern has added to it so far."""

    root: str
    rows: list[dict[str, Any]]  # the root's rows
    edges: list[GEdge]  # the root's kept out-edges
    steps: list[GoldStep]
    results: dict[str, dict[str, Any]]  # by call id
    slots: dict[str, str]  # template slots
    used: set[str]  # literal argument values already in the query: not asked about
    source: str = "c1"  # the call whose rows the next junction reads (c2 after a Seq hop)
    junctions: list[dict[str, Any]] = field(default_factory=list)  # junctions crossed so far


class Builder:
    """Builds drafts of every pattern from one start (a root tool and its arguments) in one Session."""

    def __init__(
        self,
        session: Session,
        sigs: Mapping[str, ToolSig],
        edges: Sequence[GEdge],
        examples: Mapping[str, Examples],
        rng: random.Random,
    ) -> None:
        self.session = session
        self.sigs = sigs
        self.out: dict[str, list[GEdge]] = {}
        for e in edges:
            self.out.setdefault(e.producer, []).append(e)
        self.examples = examples
        self.rng = rng

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        outcome = await self.session.call(tool, args)
        if outcome.is_error or outcome.structured is None:
            raise NotInstantiable(f"{tool} failed: {outcome.text[:120]}")
        return outcome.structured

    async def complete(self, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Call, and when the result has more rows than the page, ask for one page that holds them all (the
        gold chain sees every row; an agent must page or ask for a larger page, which is the point)."""
        result = await self.call(tool, args)
        sig = self.sigs[tool]
        total = result.get("total_count")
        if isinstance(total, int) and total > len(rows_of(result)) and sig.page_size is not None:
            cap = sig.page_size.maximum or 100
            if total > cap:
                raise NotInstantiable(f"{tool}: {total} rows do not fit one page of {cap}")
            args = dict(args, **{sig.page_size.name: total})
            result = await self.call(tool, args)
        return args, result

    def literal_args(self, edge: GEdge) -> dict[str, Any]:
        return {name: self.rng.choice(list(values)) for name, values in sorted(edge.defaults.items())}

    def handoff_args(self, edge: GEdge, source: str, value: str | None, selector: str = "") -> dict[str, Any]:
        """Arguments from the producer's result: the junction value (selected by `[field=value]`, after an optional
        reduction selector), the other bindings from the same row."""
        key_field = edge.key[1]
        args: dict[str, Any] = {}
        for param, fld in edge.bindings:
            if self.sigs[edge.producer].shape == "record":
                path = f"record.{fld}"
            else:
                pick = f"[{key_field}={value}]" if value is not None else ""
                path = f"first(rows{selector}{pick}[*].{fld})"
            args[param] = From.model_validate({"from": source, "path": path})
        return args

    def resolve(self, args: Mapping[str, Any], results: Mapping[str, Any], tool: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in args.items():
            if isinstance(value, From):
                try:
                    out[name] = coerce(derive_answer(results, value), self.sigs[tool], name)
                except PathError as exc:
                    raise NotInstantiable(f"hand-off {name}: {exc}") from exc
            else:
                out[name] = value
        return out

    def describe_args(self, tool: str, args: Mapping[str, Any]) -> str:
        sig = self.sigs[tool]
        parts = []
        for name, value in args.items():
            if isinstance(value, From) or (sig.page_size and name == sig.page_size.name):
                continue
            param = sig.param(name)
            parts.append(f"{short(param.description if param else '', name)} {value}")
        return ", ".join(parts)

    def field_desc(self, tool: str, name: str) -> str:
        out = self.sigs[tool].output(name)
        return short(out.description if out else "", name)

    def ask_for(self, tool: str, call_id: str, result: dict[str, Any], used: set[str]) -> Ask:
        """What to ask about a final result: one row → a field's value; all rows present → max/min/sum of a
        number field; otherwise the total count."""
        rows = rows_of(result)
        total = result.get("total_count", len(rows))
        if len(rows) == 1 or "record" in result:
            options = [
                (k, str(v))
                for k, v in sorted(rows[0].items())
                if v not in (None, "") and len(str(v)) <= 30 and str(v) not in used and not _code_like(k)
            ]
            if options:
                name, _ = self.rng.choice(options)
                base = "record" if "record" in result else "rows[0]"
                return Ask(
                    "value",
                    self.field_desc(tool, name),
                    From.model_validate({"from": call_id, "path": f"{base}.{name}"}),
                )
        if rows and total == len(rows) and len(rows) >= 2:
            numeric = [
                k
                for k in sorted(rows[0])
                if not _code_like(k)
                and field_type(distinct(rows, k)) == "number"
                and len(distinct(rows, k)) >= 2
            ]
            if numeric:
                name = self.rng.choice(numeric)
                kind: AskKind = self.rng.choice(["max", "min", "sum"])
                path = f"{kind}(rows[*].{name})"
                return Ask(
                    kind, self.field_desc(tool, name), From.model_validate({"from": call_id, "path": path})
                )
        return Ask("count", "", From.model_validate({"from": call_id, "path": "total_count"}))

    def subject(self, root: str, args: Mapping[str, Any]) -> str:
        conds = ", ".join(
            f"{short(p.description, p.name)} '{args[p.name]}'"
            for p in self.sigs[root].bindable
            if p.name in args
        )
        return f"{self.sigs[root].title}에서 {conds}(으)로 찾은 대상" if conds else self.sigs[root].title

    def edges_from(self, tool: str) -> list[GEdge]:
        return list(self.out.get(tool, []))

    async def build(self, pattern: Pattern, root: str, root_args: dict[str, Any]) -> Draft:
        root_args, root_result = await self.complete(root, root_args)
        edges = self.edges_from(root)
        if not edges:
            raise NotInstantiable(f"{root} has no kept out-edge")
        walk = Walk(
            root=root,
            rows=rows_of(root_result),
            edges=edges,
            steps=[GoldStep(calls=[GoldCall(id="c1", tool=root, args=root_args)])],
            results={"c1": root_result},
            slots={"subject": self.subject(root, root_args)},
            used={str(v) for v in root_args.values()},
        )
        builder = getattr(self, f"_{pattern}")
        draft: Draft = await builder(walk)
        return draft

    def _single(self, rows: list[dict[str, Any]], edges: list[GEdge]) -> list[GEdge]:
        return [e for e in edges if len(distinct(rows, e.key[1])) == 1]

    async def _hop(self, walk: Walk, fits: Callable[[list[dict[str, Any]], list[GEdge]], bool]) -> bool:
        """A Seq hop first (the root hands one value to an intermediate tool), kept only when the intermediate
        result offers the junction the pattern needs (`fits`): the Mixed chains, e.g. a code lookup, then a
        company's affiliates, then one call per affiliate. The walk continues from the intermediate rows."""
        chain = {c.tool for st in walk.steps for c in st.calls}
        options = [e for e in self._single(walk.rows, walk.edges) if e.consumer not in chain]
        self.rng.shuffle(options)
        for edge in options[:3]:
            out = [e for e in self.edges_from(edge.consumer) if e.consumer not in chain | {edge.consumer}]
            if not out:
                continue
            try:
                call, result = await self._downstream(edge, walk.source, "c2", None, "", walk.results)
            except NotInstantiable:
                continue
            if not fits(rows_of(result), out):
                continue
            walk.steps.append(GoldStep(calls=[call]))
            walk.results["c2"] = result
            walk.rows, walk.edges, walk.source = rows_of(result), out, "c2"
            walk.junctions.append({"kind": "seq", "cardinality": 1, "field": edge.key[1]})
            walk.slots["subject"] = f"{walk.slots['subject']}의 {self.sigs[edge.consumer].title}"
            return True
        return False

    async def _downstream(
        self,
        edge: GEdge,
        source: str,
        call_id: str,
        value: str | None,
        selector: str,
        results: dict[str, Any],
        literals: dict[str, Any] | None = None,
    ) -> tuple[GoldCall, dict[str, Any]]:
        args: dict[str, Any] = dict(self.handoff_args(edge, source, value, selector))
        args.update(literals if literals is not None else self.literal_args(edge))
        sent, result = await self.complete(edge.consumer, self.resolve(args, results, edge.consumer))
        if not rows_of(result):
            raise NotInstantiable(f"{edge.consumer} has no data for the handed-over value")
        for name, v in sent.items():
            args.setdefault(name, v)
        return GoldCall(id=call_id, tool=edge.consumer, args=args), result

    def _finish(self, pattern: Pattern, walk: Walk, ask: Ask, junctions: list[dict[str, Any]]) -> Draft:
        try:
            value = derive_answer(walk.results, ask.answer_from)
        except PathError as exc:
            raise NotInstantiable(f"answer does not derive: {exc}") from exc
        answer = make_answer(value)
        tools = {c.tool for s in walk.steps for c in s.calls}
        handoffs = [
            (c.id, name, v.call)
            for s in walk.steps
            for c in s.calls
            for name, v in c.args.items()
            if isinstance(v, From)
        ]
        return Draft(
            pattern,
            walk.root,
            walk.steps,
            walk.results,
            ask,
            answer,
            value,
            walk.slots,
            junctions,
            sorted({self.sigs[t].platform for t in tools}),
            handoffs,
            frozenset(p.name for t in tools for p in self.sigs[t].params if p.paging),
        )

    async def _seq(self, walk: Walk) -> Draft:
        options = self._single(walk.rows, walk.edges)
        if not options:
            raise NotInstantiable("no junction with exactly one value")
        edge = self.rng.choice(options)
        call, result = await self._downstream(edge, "c1", "c2", None, "", walk.results)
        walk.steps.append(GoldStep(calls=[call]))
        walk.results["c2"] = result
        junctions = [{"kind": "seq", "cardinality": 1, "field": edge.key[1]}]
        last, last_id = edge.consumer, "c2"
        # a second hop when the consumer's result again hands one value on
        nxt = [
            e
            for e in self._single(rows_of(result), self.edges_from(edge.consumer))
            if e.consumer != walk.root
        ]
        if nxt and self.rng.random() < 0.5:
            e2 = self.rng.choice(nxt)
            try:
                call3, result3 = await self._downstream(e2, "c2", "c3", None, "", walk.results)
                walk.steps.append(GoldStep(calls=[call3]))
                walk.results["c3"] = result3
                junctions.append({"kind": "seq", "cardinality": 1, "field": e2.key[1]})
                last, last_id = e2.consumer, "c3"
            except NotInstantiable:
                pass
        walk.used |= {
            str(v) for c in walk.steps[-1].calls for v in c.args.values() if not isinstance(v, From)
        }
        ask = self.ask_for(last, last_id, walk.results[last_id], walk.used)
        walk.slots.update(
            tool=self.sigs[last].title, args=self.describe_args(last, walk.steps[-1].calls[0].args)
        )
        return self._finish("seq", walk, ask, junctions)

    async def _fanout(
        self,
        pattern: Pattern,
        walk: Walk,
        edge: GEdge,
        values: Sequence[str],
        selector: str,
        junction: dict[str, Any],
    ) -> Draft:
        literals = self.literal_args(edge)
        calls = []
        first = len(walk.results) + 1
        for i, value in enumerate(values):
            call, result = await self._downstream(
                edge, walk.source, f"c{first + i}", value, selector, walk.results, literals
            )
            calls.append(call)
            walk.results[call.id] = result
        walk.steps.append(GoldStep(calls=calls))
        walk.slots.update(
            tool=self.sigs[edge.consumer].title, args=self.describe_args(edge.consumer, calls[0].args)
        )
        walk.slots.update(count=str(len(values)), key=self.field_desc(edge.producer, edge.key[1]))
        if len(calls) == 1:
            ask = self.ask_for(edge.consumer, calls[0].id, walk.results[calls[0].id], set(values))
        else:
            singles = [rows_of(walk.results[c.id]) for c in calls]
            name = _common_field(singles) if all(len(r) == 1 for r in singles) else None
            if name is not None and self.rng.random() < 0.5:
                ask = Ask(
                    "list",
                    self.field_desc(edge.consumer, name),
                    Combine(
                        op="list",
                        of=[From.model_validate({"from": c.id, "path": f"rows[0].{name}"}) for c in calls],
                    ),
                )
            else:
                ask = Ask(
                    "sum",
                    "조회 결과 건수",
                    Combine(
                        op="sum",
                        of=[From.model_validate({"from": c.id, "path": "total_count"}) for c in calls],
                    ),
                )
        return self._finish(pattern, walk, ask, [*walk.junctions, junction])

    async def _fan(self, walk: Walk) -> Draft:
        def fan_options(rows: list[dict[str, Any]], edges: list[GEdge]) -> list[GEdge]:
            return [
                e
                for e in edges
                if 2 <= len(distinct(rows, e.key[1])) <= PHI and _pathable(distinct(rows, e.key[1]))
            ]

        options = fan_options(walk.rows, walk.edges)
        if (not options or self.rng.random() < 0.5) and await self._hop(
            walk, lambda rows, edges: bool(fan_options(rows, edges))
        ):
            options = fan_options(walk.rows, walk.edges)
        if not options:
            raise NotInstantiable(f"no junction with 2..{PHI} values")
        rows = walk.rows
        edge = self.rng.choice(options)
        values = distinct(rows, edge.key[1])
        junction = {"kind": junction_kind(len(values)), "cardinality": len(values), "field": edge.key[1]}
        return await self._fanout("fan", walk, edge, values, "", junction)

    async def _drv(self, walk: Walk) -> Draft:
        def many(rows: list[dict[str, Any]], edges: list[GEdge]) -> list[GEdge]:
            return [e for e in edges if len(distinct(rows, e.key[1])) > PHI]

        if not many(walk.rows, walk.edges) or self.rng.random() < 0.5:
            await self._hop(walk, lambda rows, edges: bool(many(rows, edges)))
        rows = walk.rows
        options = many(rows, walk.edges)
        self.rng.shuffle(options)
        for edge in options:
            reduction = choose_reduction(rows, edge.key[1], self.rng)
            if reduction is None or not _pathable(list(reduction.kept)):
                continue
            junction = {
                "kind": "drv",
                "cardinality": len(distinct(rows, edge.key[1])),
                "field": edge.key[1],
                "reduction": reduction.kind,
                "pivot_field": reduction.pivot_field,
                "pivot": reduction.pivot,
                "kept": len(reduction.kept),
            }
            walk.slots["reduction_kind"] = reduction.kind
            walk.slots["pivot"] = reduction.pivot
            walk.slots["pivot_key"] = self.field_desc(edge.producer, reduction.pivot_field)
            return await self._fanout("drv", walk, edge, reduction.kept, reduction.selector, junction)
        raise NotInstantiable(f"no junction with more than {PHI} values and a reduction that keeps 1..{PHI}")

    async def _sem(self, walk: Walk) -> Draft:
        single = self._single(walk.rows, walk.edges)
        pairs = [(a, b) for a in single for b in single if a.consumer < b.consumer and a.key[1] == b.key[1]]
        if not pairs:
            raise NotInstantiable("no two tools fed by the same single value")
        e1, e2 = self.rng.choice(pairs)
        c2, r2 = await self._downstream(e1, "c1", "c2", None, "", walk.results)
        c3, r3 = await self._downstream(e2, "c1", "c3", None, "", walk.results)
        walk.results.update(c2=r2, c3=r3)
        walk.steps.append(GoldStep(calls=[c2, c3]))
        a2 = self.ask_for(e1.consumer, "c2", r2, walk.used)
        a3 = self.ask_for(e2.consumer, "c3", r3, walk.used)
        if not isinstance(a2.answer_from, From) or not isinstance(a3.answer_from, From):
            raise NotInstantiable("sem needs one value from each tool")
        ask = Ask("list", a2.what, Combine(op="list", of=[a2.answer_from, a3.answer_from]))
        walk.slots.update(
            tool=self.sigs[e1.consumer].title,
            args=self.describe_args(e1.consumer, c2.args),
            tool2=self.sigs[e2.consumer].title,
            args2=self.describe_args(e2.consumer, c3.args),
            ask_kind=a2.kind,
            ask2_kind=a3.kind,
            field=a2.what,
            field2=a3.what,
        )
        return self._finish("sem", walk, ask, [{"kind": "seq", "cardinality": 1, "field": e1.key[1]}])

    async def _cmp(self, walk: Walk) -> Draft:
        options = [
            (e, name)
            for e in self._single(walk.rows, walk.edges)
            for name, vs in sorted(e.defaults.items())
            if len(set(map(str, vs))) >= 2
        ]
        if not options:
            raise NotInstantiable(
                "no single-value junction into a tool with a literal argument of two values"
            )
        edge, vary = self.rng.choice(options)
        v1, v2 = self.rng.sample(sorted(set(edge.defaults[vary]), key=str), 2)
        base = self.literal_args(edge)
        c2, r2 = await self._downstream(edge, "c1", "c2", None, "", walk.results, dict(base, **{vary: v1}))
        c3, r3 = await self._downstream(edge, "c1", "c3", None, "", walk.results, dict(base, **{vary: v2}))
        walk.results.update(c2=r2, c3=r3)
        walk.steps.append(GoldStep(calls=[c2, c3]))
        rows2, rows3 = rows_of(r2), rows_of(r3)
        numeric = (
            [
                k
                for k in sorted(rows2[0])
                if rows3
                and k in rows3[0]
                and not _code_like(k)
                and number(rows2[0][k]) is not None
                and number(rows3[0].get(k)) is not None
                and number(rows2[0][k]) != number(rows3[0][k])
            ]
            if len(rows2) == 1 and len(rows3) == 1
            else []
        )
        if numeric:
            name = self.rng.choice(numeric)
            what, path = self.field_desc(edge.consumer, name), f"rows[0].{name}"
        elif r2.get("total_count") != r3.get("total_count"):
            what, path = "결과 건수", "total_count"
        else:
            raise NotInstantiable("both variants give the same count and no single-row number differs")
        labels = [str(v1), str(v2)]
        # numbers only: "which of A and B is larger" names its answer in the query and is passed by any reply
        # that mentions both options (argmax/argmin are not asked)
        kind: AskKind = self.rng.choice(["diff", "sum"])
        of = [From.model_validate({"from": c, "path": path}) for c in ("c2", "c3")]
        ask = Ask(kind, what, Combine(op=kind, of=of), labels)
        others = {k: v for k, v in base.items() if k != vary}
        walk.slots.update(
            tool=self.sigs[edge.consumer].title,
            args=self.describe_args(edge.consumer, others),
            vary=short(
                getattr(self.sigs[edge.consumer].param(vary), "description", ""),
                vary,
            ),
            values=f"{v1}과(와) {v2}",
            labels=", ".join(labels),
            field=what,
        )
        return self._finish("cmp", walk, ask, [{"kind": "seq", "cardinality": 1, "field": edge.key[1]}])

    async def _cond(self, walk: Walk) -> Draft:
        single = self._single(walk.rows, walk.edges)
        pairs = [(a, b) for a in single for b in single if a.consumer != b.consumer]
        if not pairs:
            raise NotInstantiable("no two tools to branch between")
        e_then, e_else = self.rng.choice(pairs)
        total = int(walk.results["c1"].get("total_count", len(walk.rows)))
        # the condition: root's count > pivot; pivot chosen so either branch is as likely
        pivot = max(0, total - 1) if self.rng.random() < 0.5 else total
        taken = e_then if total > pivot else e_else
        call, result = await self._downstream(taken, "c1", "c2", None, "", walk.results)
        walk.results["c2"] = result
        walk.steps.append(GoldStep(calls=[call]))
        ask = self.ask_for(taken.consumer, "c2", result, walk.used)
        walk.slots.update(
            condition_kind="gt",
            what=f"{self.sigs[walk.root].title} 결과 건수",
            pivot=str(pivot),
            tool=self.sigs[e_then.consumer].title,
            args=self.describe_args(
                e_then.consumer, call.args if taken is e_then else self.literal_args(e_then)
            ),
            tool2=self.sigs[e_else.consumer].title,
            args2=self.describe_args(
                e_else.consumer, call.args if taken is e_else else self.literal_args(e_else)
            ),
            ask_kind=ask.kind,
            field=ask.what,
            branch="then" if taken is e_then else "else",
        )
        junction = {"kind": "seq", "cardinality": 1, "field": taken.key[1], "branch": walk.slots["branch"]}
        return self._finish("cond", walk, ask, [junction])


def _code_like(name: str) -> bool:
    low = name.lower()
    return low.endswith(("_cd", "_code", "_no", "crno", "cd", "_ymd", "_dt", "_de", "dt")) or low in {
        "rcept_no",
        "corp_code",
    }


def _pathable(values: Sequence[str]) -> bool:
    return all(not re.search(r"[\[\]=!<>]", v) and v.strip() == v for v in values)


def _common_field(row_lists: Sequence[list[dict[str, Any]]]) -> str | None:
    names = sorted(
        set.intersection(*(set(k for k, v in rows[0].items() if v not in (None, "")) for rows in row_lists))
    )
    names = [n for n in names if not _code_like(n) and len(str(row_lists[0][0][n])) <= 30]
    return names[0] if names else None


def make_answer(value: Any) -> Answer:
    """A typed answer for an executed value: numbers (API strings included) as numbers, codes with leading zeros
    and words as text, lists item by item."""
    if isinstance(value, list):
        items = [make_answer(v) for v in value]
        if len({i.kind for i in items}) > 1:
            items = [TextAnswer(value=str(v)) for v in value]
        return ListAnswer(items=items, ordered=False)
    text = str(value).strip()
    n = number(text)
    if n is not None and n.is_finite() and not (len(text) > 1 and text.startswith("0") and "." not in text):
        plain = int(n) if n == n.to_integral_value() else float(n)
        return NumberAnswer(value=plain)
    try:
        return TextAnswer(value=text)
    except ValueError as exc:  # empty after normalization ('-', '')
        raise NotInstantiable(f"answer {text!r} cannot be scored") from exc

"""EDGE Phase B, one trajectory at a time: a chain is built by executing it. It starts from an entity of the
world named the way a person names it (a company, a school, a 구, a member, a law, a stop), looks it up, and
walks kept edges of G*; every step is a gold step of the task language, executed at once by the gold walker
(kopa_gen/runtime/chain.py) so that the oracle replays exactly what was built. The question is worded from the
meaning files as the chain grows: entity names, literal arguments as people say them, the topic of each result,
reductions and question phrases, never a tool name, a field name or a code.

A *focus* is where the chain stands: one row (an entity) or a set of rows of one call's result, with the path
that selects it and the phrase that names it. Operators move the focus:

    start    a lookup by name; the row whose name is the one asked for                       (one row)
    hop      the focus row's value fills the next tool's parameter            Seq junction   (one row or a set)
    narrow   a reduction over a set: the extreme, a threshold, a date, a category          (Drv, with the hop after it)
    fan      one call per row of a set of 2..φ                                 Fan junction
    pair     two calls in one step: two tools on one value (Sem), one tool on two literal values (Cmp)

and the question is asked of the last focus (kopa_gen/edge/asks.py).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from kopa_gen.edge.found import Found
from kopa_gen.edge.korean import arg_words, of, sentence, value_words, written_numbers
from kopa_gen.edge.links import apply, kind_table, literal_values
from kopa_gen.edge.probe import rows_of
from kopa_gen.edge.scorer import Binding, Examples
from kopa_gen.edge.signatures import ToolSig
from kopa_gen.language.functions import coerce_arg, maybe_number
from kopa_gen.language.meaning import FieldMeaning
from kopa_gen.language.particles import attach_particles
from kopa_gen.language.task import EACH, From, GoldCall, GoldStep, SystemState, Task
from kopa_gen.language.units import parse_unit
from kopa_gen.project import Project
from kopa_gen.runtime.chain import Walk, Walker, walk_chain
from kopa_gen.runtime.session import Session

PHI = 5
_NO_SYSTEM = SystemState(today=dt.date(2000, 1, 1), keys=[])
PAGE = 100  # the page size gold calls ask for (at most the platform's): a few pages for a few hundred rows

JunctionKind = Literal["seq", "fan", "drv"]
Feature = Literal["fan", "drv", "sem", "cmp", "cond"]


class NotInstantiable(Exception):
    """This recipe cannot be built from this start (the reason is counted in the report)."""


@dataclass(frozen=True)
class GEdge:
    """A kept edge of G*: how the producer's row fills the consumer (its bindings, each maybe through a typed
    transform), the literal values for the consumer's other required arguments, and what Phase A learnt of it."""

    id: str
    producer: str
    consumer: str
    bindings: tuple[Binding, ...]
    defaults: Mapping[str, tuple[str | int, ...]]
    mean: float = 0.0
    trials: int = 0


@dataclass(frozen=True)
class Junction:
    """A hand-off as EDGE types it: how many distinct values could cross (the cardinality), how many crossed,
    the rows behind it, and for a Drv junction the reduction that chose."""

    kind: JunctionKind
    cardinality: int
    crossed: int
    rows: int
    field: str
    reduction: str = ""
    pivot: str = ""


@dataclass(frozen=True)
class Tie:
    """How a hand-off along an edge is said: the row's own ('own'), through an attribute with these words
    ('attribute'), or not at all ('refused', with the reason)."""

    how: Literal["own", "attribute", "refused"]
    words: str = ""


@dataclass
class Focus:
    """Where the chain stands."""

    call: str  # the gold call whose result holds the focus
    tool: str
    sel: (
        str  # the path selecting the focus rows in that result: "rows[corp_name='…']", "rows", "rows[m=@max]"
    )
    rows: list[dict[str, Any]]
    phrase: str  # how the question names it ("솔중케로직스(주)의 2025년 사업보고서 직원 현황")
    total: int  # rows behind it (the call's whole result)
    narrowed: Junction | None = None  # the reduction that made this focus (a Drv junction once handed on)
    pool: list[dict[str, Any]] | None = None  # a narrowed focus: the rows the reduction chose among

    @property
    def single(self) -> bool:
        return len(self.rows) == 1

    def path(self, field: str, pipe: str = "") -> str:
        """The path of one field of a one-row focus."""
        tail = f" | {pipe}" if pipe else ""
        return f"{self.sel}.{field}{tail}"


@dataclass(frozen=True)
class StartSpec:
    """A lookup by name: calling `tool` with `param` = a name finds the row whose `field` is that name. With
    `contains` (the parameter's meaning.yaml phrase), a search by one word instead: the start is every row whose
    `field` contains the word ('이름에 '주차장'이 들어간 자치법규'), a set a reduction or a fan-out works on."""

    tool: str
    param: str
    field: str
    kind: str
    values: tuple[dict[str, str], ...]  # argument sets from the world (the name and the arguments its row
    # holds), in a seeded order
    contains: str | None = None

    @property
    def key(self) -> str:
        """The start's name among a tool's starts: its parameter, '~' after it for a search by one word."""
        return self.param + ("~" if self.contains is not None else "")


@dataclass(frozen=True)
class Mark:
    """What a chain held at one point (`Chain.mark`), so that a move leading nowhere is taken back
    (`Chain.rollback`) and another tried from the same place."""

    steps: int
    turns: int
    handoffs: int
    problems: int
    results: frozenset[str]
    junctions: int
    edges: int
    keep: int
    features: frozenset[Feature]
    starts: int
    start_values: frozenset[str]
    attribute_hops: int
    handed: tuple[dict[str, Any], ...]
    visited: int
    count: int


def quote(value: Any) -> str:
    """A literal inside a path selector."""
    text = str(value)
    if "'" in text or "\n" in text:
        raise NotInstantiable(f"value {text!r} cannot be written in a path")
    return f"'{text}'"


def meaning_of(sig: ToolSig, field_name: str) -> FieldMeaning | None:
    out = sig.output(field_name)
    return out.meaning if out is not None else None


class Chain:
    """One trajectory under construction in one Session: its gold steps, what they returned, the junctions and
    G* edges it used, the values the query must keep, and the features that type it."""

    def __init__(
        self,
        project: Project,
        session: Session,
        sigs: Mapping[str, ToolSig],
        out: Mapping[str, Sequence[GEdge]],
        examples: Mapping[str, Examples],
        rng: random.Random,
        max_rows: int = 300,
        found: Found | None = None,
    ) -> None:
        self.project = project
        self.session = session
        self.sigs = sigs
        self.out = out
        self.examples = examples
        self.rng = rng
        self.max_rows = max_rows
        self.steps: list[GoldStep] = []
        self.walk = Walk()
        self.junctions: list[Junction] = []
        self.edges: list[GEdge] = []
        self.keep: list[str] = []  # values the query must say (entity names, literal arguments, pivots)
        self.features: set[Feature] = set()
        self.starts: list[str] = []  # the entities looked up, as named in the query
        self.start_values: set[str] = set()  # the arguments the lookups were called with
        self.attribute_hops = 0  # hand-offs through an attribute (a tollgate's route), at most one a chain
        self.handed: list[dict[str, Any]] = []  # the rows whose values the last hand-off sent on
        self.visited: list[dict[str, Any]] = []  # every row whose values a hand-off sent on, in order
        self.count = 0
        self.kinds = kind_table(project)
        self._ties: dict[str, Tie] = {}
        self.found = found  # asked before an edge is tried: does the world hold the value it hands on?

    # ------------------------------------------------------------------------------------------ execution

    def mark(self) -> Mark:
        w = self.walk
        return Mark(
            len(self.steps),
            len(w.turns),
            len(w.handoffs),
            len(w.problems),
            frozenset(w.results),
            len(self.junctions),
            len(self.edges),
            len(self.keep),
            frozenset(self.features),
            len(self.starts),
            frozenset(self.start_values),
            self.attribute_hops,
            tuple(self.handed),
            len(self.visited),
            self.count,
        )

    def rollback(self, m: Mark) -> None:
        """Back to `m`: the steps, results, junctions, edges, words and features added since are dropped (the
        calls stay in the session's own log, which no task reads)."""
        w = self.walk
        del self.steps[m.steps :], w.turns[m.turns :], w.handoffs[m.handoffs :], w.problems[m.problems :]
        for turn in [t for t in w.lookups if t >= m.turns]:
            del w.lookups[turn]
        for key in set(w.results) - m.results:
            del w.results[key]
        del self.junctions[m.junctions :], self.edges[m.edges :], self.keep[m.keep :], self.starts[m.starts :]
        self.features = set(m.features)
        self.start_values = set(m.start_values)
        self.attribute_hops = m.attribute_hops
        self.handed = list(m.handed)
        del self.visited[m.visited :]
        self.count = m.count

    def new_id(self) -> str:
        self.count += 1
        return f"c{self.count}"

    def _paged(self, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        paging = self.project.page_params(tool)
        if paging is None:
            return args, False
        sig = self.sigs[tool]
        cap = sig.page_size.maximum if sig.page_size is not None and sig.page_size.maximum else PAGE
        return {**args, paging[1]: min(PAGE, cap)}, True

    async def run(self, calls: list[GoldCall]) -> None:
        """Execute one step (its calls in parallel, every page of a paged call), append it to the chain, and drop
        `pages: all` where one page held everything. A failure or an empty result: NotInstantiable."""
        task = Task.model_construct(  # one step to walk; the walker reads only `gold`
            id="draft",
            domain="draft",
            query="",
            system=_NO_SYSTEM,
            max_calls=0,
            reward=[],
            gold=[GoldStep(calls=calls)],
        )
        before = len(self.walk.problems)
        await walk_chain(
            self.project, task, self.session, Walker(strict=True, max_rows=self.max_rows), self.walk
        )
        if len(self.walk.problems) > before:
            raise NotInstantiable(self.walk.problems[before].message[:160])
        kept: list[GoldCall] = []
        for call in calls:
            result = self.walk.results.get(call.id)
            if result is None:
                raise NotInstantiable(f"{call.tool} returned nothing")
            items = [r["result"] for r in result] if call.for_each is not None else [result]
            for r in items:
                rows = rows_of(r)
                if not rows:
                    raise NotInstantiable(f"{call.tool} has no data for {call.args}")
                total = r.get("total_count")
                if isinstance(total, int) and total > self.max_rows:
                    raise NotInstantiable(f"{call.tool}: {total} rows, more than {self.max_rows}")
            one_page = all(
                not isinstance(r.get("total_count"), int) or r["total_count"] <= len(rows_of(r))
                for r in items
            ) and all(len(rows_of(r)) <= _page_of(r) for r in items)
            kept.append(call.model_copy(update={"pages": None}) if call.pages and one_page else call)
        self.steps.append(GoldStep(calls=kept))

    def literals(self, sig: ToolSig, defaults: Mapping[str, Sequence[str | int]]) -> dict[str, Any]:
        """Values for the consumer's unbound required arguments: the one an earlier call gave (`carried`), else
        one a question can say; and the arguments the tool's first call adds (x-kopa.start)."""
        out: dict[str, Any] = {}
        for name, values in sorted(defaults.items()):
            carried = self.carried(name)
            if carried is not None:  # the city the chain started in, not another one drawn from the examples
                out[name] = carried
                continue
            param = sig.param(name)
            sayable = [v for v in values if param is not None and arg_words(v, param.meaning) is not None]
            if not sayable:
                raise NotInstantiable(f"{sig.name}.{name}: no value a question can state")
            out[name] = self.rng.choice(sayable)
        for name, value in sig.start.items():  # an argument the tool's first call adds (x-kopa.start): the
            # disclosure list's start date, without which it answers today's filings only; a documented
            # example where there is one (a period of years, not the two months a first look takes)
            if name in out:
                continue
            param = sig.param(name)
            documented = [
                v
                for v in self.examples.get(sig.name, {}).get(name, ())
                if param is not None and arg_words(v, param.meaning) is not None
            ]
            carried = self.carried(name)
            if carried is not None:
                out[name] = carried
            elif documented:
                out[name] = self.rng.choice(documented)
            else:
                out[name] = value
        return out

    def carried(self, name: str) -> Any:
        """The literal value an earlier call of the chain gave an argument of this name (the latest), or None: a
        route's city is the city its lookup was asked in, which the question already says."""
        for step in reversed(self.steps):
            for call in step.calls:
                value = call.args.get(name)
                if value is not None and not isinstance(value, From):
                    return value
        return None

    def _new_words(self, literals: Mapping[str, Any]) -> dict[str, Any]:
        """The literal arguments of a call still to be said: a value carried from an earlier call is said
        already."""
        return {k: v for k, v in literals.items() if self.carried(k) != v}

    def context(self, sig: ToolSig, args: Mapping[str, Any]) -> str:
        """The literal arguments as the question states them ('2025년 사업보고서')."""
        words: list[str] = []
        for name, value in args.items():
            param = sig.param(name)
            if isinstance(value, From) or param is None or param.paging:
                continue
            said = arg_words(value, param.meaning)
            if said:
                words.append(said)
                self.keep.append(said)
        return " ".join(words)

    # ------------------------------------------------------------------------------------------ operators

    async def start(self, spec: StartSpec, values: Mapping[str, str]) -> Focus:
        """Look the entity up by its name: exactly one row of the lookup's whole result must carry that name."""
        sig = self.sigs[spec.tool]
        name = values[spec.param]
        param = sig.param(spec.param)
        said = arg_words(name, param.meaning if param else None) or name
        args: dict[str, Any] = {**sig.start}
        for key, value in values.items():
            p = sig.param(key)
            if p is None or (key != spec.param and arg_words(value, p.meaning) is None):
                raise NotInstantiable(f"{spec.tool}.{key}: the start's {key} cannot be said in a question")
            args[key] = coerce_arg(p.type, value)
        for p in sig.bindable:
            if p.required and p.name not in args:
                choices = literal_values(p, self.examples.get(sig.name, {}))
                if not choices:
                    raise NotInstantiable(f"{sig.name}.{p.name}: no literal value to start with")
                args[p.name] = self.rng.choice(list(choices))
        args, paged = self._paged(spec.tool, args)
        call_id = self.new_id()
        await self.run([GoldCall(id=call_id, tool=spec.tool, args=args, pages="all" if paged else None)])
        rows = rows_of(self.walk.results[call_id])
        if spec.contains is not None:
            return self._word_start(spec, sig, call_id, name, args, rows)
        mine = [r for r in rows if str(r.get(spec.field, "")).strip() == name]
        if len(mine) != 1:
            raise NotInstantiable(f"{len(mine)} rows of {spec.tool} are named {name!r}")
        ctx = self.context(sig, {k: v for k, v in args.items() if k != spec.param})
        self.keep.append(said)
        self.starts.append(said)
        self.start_values |= {str(v).strip() for v in args.values() if not isinstance(v, From)}
        phrase = f"{ctx} {said}".strip()
        return Focus(call_id, spec.tool, f"rows[{spec.field}={quote(name)}]", mine, phrase, len(rows))

    def _word_start(
        self,
        spec: StartSpec,
        sig: ToolSig,
        call_id: str,
        word: str,
        args: Mapping[str, Any],
        rows: list[dict[str, Any]],
    ) -> Focus:
        """The set a search by one word finds: every row whose name contains it, named as the meaning says
        ('이름에 '주차장'이 들어간 자치법규')."""
        assert spec.contains is not None
        mine = [r for r in rows if word in str(r.get(spec.field, ""))]
        if len(mine) < 2 or len(mine) != len(rows):
            raise NotInstantiable(f"{spec.tool}: {len(mine)} of {len(rows)} rows contain {word!r}")
        ctx = self.context(sig, {k: v for k, v in args.items() if k != spec.param})
        self.keep.append(word)
        self.starts.append(word)
        self.start_values |= {str(v).strip() for v in args.values() if not isinstance(v, From)}
        noun = sig.about.noun if sig.about is not None else sig.name
        words = spec.contains.replace("{value}", word).replace("{label}", word)
        phrase = attach_particles(f"{ctx} {words} {noun}".strip())
        result = self.walk.results[call_id]
        total = result.get("total_count") if isinstance(result.get("total_count"), int) else len(rows)
        return Focus(call_id, spec.tool, "rows", mine, phrase, int(total))

    def edges_from(self, tool: str, focus_rows: Sequence[dict[str, Any]], avoid: set[str]) -> list[GEdge]:
        """Kept edges out of `tool` whose bindings the focus rows fill, to tools not yet in the chain, that a
        question can still say (`tie`): refused edges are never executed."""
        return [
            e
            for e in self.out.get(tool, ())
            if e.consumer not in avoid
            and self.tie(e).how in self._open_ties()
            and all(all(r.get(b.field) not in (None, "") for r in focus_rows) for b in e.bindings)
            and self._held(e, focus_rows)
        ]

    def _held(self, edge: GEdge, rows: Sequence[dict[str, Any]]) -> bool:
        """False when the world is known to hold no row for a value the edge would hand on (kopa_gen/edge/found.py);
        True when it holds them all or cannot say. A set a reduction will choose from (more than φ rows) needs
        one held value only: one row crosses (a company's filings, of which only some have a document)."""
        if self.found is None:
            return True
        enough = any if len(rows) > PHI else all
        found = self.found
        return all(
            enough(found.has(edge.consumer, b.param, str(r.get(b.field)).strip()) is not False for r in rows)
            for b in edge.bindings
            if not b.pipe
        )

    def _open_ties(self) -> tuple[str, ...]:
        """The hand-offs a chain can still say: an attribute once, its own id or name always."""
        return ("own",) if self.attribute_hops >= 1 else ("own", "attribute")

    def known(self) -> set[str]:
        """Values the question or the last hand-off already gave: an answer equal to one is an echo, not a
        finding (the last hop only read back what it was sent)."""
        out = set(self.starts)
        for row in self.handed:
            out |= {
                str(v).strip() for v in row.values() if v not in (None, "") and not isinstance(v, list | dict)
            }
        return out

    def says(self, value: Any) -> bool:
        """Whether the question's words so far already say `value` (the filters' tests, kopa_gen/edge/filters.py
        `handed_in_query` and `leaked`, asked while a move can still be taken back): text of two or more
        characters inside them, a number as one they write (kopa_gen/edge/korean.py `written_numbers`)."""
        text = str(value).strip() if value is not None else ""
        if len(text) < 2:
            return False
        words = " ".join(self.keep)
        number = maybe_number(text)
        if number is not None:
            return _plain(number) in written_numbers(words)
        return text in words

    def tools(self) -> set[str]:
        return {c.tool for s in self.steps for c in s.calls}

    def _junction(self, focus: Focus, edge: GEdge, crossed: int) -> Junction:
        """The junction a hand-off from `focus` makes. After a reduction it is a Drv junction only when more than φ
        distinct values of the handed field competed (a reduction over rows that all carry one value decides
        nothing: such a chain is refused)."""
        first = edge.bindings[0].field
        if focus.narrowed is not None and focus.pool is not None:
            j = focus.narrowed
            pipe = edge.bindings[0].pipe
            # the values that would be handed on, through the edge's transform: 법정동s cut to their 시군구 all
            # hand on one value, and a reduction among them decides nothing
            distinct = len(
                {
                    str(_piped(r.get(first), pipe) if pipe else r.get(first))
                    for r in focus.pool
                    if r.get(first) not in (None, "")
                }
            )
            if distinct <= PHI:
                raise NotInstantiable(f"the reduction chooses among {distinct} distinct {first} values only")
            return Junction("drv", distinct, crossed, focus.total, first, j.reduction, j.pivot)
        kind: JunctionKind = "seq" if crossed == 1 else "fan"
        return Junction(kind, crossed, crossed, focus.total, first)

    def tie(self, edge: GEdge) -> Tie:
        """How a hand-off along `edge` is said, read from the producer's meaning alone (so a refused edge is
        never executed): its own ('X의 직원 현황') when the row's one id or one name is handed on, or an id whose
        kind names the row's noun; through the handed attribute ('X의 고속도로 노선번호에 해당하는 휴게소 대표
        음식') when the field has words; a code or an id of another row is refused, for 'X의 법인등록번호에
        해당하는 …' names a code and a citizen never says that."""
        known = self._ties.get(edge.id)
        if known is not None:
            return known
        sig = self.sigs[edge.producer]
        out = sig.output(edge.bindings[0].field)
        m = out.meaning if out is not None else None
        field = f"{edge.producer}.{edge.bindings[0].field}"
        kind = self.kinds.get(m.kind) if m is not None and m.kind else None
        noun = sig.about.noun if sig.about is not None else ""
        if m is None:
            tie = Tie("refused", f"{field}: no meaning to say the hand-off with")
        elif sig.about is not None and edge.bindings[0].field in sig.about.own:
            tie = Tie("own")  # meaning.yaml says the field identifies the row's own entity
        elif (
            (
                m.role in ("id", "name")
                and sum(1 for o in sig.outputs if o.meaning is not None and o.meaning.role == m.role) == 1
            )
            or (m.role in ("id", "name", "code") and kind is not None and bool(noun) and noun in kind.noun)
        ):  # the row's one id or name, or an identifier whose kind names the row: 표준학교코드 on a 학교 row, 법정동코드 on a 법정동 row
            tie = Tie("own")
        elif m.role in ("code", "id", "order"):
            tie = Tie("refused", f"{field}: a hand-off through another row's code")
        elif self._broad(edge):
            tie = Tie(
                "refused", f"{field}: hands on a value unrelated things share (an era, a year, a party)"
            )
        elif m.ask or (kind is not None and kind.noun):
            tie = Tie("attribute", m.ask or (kind.noun if kind is not None else ""))
        else:
            tie = Tie("refused", f"{field}: the hand-off has no words")
        self._ties[edge.id] = tie
        return tie

    def _owner(self, focus: Focus, edge: GEdge) -> str:
        """The words that tie the next result to the focus (see `tie`); at most one hand-off through an
        attribute a chain ('the route of the dearest dish on the route of X' reads as no question)."""
        tie = self.tie(edge)
        if tie.how == "refused":
            raise NotInstantiable(tie.words)
        if tie.how == "own":
            self._no_detour(focus, edge)
        for b in edge.bindings:
            if any(
                str(r.get(b.field, "")).strip() in self.start_values
                or self.says(r.get(b.field))
                or (b.pipe and self.says(_piped(r.get(b.field), b.pipe)))
                for r in focus.rows
            ):  # a 법정동's 시군구 is in its full name: '경기도 여주시 세종대왕면 마래리' says '경기도 여주시'
                raise NotInstantiable(f"{focus.tool}.{b.field}: hands on a value the question already gives")
            documented = {
                str(v).strip() for v in self.examples.get(self.sigs[edge.consumer].name, {}).get(b.param, ())
            }
            if any(str(r.get(b.field, "")).strip() in documented for r in focus.rows):
                # a policy that skips the lookup sends the documented example, and would get the same rows
                raise NotInstantiable(f"{focus.tool}.{b.field}: hands on {b.param}'s documented example")
        if tie.how == "attribute":
            self.attribute_hops += 1
            if self.attribute_hops > 1:
                raise NotInstantiable("a second hand-off through an attribute")
        return self._owner_words(focus, edge, tie)

    def _no_detour(self, focus: Focus, edge: GEdge) -> None:
        """An entity's own id handed on must not be one a row the chain stood on before held already: the company
        outline gives DART's corp_code, so outline -> dart_company -> (stock_code) dart_corp_code -> statements
        is a detour of two calls that the statements could skip ('X의 기업개황의 공시대상회사 고유번호 목록의 재무제표').
        A fan-out is a detour only when every value it hands on was held before (the routes through a route's last
        stop may include the route itself)."""
        values = [
            {str(r.get(b.field)).strip() for b in edge.bindings if r.get(b.field) not in (None, "")}
            for r in focus.rows
        ]
        before = {str(v).strip() for row in self.visited for v in row.values() if isinstance(v, str | int)}
        if values and all(v & before for v in values):
            raise NotInstantiable(
                f"{focus.tool}.{edge.bindings[0].field}: a detour, a row the chain stood on held that value already"
            )

    def _owner_words(self, focus: Focus, edge: GEdge, tie: Tie) -> str:
        """The owner words of a hand-off that is not refused: the focus itself, its attribute ('X의 주소에
        해당하는'), or the place either lies in ('X의 주소가 속한 시군구')."""
        within = self._within(edge)
        said = focus.phrase if tie.how == "own" else of(focus.phrase, tie.words)
        if within:
            return f"{said}이(가) 속한 {within}"
        return said if tie.how == "own" or self._names_owner(edge) else f"{said}에 해당하는"

    def _broad(self, edge: GEdge) -> bool:
        """Whether the edge hands on, as it is, a value of a broad kind (kinds.yaml `broad`): the member's era
        leads to every bill of that era, which has nothing to do with the member ('X 의원의 재직 이력의 국회 대수에
        해당하는 대수별 의안'). A place cut to the 시도 it lies in is not refused: that is where X is."""
        b = edge.bindings[0]
        if b.pipe.startswith(("words(", "prefix(")):
            return False
        out = self.sigs[edge.producer].output(b.field)
        param = self.sigs[edge.consumer].param(b.param)
        names = (out.meaning.kind if out is not None and out.meaning else None, param.kind if param else None)
        return any(n is not None and n in self.kinds and self.kinds[n].broad for n in names)

    def _names_owner(self, edge: GEdge) -> bool:
        """Whether the handed field names someone with results of their own (kinds.yaml `owner`: a member)."""
        out = self.sigs[edge.producer].output(edge.bindings[0].field)
        kind = (
            self.kinds.get(out.meaning.kind) if out is not None and out.meaning and out.meaning.kind else None
        )
        return kind is not None and kind.owner

    def _topic_phrase(self, owner: str, tool: str, ctx: str = "") -> str:
        """How a question names `tool`'s result for `owner` ('X의 직원 현황', 'X의 주소에 해당하는 법정동')."""
        sig = self.sigs[tool]
        topic = sig.about.topic if sig.about is not None else sig.title
        if owner.endswith("해당하는"):
            return f"{owner} {ctx} {topic}".replace("  ", " ")
        return of(owner, topic, ctx)

    def phrase_after(self, focus: Focus, edge: GEdge) -> str:
        """How the question would name what `edge`'s consumer finds for the focus row, without calling it or
        counting the hand-off (Cond's branch not taken): as `_owner` and `_result_focus` would say it."""
        tie = self.tie(edge)
        if tie.how == "refused":
            raise NotInstantiable(tie.words)
        return self._topic_phrase(self._owner_words(focus, edge, tie), edge.consumer)

    def _within(self, edge: GEdge) -> str:
        """The unit a transformed hand-off names ('시군구' when an address or a 법정동 is cut to its first two
        words): a 리's ordinances are its 시군구's, and the question says so. '' for a value handed as it is."""
        for b in edge.bindings:
            if not b.pipe.startswith(("words(", "prefix(")):  # a place cut to the place it lies in
                continue
            param = self.sigs[edge.consumer].param(b.param)
            kind = self.kinds.get(param.kind) if param is not None and param.kind else None
            out = self.sigs[edge.producer].output(b.field)
            source = (
                self.kinds.get(out.meaning.kind)
                if out is not None and out.meaning and out.meaning.kind
                else None
            )
            if source is not None and param is not None and param.kind in source.renames:
                continue  # the same place named shorter ('경기도 가평군' -> '가평군'), not a place it lies in
            if kind is not None and kind.noun:
                return kind.noun.removesuffix(" 이름").removesuffix(" 코드")
        return ""

    def _hop_call(
        self, focus: Focus, edge: GEdge, call_id: str, literals: Mapping[str, Any]
    ) -> tuple[GoldCall, str]:
        sig = self.sigs[edge.consumer]
        args: dict[str, Any] = {
            b.param: From.model_validate({"from": focus.call, "path": focus.path(b.field, b.pipe)})
            for b in edge.bindings
        }
        args.update({k: v for k, v in literals.items() if k not in args})
        args, paged = self._paged(edge.consumer, args)
        ctx = self.context(sig, self._new_words(literals))
        return GoldCall(id=call_id, tool=edge.consumer, args=args, pages="all" if paged else None), ctx

    async def hop(self, focus: Focus, edge: GEdge, literals: Mapping[str, Any] | None = None) -> Focus:
        """The one focus row's values fill the consumer; its result is the new focus."""
        if not focus.single:
            raise NotInstantiable("a hop needs one row")
        sig = self.sigs[edge.consumer]
        lits = dict(literals) if literals is not None else self.literals(sig, edge.defaults)
        call_id = self.new_id()
        call, ctx = self._hop_call(focus, edge, call_id, lits)
        junction = self._junction(focus, edge, 1)
        owner = self._owner(focus, edge)  # before the call: a hand-off no question can say is not executed
        await self.run([call])
        self.edges.append(edge)
        self.junctions.append(junction)
        self.handed = list(focus.rows)
        self.visited += focus.rows
        if focus.narrowed is not None:
            self.features.add("drv")
        return self._result_focus(call_id, edge.consumer, owner, ctx)

    def _result_focus(self, call_id: str, tool: str, owner: str, ctx: str) -> Focus:
        result = self.walk.results[call_id]
        rows = rows_of(result)
        phrase = self._topic_phrase(owner, tool, ctx)
        sel = "record" if "record" in result else ("rows[0]" if len(rows) == 1 else "rows")
        total = result.get("total_count") if isinstance(result.get("total_count"), int) else len(rows)
        return Focus(call_id, tool, sel, rows, phrase, int(total))

    def first_page(self, tool: str) -> int | None:
        """The rows a call of `tool` shows when no page size is sent (the platform's default); None when the
        tool does not page (one call shows every row)."""
        paging = self.project.platform_of(tool).kopa.paging
        return paging.default_size if paging is not None and self.project.page_params(tool) else None

    def paged(self, focus: Focus) -> bool:
        """Whether reading the whole set takes more than the first page (a policy that never pages sees less)."""
        size = self.first_page(focus.tool)
        return size is not None and focus.total > size

    def on_first_page(self, focus: Focus, chosen: Sequence[dict[str, Any]]) -> bool:
        """Whether every chosen row is on the call's first page, where a policy that never pages finds it."""
        size = self.first_page(focus.tool)
        head = focus.rows[: size if size is not None else len(focus.rows)]
        return all(any(r is c for r in head) for c in chosen)

    def narrow(self, focus: Focus, keep: Literal["one", "few"], edge: GEdge | None = None) -> Focus:
        """A Drv reduction over a set (no call): the row at an extreme of a measure or date, or the rows past a
        threshold or of one category, so that one (or 2..φ) rows remain, not all of them on the first page (a
        policy that never pages would choose right). Codes are never pivots. Given the `edge` the rows will be
        handed along, only reductions whose rows the world holds a result for."""
        if focus.single or len(focus.rows) <= PHI:
            raise NotInstantiable("nothing to reduce: the set is small already")
        sig = self.sigs[focus.tool]
        noun = sig.about.noun if sig.about is not None else "항목"
        options: list[tuple[str, str, list[dict[str, Any]], str, str]] = []
        for out in sig.outputs:
            m = out.meaning
            if m is None or m.ask is None or m.role not in ("measure", "date", "enum", "order"):
                # an order reduces only where it has words: a route's stops in sequence (정류소 순번), not a
                # list's row number or the rank of a 법정동 among its siblings
                continue
            if m.role == "measure" and sig.about is not None and sig.about.rows == "kinds":
                continue  # account lines are not ranked by their amounts
            options += _reductions(focus.rows, out.name, m, keep, noun)
        options = [
            o
            for o in options
            if not self.on_first_page(focus, o[2]) and (edge is None or self._held(edge, o[2]))
        ]  # with `edge`: only a choice the world answers when it is handed on (the earliest filing may have
        # no document)
        if not options:
            raise NotInstantiable(
                f"no measure, date or category of {focus.tool} reduces its rows to {keep} past its first page"
            )
        selector, phrase, kept, reduction, pivot = self.rng.choice(options)
        if pivot:
            self.keep.append(pivot)
        j = Junction("drv", len(focus.rows), len(kept), focus.total, "", reduction, pivot)
        return Focus(
            focus.call,
            focus.tool,
            f"{focus.sel}{selector}",
            kept,
            f"{focus.phrase} 중 {phrase}",
            focus.total,
            j,
            list(focus.rows),
        )

    async def fan(self, focus: Focus, edge: GEdge) -> tuple[str, Focus]:
        """One call per focus row (2..φ rows, distinct values), in one step; the fan-out's call id and the set of
        items it answered (each item a row of the focus)."""
        n = len(focus.rows)
        first = edge.bindings[0].field
        if not 2 <= n <= PHI or len({str(r.get(first)) for r in focus.rows}) != n:
            raise NotInstantiable(f"a fan needs 2..{PHI} rows with distinct {first}")
        sig = self.sigs[edge.consumer]
        lits = self.literals(sig, edge.defaults)
        args: dict[str, Any] = {
            b.param: From.model_validate({"from": EACH, "path": b.field + (f" | {b.pipe}" if b.pipe else "")})
            for b in edge.bindings
        }
        args.update({k: v for k, v in lits.items() if k not in args})
        args, paged = self._paged(edge.consumer, args)
        call_id = self.new_id()
        each = From.model_validate({"from": focus.call, "path": focus.sel})
        call = GoldCall(
            id=call_id, tool=edge.consumer, args=args, for_each=each, pages="all" if paged else None
        )
        junction = self._junction(focus, edge, n)
        owner = self._owner(focus, edge)
        said = self._new_words(lits)
        await self.run([call])
        ctx = self.context(sig, said)
        self.edges.append(edge)
        self.junctions.append(junction)
        self.handed = list(focus.rows)
        self.visited += focus.rows
        self.features.add("fan")
        if focus.narrowed is not None:
            self.features.add("drv")
        topic = sig.about.topic if sig.about is not None else sig.title
        if owner.endswith("에 해당하는"):
            owner = owner.removesuffix("에 해당하는") + " 각각에 해당하는"
        else:
            owner += " 각각의"
        phrase = f"{owner} {ctx} {topic}".replace("  ", " ")
        return call_id, Focus(call_id, edge.consumer, "", focus.rows, phrase, n)

    async def pair(
        self, focus: Focus, first: GEdge, second: GEdge, lits: Sequence[Mapping[str, Any]]
    ) -> list[Focus]:
        """Two calls in one step on the focus row: two tools (Sem) or one tool with two literal values (Cmp)."""
        if not focus.single:
            raise NotInstantiable("a pair needs one row")
        calls: list[GoldCall] = []
        ctxs: list[str] = []
        for edge, lit in zip((first, second), lits, strict=True):
            call, ctx = self._hop_call(focus, edge, self.new_id(), lit)
            calls.append(call)
            ctxs.append(ctx)
        junction = self._junction(focus, first, 1)
        # the two sides hang side by side off the focus: through an attribute, that is one hand-off, not two
        before = self.attribute_hops
        owners = [self._owner(focus, first)]
        after, self.attribute_hops = self.attribute_hops, before
        owners.append(self._owner(focus, second))
        self.attribute_hops = max(after, self.attribute_hops)
        await self.run(calls)
        for edge in {first.id: first, second.id: second}.values():
            self.edges.append(edge)
        self.junctions.append(junction)
        self.handed = list(focus.rows)
        self.visited += focus.rows
        if focus.narrowed is not None:
            self.features.add("drv")
        return [
            self._result_focus(c.id, c.tool, owner, ctx)
            for c, ctx, owner in zip(calls, ctxs, owners, strict=True)
        ]

    def word(self, text: str) -> str:
        return sentence(text)


def _page_of(result: dict[str, Any]) -> int:
    size = result.get("page_size")
    return size if isinstance(size, int) and size > 0 else 10**9


def _piped(value: Any, pipe: str) -> Any:
    """The value an edge hands on through its transform (None when the transform does not apply)."""
    try:
        return apply(value, pipe)
    except ValueError:
        return None


def _reductions(
    rows: Sequence[dict[str, Any]], name: str, m: FieldMeaning, keep: Literal["one", "few"], noun: str
) -> list[tuple[str, str, list[dict[str, Any]], str, str]]:
    """(selector, phrase, kept rows, reduction kind, pivot words) for every reduction of `rows` by field `name`
    that keeps one row (keep='one') or 2..φ rows (keep='few'); ties never count as one."""
    out: list[tuple[str, str, list[dict[str, Any]], str, str]] = []
    ask = m.ask or name
    if m.role == "measure":
        vals = [(maybe_number(r.get(name)), r) for r in rows]
        nums = [(v, r) for v, r in vals if v is not None]
        if len(nums) < len(rows) // 2 or len({v for v, _ in nums}) < 3:
            return []
        ordered = sorted({v for v, _ in nums})
        if keep == "one":
            unit = parse_unit(m.unit) if m.unit else None
            counted = unit is not None and unit.dimension == "count"
            big, small = ("가장 많은", "가장 적은") if counted else ("가장 큰", "가장 작은")
            for which, value, word in (("max", ordered[-1], big), ("min", ordered[0], small)):
                kept = [r for v, r in nums if v == value]
                if len(kept) == 1:
                    out.append((f"[{name}=@{which}]", f"{ask}이(가) {word} {noun}", kept, which, ""))
        else:
            for pivot in ordered[-PHI:-1]:
                kept = [r for v, r in nums if v >= pivot]
                if 2 <= len(kept) <= PHI:
                    words = value_words(pivot, m)
                    sel = f"[{name}>={_plain(pivot)}]"
                    out.append((sel, f"{ask}이(가) {words} 이상인 {noun}", kept, "gte", words))
            for pivot in ordered[1:PHI]:
                kept = [r for v, r in nums if v <= pivot]
                if 2 <= len(kept) <= PHI:
                    words = value_words(pivot, m)
                    sel = f"[{name}<={_plain(pivot)}]"
                    out.append((sel, f"{ask}이(가) {words} 이하인 {noun}", kept, "lte", words))
    elif m.role == "date":
        dated = [(str(r.get(name) or ""), r) for r in rows if str(r.get(name) or "").strip()]
        days = sorted({d for d, _ in dated})
        if len(days) < 3:
            return []
        if keep == "one":
            for which, day, word in (("max", days[-1], "가장 최근인"), ("min", days[0], "가장 이른")):
                kept = [r for d, r in dated if d == day]
                if len(kept) == 1:
                    out.append((f"[{name}=@{which}]", f"{ask}이(가) {word} {noun}", kept, "latest", ""))
        else:
            for day in days[-PHI:-1]:
                kept = [r for d, r in dated if d > day]
                if 2 <= len(kept) <= PHI:
                    words = value_words(day, m)
                    out.append(
                        (f"[{name}>{quote(day)}]", f"{ask}이(가) {words} 이후인 {noun}", kept, "after", words)
                    )
    elif m.role == "order" and keep == "one":  # a position along a sequence: a route's 15th stop, its last
        places = [(maybe_number(r.get(name)), r) for r in rows]
        ranks = sorted({v for v, _ in places if v is not None})
        if len(ranks) < PHI or any(v is None for v, _ in places):
            return []
        for rank in ranks:
            kept = [r for v, r in places if v == rank]
            if len(kept) == 1 and rank == int(rank) and rank > 0:
                word = "마지막" if rank == ranks[-1] else f"{int(rank)}번째"
                sel = f"[{name}=@max]" if word == "마지막" else f"[{name}={quote(kept[0].get(name))}]"
                out.append((sel, f"{word} {noun}", kept, "last" if word == "마지막" else "nth", ""))
    elif m.role == "enum":
        categories = sorted({str(r.get(name)) for r in rows if r.get(name) not in (None, "")})
        if len(categories) < 2:
            return []
        for category in categories:
            kept = [r for r in rows if str(r.get(name)) == category]
            if (keep == "one" and len(kept) == 1) or (keep == "few" and 2 <= len(kept) <= PHI):
                words = value_words(category, m)
                out.append(
                    (f"[{name}={quote(category)}]", f"{ask}이(가) {words}인 {noun}", kept, "eq", words)
                )
    return out


def _plain(d: Decimal) -> str:
    return format(d.normalize(), "f")

"""The task spec (`specs/tasks/<domain>/<id>.yaml`): a Korean query, the system state, the gold chain (steps of
calls that may run in parallel; arguments are literals from the query or references into earlier results), what
decides the reward, and the typed answer. `kopa-gen build` executes every gold chain in the sandbox, lints it
(kopa_gen/gold/lint.py) and writes generated/fixtures/<domain>/<id>.json. docs/tasks.md is the guide."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from kopa_gen.language.answers import Answer
from kopa_gen.language.diagnostics import Diagnostic, Diagnostics
from kopa_gen.language.functions import PathError
from kopa_gen.language.kopa import DOMAIN_ID, StrictModel
from kopa_gen.language.modes import TOOLS_MODES, ToolsMode
from kopa_gen.language.pathsyntax import parse, references
from kopa_gen.language.source import YamlError, load_yaml, validate_model

EACH = "each"

AnswerMode = Literal["submit", "text"]
"""How an episode answers: `submit` through the `submit_answer` tool, typed by the task's answer (the default,
and the training reward's mode); `text` in prose ending with one `최종 답:` line (the paper's setting)."""
ANSWER_MODES: tuple[AnswerMode, ...] = ("submit", "text")
"""The call id a fan-out call's arguments use for the current item of its `for_each`."""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class From(StrictModel):
    """A value taken from an earlier gold call's result, e.g. {from: corp, path: "rows[stock_code=005930].corp_code"}.
    The path language (fields, selectors, functions) is in docs/tasks.md and kopa_gen/runtime/paths.py."""

    call: str = Field(
        alias="from", description="Id of an earlier gold call (`each`: the item of a for_each)."
    )
    path: str = Field(
        default="",
        description="Path expression into that call's result ('' = the whole result or item).",
    )
    with_: dict[str, From] = Field(
        default_factory=dict,
        alias="with",
        description="References the path uses as {name} (a filter value or a function argument from another call).",
    )

    @field_validator("path")
    @classmethod
    def _parses(cls, path: str) -> str:
        if path.strip():
            try:
                parse(path.strip())
            except PathError as exc:
                raise ValueError(str(exc)) from None
        return path

    @model_validator(mode="after")
    def _refs_given(self) -> From:
        if self.path.strip():
            used = references(parse(self.path.strip()))
            if used - set(self.with_):
                missing = ", ".join(sorted(used - set(self.with_)))
                raise ValueError(f"the path uses {{{missing}}}; give it under `with:`")
            if set(self.with_) - used:
                unused = ", ".join(sorted(set(self.with_) - used))
                raise ValueError(f"`with` names {unused}, which the path never uses as {{name}}")
        elif self.with_:
            raise ValueError("`with` needs a path that uses its names as {name}")
        return self

    def sources(self) -> list[From]:
        """This reference and every reference nested in its `with`, outermost first."""
        out = [self]
        for ref in self.with_.values():
            out.extend(ref.sources())
        return out


class Template(StrictModel):
    """Text built from several references, e.g. {template: "{lg},{hyundai}", with: {lg: {from: ..}, hyundai: ..}}.
    Values are written as text (numbers without a needless '.0'); `{{` and `}}` are literal braces."""

    template: str = Field(description="Text with {name} placeholders.")
    with_: dict[str, From] = Field(
        alias="with", min_length=1, description="The reference behind each placeholder."
    )

    @model_validator(mode="after")
    def _placeholders(self) -> Template:
        used = set(_PLACEHOLDER.findall(self.template.replace("{{", "").replace("}}", "")))
        if used - set(self.with_):
            raise ValueError(f"placeholders {sorted(used - set(self.with_))} have no reference under `with`")
        if set(self.with_) - used:
            raise ValueError(f"`with` names {sorted(set(self.with_) - used)}, which the template never uses")
        return self

    def sources(self) -> list[From]:
        return [s for ref in self.with_.values() for s in ref.sources()]


CombineOp = Literal[
    "list",
    "sum",
    "diff",
    "absdiff",
    "product",
    "ratio",
    "percent",
    "change",
    "avg",
    "max",
    "min",
    "argmax",
    "argmin",
]
_ARITHMETIC = ("sum", "diff", "absdiff", "product", "ratio", "percent", "change", "avg", "max", "min")
_TWO = ("diff", "absdiff", "ratio", "percent", "change")


class Combine(StrictModel):
    """An answer built from several gold calls (EDGE's Fan/Sem/Cmp tasks, arithmetic between results), e.g.
    {op: argmax, of: [{from: a, path: ...}, {from: b, path: ...}], labels: [{from: a, path: ...}, ...]} or
    {op: percent, of: [{from: bond, path: ...}, {from: price, path: ...}], digits: 1}."""

    op: CombineOp = Field(
        description="list: the values in order; sum; diff: the first minus the second; absdiff: |first - second|; "
        "product; ratio: the first divided by the second; percent: the first as a percentage of the second; "
        "change: the percentage change from the second to the first ((first - second) / second x 100); avg; "
        "max / min: the largest / smallest value; argmax / argmin: the label of the largest / smallest value."
    )
    of: list[From] = Field(
        min_length=2, description="The values combined, each one value taken from a gold call's result."
    )
    labels: list[From] | None = Field(
        default=None,
        description="What each value stands for, in the order of `of`, each taken from a result (argmax / argmin "
        "only, and required there).",
    )
    digits: int | None = Field(
        default=None,
        ge=0,
        le=6,
        description="Round the result half up to this many decimals (arithmetic ops only; say it in the query: "
        "'소수 첫째 자리까지').",
    )
    tie_break: Literal["first", "last"] | None = Field(
        default=None,
        description="argmax / argmin only: which label a tie goes to, in the order of `of`. Without one a tie is an "
        "error (no single answer); with one, the query must say how a tie is decided.",
    )

    @model_validator(mode="after")
    def _shape(self) -> Combine:
        if self.op in ("argmax", "argmin"):
            if self.labels is None or len(self.labels) != len(self.of):
                raise ValueError(
                    f"op {self.op} needs `labels`, one reference for each of the {len(self.of)} values"
                )
        elif self.labels is not None:
            raise ValueError(f"`labels` belong to argmax / argmin only; remove them for op {self.op}")
        elif self.tie_break is not None:
            raise ValueError(f"`tie_break` belongs to argmax / argmin only; remove it for op {self.op}")
        if self.op in _TWO and len(self.of) != 2:
            raise ValueError(f"op {self.op} takes exactly 2 values (first and second), got {len(self.of)}")
        if self.digits is not None and self.op not in _ARITHMETIC:
            raise ValueError(f"`digits` rounds a number; op {self.op} does not give one")
        return self

    def sources(self) -> list[From]:
        return [s for ref in [*self.of, *(self.labels or [])] for s in ref.sources()]


def _answer_kind(value: Any) -> str:
    """`op` marks a Combine; anything else is read, and its errors reported, as a From (one branch's errors only,
    not both branches' of a plain union)."""
    if isinstance(value, dict):
        return "Combine" if "op" in value else "From"
    return "Combine" if isinstance(value, Combine) else "From"


AnswerFrom = Annotated[
    Annotated[From, Tag("From")] | Annotated[Combine, Tag("Combine")], Discriminator(_answer_kind)
]

Literal_ = str | int | float | bool | list[str]


def _arg_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "template" if "template" in value else "from"
    if isinstance(value, Template):
        return "template"
    return "from" if isinstance(value, From) else "literal"


ArgValue = Annotated[
    Annotated[From, Tag("from")] | Annotated[Template, Tag("template")] | Annotated[Literal_, Tag("literal")],
    Discriminator(_arg_kind),
]


def answer_sources(answer_from: From | Combine) -> list[From]:
    """The references an answer is derived from: the one `From`, or a `Combine`'s `of` then `labels`; nested
    `with` references included."""
    return answer_from.sources()


def arg_sources(value: Any) -> list[From]:
    """The references inside one argument value (none for a literal)."""
    return value.sources() if isinstance(value, From | Template) else []


class Alternative(StrictModel):
    """Another call that serves the same purpose in the chain (e.g. DART's company record instead of FSC's corporate
    outline for an address); for ACTION, an agent call matching it matches the gold call."""

    tool: str
    args: dict[str, ArgValue] = Field(default_factory=dict)
    compare: list[str] | None = Field(
        default=None, description="Arguments compared (default: all but paging)."
    )


class GoldCall(StrictModel):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Name other calls and the answer refer to.")
    tool: str = Field(description="Tool name (generated/servers/<platform>/tools.json).")
    args: dict[str, ArgValue] = Field(
        default_factory=dict,
        description="Arguments: literals from the query, or references ({from, path}, {template, with}).",
    )
    compare: list[str] | None = Field(
        default=None,
        description="Arguments compared for ACTION correctness (default: every argument but paging; pages are "
        "compared by the rows they cover).",
    )
    for_each: From | None = Field(
        default=None,
        description="Fan-out: one call per value this reference selects (every matching row, never a hand-counted "
        "list), all in this step; the arguments use {from: each, path: ...} for the item. Later references see a "
        "list of {each: item, result: result}.",
    )
    pages: Literal["all"] | None = Field(
        default=None,
        description="`all`: page to the end (page 1, 2, ... until every row is read), as an agent must; later "
        "references see one result holding every row.",
    )
    alternatives: list[Alternative] = Field(
        default_factory=list, description="Other calls an agent may make instead (ACTION only)."
    )
    state: bool = Field(
        default=False,
        description="The call changes state that ENVIRONMENT checks but no result of it is referenced (write "
        "tools are marked so by their spec; set this only for a read call kept for its effect).",
    )

    def references(self) -> list[From]:
        """Every reference the call makes (for_each, arguments, alternatives), nested ones included."""
        out = list(self.for_each.sources()) if self.for_each is not None else []
        for value in self.args.values():
            out += arg_sources(value)
        for alt in self.alternatives:
            for value in alt.args.values():
                out += arg_sources(value)
        return out


class GoldStep(StrictModel):
    """Calls that do not depend on each other and may run in parallel."""

    calls: list[GoldCall] = Field(min_length=1)


class SystemState(StrictModel):
    today: dt.date = Field(description="The fixed 'today' the agent is told.")
    keys: list[str] = Field(description="Platforms whose API keys the agent holds.")
    context: str = Field(default="", description="Preset context added to the system prompt.")


Basis = Literal["RESPONSE", "ENVIRONMENT"]


class Task(StrictModel):
    id: str = Field(
        pattern=r"^[a-z]+-[0-9]{3,5}$",
        description="Task id, e.g. fin-001 (a synthesized set may need more digits: mixed-0412); the file is named after it.",
    )
    domain: str = Field(pattern=DOMAIN_ID, description="One of specs/domains.yaml; the task's folder.")
    query: str = Field(min_length=1, description="The user's request in Korean.")
    system: SystemState
    tools: list[str] | None = Field(
        default=None,
        description="Tools exposed to the agent: the gold tools and plausible others (default: every tool of the "
        "platforms the task uses).",
    )
    tools_modes: list[ToolsMode] = Field(
        default_factory=lambda: list(TOOLS_MODES),
        min_length=1,
        description="The tool modes (`--tools-mode`) the task is validated in, and so may run in: the build "
        "walks its gold chain as listed (task), and in search mode finds every gold tool that is not an entry "
        "tool with a search for its title, as the oracle does. A run in another mode says so in its report "
        "(default: all three).",
    )
    max_calls: int = Field(ge=1, description="The episode stops after this many tool calls.")
    reward: list[Basis] = Field(
        min_length=1,
        description="What decides pass/fail and the training reward: RESPONSE (the stated answer), ENVIRONMENT "
        "(the state the gold writes), or both. ACTION is always reported and never decides.",
    )
    gold: list[GoldStep] = Field(min_length=1, description="The reference chain, step by step.")
    answer: Answer | None = Field(default=None, description="The typed gold answer (required for RESPONSE).")
    answer_from: AnswerFrom | None = Field(
        default=None,
        description="How the answer follows from the gold results (one value, or several combined); "
        "the build checks the declared answer against it.",
    )

    @field_validator("reward", mode="before")
    @classmethod
    def _no_action(cls, value: Any) -> Any:
        if isinstance(value, list) and "ACTION" in value:
            raise ValueError(
                "ACTION is always reported and never decides the reward; remove it from `reward` "
                "(keep RESPONSE and/or ENVIRONMENT)"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        if ("RESPONSE" in self.reward) != (self.answer is not None):
            raise ValueError("a task has an `answer` exactly when it is scored on RESPONSE")
        if (self.answer is None) != (self.answer_from is None):
            raise ValueError(
                "give `answer_from` with `answer`, so the build can check the answer against the chain"
            )
        seen: set[str] = set()
        for i, step in enumerate(self.gold):
            ids = [c.id for c in step.calls]
            for call in step.calls:
                for ref in call.references():
                    if ref.call == EACH:
                        if call.for_each is None:
                            raise ValueError(
                                f"gold[{i}] {call.id}: `from: each` needs `for_each` on the call"
                            )
                        continue
                    if ref.call not in seen:
                        where = "the same step" if ref.call in ids else "no earlier step"
                        raise ValueError(f"gold[{i}] {call.id} refers to {ref.call!r}, found in {where}")
                if call.for_each is not None and any(r.call == EACH for r in call.for_each.sources()):
                    raise ValueError(f"gold[{i}] {call.id}: for_each cannot refer to its own item")
            doubled = {c for c in ids if ids.count(c) > 1} | (seen & set(ids))
            if doubled or EACH in ids:
                raise ValueError(f"gold[{i}] reuses call ids {sorted(doubled | ({EACH} & set(ids)))}")
            seen |= set(ids)
        for source in answer_sources(self.answer_from) if self.answer_from is not None else []:
            if source.call not in seen:
                raise ValueError(f"answer_from refers to unknown call {source.call!r}")
        return self

    def calls(self) -> list[GoldCall]:
        return [c for step in self.gold for c in step.calls]


def load_tasks(
    root: Path, known_tools: set[str], folder: Path | None = None, domains: list[str] | None = None
) -> tuple[list[tuple[str, Task]], list[Diagnostic]]:
    """Every <domain>/<id>.yaml under `folder` (default specs/tasks; a synthesized set's tasks/ folder works the
    same), validated (fields, references, paths, tool names); returns (file, task) pairs and all diagnostics."""
    diags = Diagnostics()
    out: list[tuple[str, Task]] = []
    folder = folder or root / "specs" / "tasks"
    for path in sorted(folder.glob("*/*.yaml")):
        try:
            src = load_yaml(path, root)
        except YamlError as exc:
            diags.items.extend(exc.diagnostics)
            continue
        task = validate_model(Task, src.data, src, (), diags)
        if task is None:
            continue
        if domains and task.domain not in domains:
            diags.items.append(
                src.diag(
                    ("domain",),
                    f"unknown domain {task.domain!r}; declared in specs/domains.yaml: {', '.join(domains)}",
                )
            )
            continue
        if path.stem != task.id or path.parent.name != task.domain:
            diags.items.append(src.diag(("id",), f"file must be specs/tasks/{task.domain}/{task.id}.yaml"))
            continue
        bad = False
        for i, step in enumerate(task.gold):
            for j, call in enumerate(step.calls):
                tools = [(("gold", i, "calls", j, "tool"), call.tool)] + [
                    (("gold", i, "calls", j, "alternatives", k, "tool"), alt.tool)
                    for k, alt in enumerate(call.alternatives)
                ]
                for loc, tool in tools:
                    if tool not in known_tools:
                        hint = ", ".join(
                            sorted(t for t in known_tools if t.split("_")[0] == tool.split("_")[0])
                        )
                        diags.items.append(src.diag(loc, f"unknown tool {tool!r}; known: {hint or 'none'}"))
                        bad = True
        for k, tool in enumerate(task.tools or []):
            if tool not in known_tools:
                diags.items.append(src.diag(("tools", k), f"unknown tool {tool!r}"))
                bad = True
        if not bad:
            out.append((src.file, task))
    return out, diags.items

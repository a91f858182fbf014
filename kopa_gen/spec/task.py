"""The task spec (`specs/tasks/<domain>/<id>.yaml`): a Korean query, the system state, the gold chain (steps of
calls that may run in parallel, arguments that reference earlier results), the reward basis and the typed answer.
`kopa-gen build` executes every gold chain in the sandbox and writes generated/fixtures/<domain>/<id>.json."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from kopa_gen.evaluate.answers import Answer
from kopa_gen.spec.diagnostics import Diagnostic, Diagnostics
from kopa_gen.spec.kopa import Domain, StrictModel
from kopa_gen.spec.source import YamlError, load_yaml, validate_model


class From(StrictModel):
    """A value taken from an earlier gold call's result, e.g. {from: corp, path: rows[stock_code=005930].corp_code}.
    Paths: kopa_gen/runtime/paths.py (fields, [index], [*], [field=value], [field>=value], [field=@max],
    max/min/sum/count/first/last/mode)."""

    call: str = Field(alias="from", description="id of an earlier gold call.")
    path: str = Field(description="Path into that call's tool result.")


CombineOp = Literal["list", "sum", "diff", "argmax", "argmin"]


class Combine(StrictModel):
    """An answer built from several gold calls (EDGE's Fan/Sem/Cmp tasks), e.g.
    {op: argmax, of: [{from: a, path: ...}, {from: b, path: ...}], labels: [삼성전자, SK하이닉스]}."""

    op: CombineOp = Field(
        description="list: the values in order; sum: their sum; diff: the first minus the second; "
        "argmax / argmin: the label of the largest / smallest value."
    )
    of: list[From] = Field(
        min_length=2, description="The values combined, each one value taken from a gold call's result."
    )
    labels: list[str] | None = Field(
        default=None,
        description="What each value stands for, in the order of `of` (argmax / argmin only, and required there).",
    )

    @model_validator(mode="after")
    def _shape(self) -> Combine:
        if self.op in ("argmax", "argmin"):
            if self.labels is None or len(self.labels) != len(self.of):
                raise ValueError(f"op {self.op} needs `labels`, one for each of the {len(self.of)} values")
        elif self.labels is not None:
            raise ValueError(f"`labels` belong to argmax / argmin only; remove them for op {self.op}")
        if self.op == "diff" and len(self.of) != 2:
            raise ValueError(f"op diff takes exactly 2 values (first minus second), got {len(self.of)}")
        return self


def _answer_kind(value: Any) -> str:
    """`op` marks a Combine; anything else is read, and its errors reported, as a From (one branch's errors only,
    not both branches' of a plain union)."""
    if isinstance(value, dict):
        return "Combine" if "op" in value else "From"
    return "Combine" if isinstance(value, Combine) else "From"


AnswerFrom = Annotated[
    Annotated[From, Tag("From")] | Annotated[Combine, Tag("Combine")], Discriminator(_answer_kind)
]


def answer_sources(answer_from: From | Combine) -> list[From]:
    """The gold values an answer is derived from: the one `From`, or a `Combine`'s `of`, in order."""
    return [answer_from] if isinstance(answer_from, From) else list(answer_from.of)


ArgValue = From | str | int | float | bool | list[str]


class GoldCall(StrictModel):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Name other calls and the answer refer to.")
    tool: str = Field(description="Tool name (generated/servers/<platform>/tools.json).")
    args: dict[str, ArgValue] = Field(
        default_factory=dict, description="Arguments: literals or {from, path}."
    )
    compare: list[str] | None = Field(
        default=None, description="Arguments compared for ACTION correctness (default: all of them)."
    )


class GoldStep(StrictModel):
    """Calls that do not depend on each other and may run in parallel."""

    calls: list[GoldCall] = Field(min_length=1)


class SystemState(StrictModel):
    today: dt.date = Field(description="The fixed 'today' the agent is told.")
    keys: list[str] = Field(description="Platforms whose API keys the agent holds.")
    context: str = Field(default="", description="Preset context added to the system prompt.")


Basis = Literal["RESPONSE", "ENVIRONMENT", "ACTION"]


class Task(StrictModel):
    id: str = Field(
        pattern=r"^[a-z]+-[0-9]{3}$", description="Task id, e.g. fin-001; the file is named after it."
    )
    domain: Domain
    query: str = Field(min_length=1, description="The user's request in Korean.")
    system: SystemState
    tools: list[str] | None = Field(
        default=None,
        description="Tools exposed to the agent (default: every tool of the gold chain's platforms).",
    )
    max_calls: int = Field(ge=1, description="The episode stops after this many tool calls.")
    reward: list[Basis] = Field(min_length=1, description="Axes the task is scored on; ACTION never alone.")
    gold: list[GoldStep] = Field(min_length=1, description="The reference chain, step by step.")
    answer: Answer | None = Field(default=None, description="The typed gold answer (required for RESPONSE).")
    answer_from: AnswerFrom | None = Field(
        default=None,
        description="How the answer follows from the gold results (one value, or several combined); "
        "the build checks they agree.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        if set(self.reward) == {"ACTION"}:
            raise ValueError("ACTION is never used alone; add RESPONSE or ENVIRONMENT")
        if ("RESPONSE" in self.reward) != (self.answer is not None):
            raise ValueError("a task has an `answer` exactly when it is scored on RESPONSE")
        if (self.answer is None) != (self.answer_from is None):
            raise ValueError(
                "give `answer_from` with `answer`, so the build can check the answer against the chain"
            )
        seen: set[str] = set()
        for i, step in enumerate(self.gold):
            ids = {c.id for c in step.calls}
            for call in step.calls:
                for name, value in call.args.items():
                    if isinstance(value, From) and value.call not in seen:
                        where = "the same step" if value.call in ids else "no earlier step"
                        raise ValueError(
                            f"gold[{i}] {call.id}.{name} refers to {value.call!r}, found in {where}"
                        )
            if seen & ids:
                raise ValueError(f"gold[{i}] reuses call ids {sorted(seen & ids)}")
            seen |= ids
        for source in answer_sources(self.answer_from) if self.answer_from is not None else []:
            if source.call not in seen:
                raise ValueError(f"answer_from refers to unknown call {source.call!r}")
        return self

    def calls(self) -> list[GoldCall]:
        return [c for step in self.gold for c in step.calls]


def load_tasks(
    root: Path, known_tools: set[str], folder: Path | None = None
) -> tuple[list[tuple[str, Task]], list[Diagnostic]]:
    """Every <domain>/<id>.yaml under `folder` (default specs/tasks; a synthesized set's tasks/ folder works the
    same), validated (fields, references, tool names); returns (file, task) pairs and all diagnostics."""
    diags = Diagnostics()
    out: list[tuple[str, Task]] = []
    folder = folder or root / "specs" / "tasks"
    for path in sorted(folder.glob("*/*.yaml")):
        try:
            src = load_yaml(path, root)
        except YamlError as exc:
            diags.items.append(exc.diagnostic)
            continue
        task = validate_model(Task, src.data, src, (), diags)
        if task is None:
            continue
        if path.stem != task.id or path.parent.name != task.domain.value:
            diags.items.append(
                src.diag(("id",), f"file must be specs/tasks/{task.domain.value}/{task.id}.yaml")
            )
            continue
        bad = False
        for i, step in enumerate(task.gold):
            for j, call in enumerate(step.calls):
                if call.tool not in known_tools:
                    hint = ", ".join(
                        sorted(t for t in known_tools if t.split("_")[0] == call.tool.split("_")[0])
                    )
                    diags.items.append(
                        src.diag(
                            ("gold", i, "calls", j, "tool"), f"unknown tool {call.tool!r}; known: {hint}"
                        )
                    )
                    bad = True
        for k, tool in enumerate(task.tools or []):
            if tool not in known_tools:
                diags.items.append(src.diag(("tools", k), f"unknown tool {tool!r}"))
                bad = True
        if not bad:
            out.append((src.file, task))
    return out, diags.items

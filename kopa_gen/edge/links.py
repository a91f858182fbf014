"""Typed links between tools: a producer's response field can fill a consumer's parameter only when both carry
the same kind of value (specs/kinds.yaml, meaning.yaml), or when the field's kind transforms into the
parameter's (`to:` — an address into its 시군구 name, a 법정동코드 into its 시군구 code). An id of one thing never
fills a parameter that asks for an id of another: what a scorer proposes across kinds is rejected, with the
reason, before anything runs.

    links(company, region_districts, kinds)
      -> [Link(param='locatadd_nm', field='adres', pipe='words(0, 2)')]      # address -> sigungu_name
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kopa_gen.edge.signatures import OutField, Param, ToolSig
from kopa_gen.language.meaning import Kind
from kopa_gen.project import Project
from kopa_gen.runtime.paths import PathError, evaluate

HANDED = frozenset({"id", "code", "name", "date", "year", "text", "enum", "time"})
"""Roles whose values are handed on (a measure or a coordinate is asked or compared, never an argument)."""


@dataclass(frozen=True)
class Link:
    """One typed binding: `param` of the consumer takes `field` of the producer, through `pipe` ('' = as is)."""

    param: str
    field: str
    pipe: str = ""


def kind_table(project: Project) -> dict[str, Kind]:
    """Every kind the project declares: the shared ones and each platform's own."""
    table = dict(project.kinds.kinds) if project.kinds is not None else {}
    for _, meaning in project.meanings:
        table.update(meaning.kinds)
    return table


def transform(field_kind: str | None, param_kind: str | None, kinds: Mapping[str, Kind]) -> str | None:
    """The pipe that turns a `field_kind` value into a `param_kind` one: '' when they are the same kind, the
    declared transform when there is one, None when the two kinds do not link (or either is unknown)."""
    if field_kind is None or param_kind is None:
        return None
    if field_kind == param_kind:
        return ""
    kind = kinds.get(field_kind)
    return kind.to.get(param_kind) if kind is not None else None


def fits(out: OutField, param: Param, kinds: Mapping[str, Kind]) -> str | None:
    """The pipe through which `out` fills `param`, or None when it may not."""
    if param.paging or out.meaning is None or out.meaning.role not in HANDED:
        return None
    return transform(out.kind, param.kind, kinds)


def echoed(producer: ToolSig) -> frozenset[str]:
    """Kinds the producer is required to be given: a field of one of them only echoes its input (every DART report
    returns the corp_code it was asked about), so handing it on is no new step."""
    return frozenset(p.kind for p in producer.bindable if p.required and p.kind is not None)


def links(producer: ToolSig, consumer: ToolSig, kinds: Mapping[str, Kind]) -> list[Link]:
    """Every typed binding from the producer's fields to the consumer's parameters, consumer parameter order,
    and for one parameter the same-kind fields before transformed ones. A field that echoes a required input of
    the producer links nothing."""
    if producer.name == consumer.name or consumer.effect != "read":
        return []
    out: list[Link] = []
    echo = echoed(producer)
    for param in consumer.bindable:
        found = [
            (pipe, f.name)
            for f in producer.outputs
            if f.kind not in echo and (pipe := fits(f, param, kinds)) is not None
        ]
        out += [
            Link(param.name, name, pipe) for pipe, name in sorted(found, key=lambda x: (x[0] != "", x[1]))
        ]
    return out


def literal_values(param: Param, examples: Mapping[str, Any]) -> tuple[str | int, ...]:
    """Values a query can state for an unbound parameter: its labelled values, else the platform's examples when
    the meaning says how to phrase them; () when the parameter cannot be given literally."""
    meaning = param.meaning
    if meaning is None:
        return ()
    if meaning.labels:
        return tuple(meaning.labels)
    if meaning.say is None:
        return ()
    return tuple(examples.get(param.name, ()))


def apply(value: Any, pipe: str) -> Any:
    """A value sent through a transform pipe; the value itself for ''."""
    if not pipe:
        return value
    try:
        return evaluate({"value": value}, f"value | {pipe}")
    except PathError as exc:
        raise ValueError(f"transform {pipe!r} of {value!r}: {exc}") from exc

"""Tool signatures: what EDGE knows about a tool before executing anything. Read from the frozen tools.json (the
schemas agents see) and the platform spec (domain, paging, effect), so the graph is built over exactly the tools
a model is given."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kopa_gen.language.diagnostics import NotFound
from kopa_gen.language.meaning import FieldMeaning, Meaning, ParamMeaning, ToolMeaning
from kopa_gen.project import Project
from kopa_gen.runtime.session import frozen_tools


@dataclass(frozen=True)
class Param:
    """One tool argument."""

    name: str
    type: str
    required: bool
    description: str
    pattern: str | None = None
    enum: tuple[str, ...] = ()
    maximum: int | None = None
    paging: bool = False  # page number or size: never the target of a binding (the agent pages)
    meaning: ParamMeaning | None = field(default=None, compare=False)  # its kind and how a query says it

    @property
    def kind(self) -> str | None:
        return self.meaning.kind if self.meaning is not None else None


@dataclass(frozen=True)
class OutField:
    """One field of a tool's result rows (or record). `path` selects it from the structured result."""

    name: str
    description: str
    many: bool  # a field of list rows (rows[*].name) rather than of a record
    meaning: FieldMeaning | None = field(default=None, compare=False)  # role, kind, unit, question phrase

    @property
    def kind(self) -> str | None:
        return self.meaning.kind if self.meaning is not None else None

    @property
    def path(self) -> str:
        return f"rows[*].{self.name}" if self.many else f"record.{self.name}"


@dataclass(frozen=True)
class ToolSig:
    name: str
    platform: str
    domain: str  # the platform's benchmark domain ("local" for the workspace)
    title: str
    description: str
    effect: str  # read | write
    shape: str  # list | record | file
    params: tuple[Param, ...]
    outputs: tuple[OutField, ...]
    page_size: Param | None  # the page-size argument, when the tool pages
    start_args: tuple[tuple[str, str], ...] = ()  # x-kopa.start: what a first call adds
    about: ToolMeaning | None = field(
        default=None, compare=False
    )  # topic, row noun and counter (meaning.yaml)

    @property
    def start(self) -> dict[str, str]:
        return dict(self.start_args)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def output(self, name: str) -> OutField | None:
        return next((f for f in self.outputs if f.name == name), None)

    @property
    def bindable(self) -> tuple[Param, ...]:
        """Arguments an upstream value can fill (everything but paging)."""
        return tuple(p for p in self.params if not p.paging)

    def text(self) -> str:
        """The signature as one text for retrieval: name, title, description, arguments and result fields."""
        ins = "; ".join(f"{p.name} ({p.description})" for p in self.bindable)
        outs = "; ".join(f"{f.name} ({f.description})" for f in self.outputs)
        return f"{self.name}: {self.title}. {self.description}\ninputs: {ins}\noutputs: {outs}"


def _param(
    name: str,
    schema: dict[str, Any],
    required: bool,
    paging: tuple[str, ...] = (),
    meaning: ParamMeaning | None = None,
) -> Param:
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return Param(
        name=name,
        type=str(kind),
        required=required,
        description=str(schema.get("description", "")),
        pattern=schema.get("pattern"),
        enum=tuple(str(v) for v in schema.get("enum", ())),
        maximum=schema.get("maximum"),
        paging=name in paging,
        meaning=None if name in paging else meaning,
    )


def _outputs(tool: dict[str, Any], meaning: Meaning | None) -> tuple[OutField, ...]:
    schema = tool["outputSchema"]
    props = schema.get("properties", {})
    if "rows" in props:
        item, many = props["rows"].get("items", {}), True
    elif "record" in props:
        item, many = props["record"], False
    else:
        return ()
    for option in item.get("anyOf", [item]):
        ref = option.get("$ref")
        if ref:
            item = schema["$defs"][ref.rsplit("/", 1)[-1]]
            break
    return tuple(
        OutField(
            name,
            str(spec.get("description", "")),
            many,
            meaning.field(tool["name"], name) if meaning is not None else None,
        )
        for name, spec in item.get("properties", {}).items()
    )


def _title(tool: dict[str, Any]) -> str:
    return str(tool.get("title") or tool["description"].split("\n", 1)[0])


def load_signatures(project: Project, platforms: list[str] | None = None) -> list[ToolSig]:
    """Every tool of the given platforms (default: every platform with a benchmark domain), in name order."""
    chosen = [
        p
        for p in project.platforms
        if (platforms is None and p.kopa.domain is not None) or (platforms is not None and p.id in platforms)
    ]
    if platforms is not None:
        missing = sorted(set(platforms) - {p.id for p in chosen})
        if missing:
            raise NotFound(f"unknown platform(s) {missing}; known: {[p.id for p in project.platforms]}")
    sigs: list[ToolSig] = []
    for platform in chosen:
        path = project.root / "generated" / "servers" / platform.id / "tools.json"
        ops = {op.tool: op for op in platform.operations}
        meaning = project.meaning(platform.id)
        for tool in frozen_tools(path):
            schema = tool["inputSchema"]
            required = set(schema.get("required", []))
            paging = project.page_params(tool["name"]) or ()
            params = tuple(
                _param(n, s, n in required, paging, meaning.param(tool["name"], n) if meaning else None)
                for n, s in schema.get("properties", {}).items()
            )
            op = ops[tool["name"]]
            size = next((p for p in params if paging and p.name == paging[1]), None)
            description = re.sub(r"\s+", " ", tool["description"]).strip()
            sigs.append(
                ToolSig(
                    name=tool["name"],
                    platform=platform.id,
                    domain=platform.kopa.domain or "local",
                    title=_title(tool),
                    description=description,
                    effect=op.kopa.effect,
                    shape=op.kopa.shape,
                    params=params,
                    outputs=_outputs(tool, meaning),
                    page_size=size,
                    start_args=tuple(sorted(op.kopa.start.items())),
                    about=meaning.tools.get(tool["name"]) if meaning is not None else None,
                )
            )
    return sorted(sigs, key=lambda s: s.name)


def spec_hash(project: Project, platforms: Sequence[str]) -> str:
    """sha256 over the platform specs and meaning files (and the kinds) a graph or a task set was made from."""
    h = hashlib.sha256()
    for pid in sorted(platforms):
        h.update(project.platform(pid).sha256.encode())
        meaning = project.root / "specs" / "platforms" / pid / "meaning.yaml"
        if meaning.exists():
            h.update(meaning.read_bytes())
    kinds = project.root / "specs" / "kinds.yaml"
    if kinds.exists():
        h.update(kinds.read_bytes())
    return h.hexdigest()

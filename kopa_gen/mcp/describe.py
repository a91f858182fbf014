"""What `kopa-gen tools` prints: the tools of the generated servers as a person reads them.

A listing reads only the frozen tools.json of each platform (what an MCP client sees); one tool's page adds what
the spec knows beyond the JSON Schema: how it pages, where its facts come from and an example call built from its
`x-kopa.examples`. `--provenance` counts the tools by how far their facts are checked.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kopa_gen.language.diagnostics import NotFound
from kopa_gen.project import Project

JSON = dict[str, Any]


def generated_platforms(root: Path) -> list[str]:
    """The platforms `kopa-gen build` wrote a server for, sorted."""
    servers = root / "generated" / "servers"
    return sorted(p.parent.name for p in servers.glob("*/tools.json"))


def frozen_tools(root: Path, platform_id: str) -> list[JSON]:
    """One platform's tools as tools.json froze them; KeyError (one line for the user) when there is none."""
    path = root / "generated" / "servers" / platform_id / "tools.json"
    if not path.is_file():
        known = ", ".join(generated_platforms(root)) or "none; run `kopa-gen build`"
        raise NotFound(f"unknown platform {platform_id!r}; known platforms: {known}")
    tools: list[JSON] = json.loads(path.read_bytes())["tools"]
    return tools


def format_listing(root: Path, platform_ids: Sequence[str]) -> str:
    """Each platform's tools, one line each: name and Korean summary."""
    blocks = []
    for pid in platform_ids:
        tools = frozen_tools(root, pid)
        width = max((len(t["name"]) for t in tools), default=0)
        lines = [f"{pid} ({len(tools)} tools)"]
        lines += [f"  {t['name']:{width}}  {t.get('title') or ''}".rstrip() for t in tools]
        blocks.append("\n".join(lines))
    hint = "kopa-gen tools PLATFORM TOOL: the arguments of one tool and an example call"
    return "\n\n".join([*blocks, hint])


LEVELS = ("live", "docs", "one-source", "unrecorded")
"""How far a tool's facts are checked (kopa_gen.language.kopa.Provenance), best first."""


def level(project: Project, platform_id: str, tool: str) -> str:
    found = project.platform(platform_id).provenance(tool)
    return "unrecorded" if found is None else found.verified


def format_provenance(project: Project, platform_ids: Sequence[str], tools: bool = False) -> str:
    """Tools per platform by how far their facts are checked, with a total row; with `tools`, each tool's level
    and source under its platform."""
    rows: list[tuple[str, Counter[str]]] = []
    blocks: list[str] = []
    local = [pid for pid in platform_ids if project.platform(pid).kopa.local]
    for pid in platform_ids:
        platform = project.platform(pid)
        if platform.kopa.local:
            continue
        counts: Counter[str] = Counter(level(project, pid, op.tool) for op in platform.operations)
        rows.append((pid, counts))
        if tools:
            width = max((len(op.tool) for op in platform.operations), default=0)
            lines = [f"{pid} ({len(platform.operations)} tools)"]
            for op in platform.operations:
                found = platform.provenance(op.tool)
                where = "" if found is None else f"{found.source}, {found.retrieved}"
                if found is not None and found.field_count is not None:
                    where += f"; {len(op.row_props)} of {found.field_count} fields known"
                lines.append(f"  {op.tool:{width}}  {level(project, pid, op.tool):10}  {where}".rstrip())
            blocks.append("\n".join(lines))
    total: Counter[str] = sum((c for _, c in rows), Counter())
    width = max([len(pid) for pid, _ in rows] + [len("all")])
    head = f"{'platform':{width}}  {'tools':>5}  " + "  ".join(f"{name:>10}" for name in LEVELS)
    table = [head] + [
        f"{pid:{width}}  {sum(c.values()):>5,}  " + "  ".join(f"{c[name]:>10,}" for name in LEVELS)
        for pid, c in [*rows, ("all", total)]
    ]
    legend = (
        "live: checked against the real API; docs: an official document gives the facts, or two sources agree; "
        "one-source: a single unofficial source; unrecorded: the spec does not say"
    )
    if local:
        legend += f"\n{', '.join(local)}: kopa-gen's own (local), no real API behind it"
    return "\n\n".join([*blocks, "\n".join(table), legend])


def _type(schema: Mapping[str, Any]) -> str:
    kind = str(schema.get("type", "any"))
    facts = []
    if "enum" in schema:
        facts.append("one of " + ", ".join(map(str, schema["enum"])))
    if "pattern" in schema:
        facts.append(f"pattern {schema['pattern']}")
    if "minimum" in schema or "maximum" in schema:
        facts.append(f"{schema.get('minimum', '')}..{schema.get('maximum', '')}")
    if "maxLength" in schema:
        facts.append(f"at most {schema['maxLength']:,} characters")
    return kind + (f" ({'; '.join(facts)})" if facts else "")


def example_arguments(tool: Mapping[str, Any], examples: Mapping[str, Sequence[str | int]]) -> JSON:
    """Arguments of an example call: every required argument (the platform's example value, else the first
    allowed value, else a placeholder); for a tool without required arguments, the first one with an example."""
    schema = tool["inputSchema"]
    props: Mapping[str, Mapping[str, Any]] = schema.get("properties", {})
    required = [name for name in props if name in schema.get("required", [])]
    if not required:
        required = [name for name in props if examples.get(name)][:1]
    args: JSON = {}
    for name in required:
        prop = props[name]
        if examples.get(name):
            value: Any = examples[name][0]
        elif prop.get("enum"):
            value = prop["enum"][0]
        else:
            value = f"<{name}>"
        if prop.get("type") == "integer" and str(value).isdigit():
            value = int(value)
        elif prop.get("type") == "string":
            value = str(value)
        args[name] = value
    return args


def format_tool(project: Project, platform_id: str, name: str) -> str:
    """One tool: summary and description, its arguments (type, required, Korean description), how it pages and
    an example `kopa-gen call`."""
    tools = {t["name"]: t for t in frozen_tools(project.root, platform_id)}
    if name not in tools:
        raise NotFound(f"{platform_id} has no tool {name!r}; its tools: {', '.join(sorted(tools))}")
    tool = tools[name]
    schema = tool["inputSchema"]
    props: Mapping[str, Mapping[str, Any]] = schema.get("properties", {})
    required = set(schema.get("required", []))
    title = str(tool.get("title") or "")
    description = str(tool.get("description", ""))
    if title and description.startswith(title + "\n"):  # the description opens with the summary line
        description = description[len(title) + 1 :]
    lines = [f"{name}: {title}".rstrip(), "", description, "", "arguments:"]
    if not props:
        lines.append("  (none)")
    width = max((len(n) for n in props), default=0)
    for arg, prop in props.items():
        need = "required" if arg in required else "optional"
        lines.append(f"  {arg:{width}}  {_type(prop)}, {need}")
        if prop.get("description"):
            lines.append(f"  {'':{width}}  {prop['description']}")
    paging = project.page_params(name)
    lines.append("")
    if paging is None:
        lines.append("paging: none (one answer holds every row)")
    else:
        page, size = paging
        size_schema = props.get(size, {})
        largest = f", at most {size_schema['maximum']}" if "maximum" in size_schema else ""
        lines.append(
            f"paging: {page} is the page number (from 1), {size} the rows per page{largest}; the result's "
            "total_count says how many rows match in all"
        )
    found = project.platform(platform_id).provenance(name)
    if found is not None:
        known = (
            "" if found.field_count is None else f"; the source names {found.field_count} fields a row has"
        )
        lines.append(f"facts: {found.source}, read {found.retrieved}, {found.verified}{known}")
    examples = project.platform(platform_id).examples(name)
    args = json.dumps(example_arguments(tool, examples), ensure_ascii=False)
    lines += ["", "example:", f"  kopa-gen call {platform_id} {name} '{args}'"]
    return "\n".join(lines)

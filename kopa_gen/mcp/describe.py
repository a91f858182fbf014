"""What `kopa-gen tools` prints: the tools of the generated servers as a person reads them.

A listing reads only the frozen tools.json of each platform (what an MCP client sees); one tool's page adds what
the spec knows beyond the JSON Schema: how it pages and an example call built from the platform's
`x-kopa.examples`.
"""

from __future__ import annotations

import json
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
    examples = project.platform(platform_id).kopa.examples
    args = json.dumps(example_arguments(tool, examples), ensure_ascii=False)
    lines += ["", "example:", f"  kopa-gen call {platform_id} {name} '{args}'"]
    return "\n".join(lines)

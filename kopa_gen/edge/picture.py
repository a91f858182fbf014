"""Pictures of G*: a self-contained SVG (open it in any browser) and Graphviz DOT for people who have dot.
Tools sit on a circle grouped by platform (networkx's shell layout, deterministic); kept edges are drawn
solid, coloured by posterior mean (red 0 → green 1); pruned edges dashed grey."""

from __future__ import annotations

import html
import math
from typing import Any

import networkx as nx

PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#d62728", "#393b79",
    "#637939", "#7b4173", "#e7969c", "#17a589",
]  # fmt: skip


def to_networkx(doc: dict[str, Any], kept_only: bool = False) -> nx.DiGraph[str]:
    """G* (the JSON document `edge graph` writes) as a networkx DiGraph; edge attributes carry the JSON."""
    g: nx.DiGraph[str] = nx.DiGraph()
    for tool in doc["tools"]:
        g.add_node(tool["name"], platform=tool["platform"])
    for edge in doc["edges"]:
        if kept_only and edge["status"] != "kept":
            continue
        g.add_edge(edge["producer"], edge["consumer"], **edge)
    return g


def _colour(mean: float) -> str:
    red, green = int(220 * (1 - mean)), int(170 * mean)
    return f"#{red:02x}{green:02x}40"


FONT_PX = 10
CHAR_PX = 6.5
"""Widest advance of one character of a tool name at FONT_PX in a sans-serif font (tool names are ASCII)."""


def to_svg(doc: dict[str, Any]) -> str:
    """Tools on a circle, each label written outward along its radius (so neighbours never overlap: the circle is
    made large enough for one font height between two tools), and a canvas large enough for the longest label."""
    g = to_networkx(doc)
    platforms = sorted({d["platform"] for _, d in g.nodes(data=True)})
    order = sorted(g.nodes, key=lambda n: (g.nodes[n]["platform"], n))
    pos = nx.circular_layout(nx.path_graph(order))  # positions in the given order: platforms stay together
    radius = max(300.0, len(order) * (FONT_PX + 3) / (2 * math.pi))
    longest = max((len(n) for n in order), default=0) * CHAR_PX
    half = radius + 8 + longest + 20
    size = int(2 * half)
    xy = {n: (half + radius * float(pos[n][0]), half + radius * float(pos[n][1])) for n in order}
    height = size + 14 * (len(platforms) + 2) + 10  # the legend goes below the circle
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{height}" viewBox="0 0 {size} {height}" '
        f'font-family="sans-serif" font-size="{FONT_PX}"><rect width="100%" height="100%" fill="white"/>',
        '<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
    ]
    for u, v, d in sorted(g.edges(data=True), key=lambda e: (e[2]["status"] == "kept", e[0], e[1])):
        (x1, y1), (x2, y2) = xy[u], xy[v]
        kept = d["status"] == "kept"
        style = (
            f'stroke="{_colour(d["posterior"]["mean"])}" stroke-width="1.6" opacity="0.85"'
            if kept
            else 'stroke="#bbb" stroke-width="0.8" stroke-dasharray="4 3" opacity="0.6"'
        )
        label = html.escape(
            f"{d['id']} [{d['status']}] "
            + ", ".join(f"{b['param']}←{b['field']}" for b in d["bindings"])
            + f" mean {d['posterior']['mean']:.2f}, trials {d['trials']}"
        )
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" {style} marker-end="url(#a)">'
            f"<title>{label}</title></line>"
        )
    for n in order:
        x, y = xy[n]
        colour = PALETTE[platforms.index(g.nodes[n]["platform"]) % len(PALETTE)]
        angle = math.atan2(y - half, x - half)
        tx, ty = x + 8 * math.cos(angle), y + 8 * math.sin(angle)
        right = math.cos(angle) >= 0  # labels on the left are turned half a circle so they read left to right
        degrees = math.degrees(angle) if right else math.degrees(angle) + 180
        anchor = "start" if right else "end"
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}"><title>{n}</title></circle>')
        parts.append(
            f'<text x="{tx:.1f}" y="{ty:.1f}" text-anchor="{anchor}" dominant-baseline="middle" '
            f'transform="rotate({degrees:.2f} {tx:.1f} {ty:.1f})">{html.escape(n)}</text>'
        )
    kept = sum(1 for _, _, d in g.edges(data=True) if d["status"] == "kept")
    legend = [
        f"G*: {kept} kept / {g.number_of_edges()} skeleton edges, seed {doc['seed']}, scorer {doc['scorer']}",
        "solid: kept (colour = posterior mean, red 0 → green 1); dashed grey: pruned",
    ] + [f"● {p}" for p in platforms]
    for i, text in enumerate(legend):
        fill = PALETTE[(i - 2) % len(PALETTE)] if i >= 2 else "#222"
        parts.append(f'<text x="12" y="{size + 4 + 14 * i}" fill="{fill}">{html.escape(text)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def to_dot(doc: dict[str, Any]) -> str:
    lines = ["digraph gstar {", "  rankdir=LR; node [shape=box, fontsize=10];"]
    for tool in doc["tools"]:
        lines.append(f'  "{tool["name"]}" [tooltip="{tool["platform"]}"];')
    for e in doc["edges"]:
        binds = ", ".join(f"{b['param']}←{b['field']}" for b in e["bindings"])
        style = "solid" if e["status"] == "kept" else "dashed, color=gray"
        lines.append(
            f'  "{e["producer"]}" -> "{e["consumer"]}" [label="{binds}\\n{e["posterior"]["mean"]:.2f}", style={style}];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"

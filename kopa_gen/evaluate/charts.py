"""Inline SVG charts for the report (no plotting library, no script: the page stays self-contained).

Every chart is sized from its own text: label and value columns are as wide as their longest text, measured
with a conservative per-character estimate (a Hangul or other wide character is 1 em, anything else 0.62 em),
so no label runs past the right edge whatever the data."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from html import escape

FONT_SIZE = 12
COLOURS = ("#3b6ea5", "#e07b39", "#4c9a52", "#b8423c", "#7d5ba6", "#8c6d31", "#d16ba5", "#5f6b73")


def text_width(text: str, size: float = FONT_SIZE, bold: bool = False) -> float:
    """An upper estimate of the rendered width of `text` in px (sans-serif, including CJK fonts)."""
    em = sum(1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.62 for ch in text)
    return em * size * (1.08 if bold else 1.0)


def _fmt(value: float, fmt: str) -> str:
    return "-" if math.isnan(value) else fmt.format(value)


MARGIN = 3  # around the drawing: glyphs overhang their advance a little (a bold "A" starts left of x=0)


def _svg(width: float, height: float, title: str, body: list[str]) -> str:
    w, h = math.ceil(width) + 2 * MARGIN, math.ceil(height) + 2 * MARGIN
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'role="img" aria-label="{escape(title)}" font-size="{FONT_SIZE}">'
        f'<g transform="translate({MARGIN},{MARGIN})">'
    )
    title_text = f'<text x="0" y="17" font-weight="bold">{escape(title)}</text>'
    return head + title_text + "".join(body) + "</g></svg>"


def _legend(names: Sequence[str], y: float) -> tuple[list[str], float, float]:
    """One row of coloured squares and names; returns the parts, the row's width and its height."""
    parts: list[str] = []
    x = 0.0
    for i, name in enumerate(names):
        colour = COLOURS[i % len(COLOURS)]
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14:.1f}" y="{y + 10}">{escape(name)}</text>')
        x += 14 + text_width(name) + 16
    return parts, x, 18


def grouped_bars(
    title: str,
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    maximum: float,
    fmt: str = "{:.2f}",
    bar_width: float = 320,
) -> str:
    """Horizontal bars: one group per category, one bar per series (a run), its value printed after it."""
    names = [name for name, _ in series]
    label_w = max((text_width(c) for c in categories), default=0) + 12
    value_w = max((text_width(_fmt(v, fmt)) for _, vs in series for v in vs), default=0) + 10
    body: list[str] = []
    y = 28.0
    legend_w = 0.0
    if len(series) > 1:
        parts, legend_w, legend_h = _legend(names, y)
        body += parts
        y += legend_h + 4
    bar_h = 14
    for ci, category in enumerate(categories):
        group = bar_h * len(series)
        body.append(f'<text x="0" y="{y + group / 2 + 4:.1f}">{escape(category)}</text>')
        for si, (_, values) in enumerate(series):
            value = values[ci]
            width = 0.0 if maximum <= 0 or math.isnan(value) else bar_width * min(value, maximum) / maximum
            top = y + si * bar_h
            colour = COLOURS[si % len(COLOURS)]
            body.append(
                f'<rect x="{label_w:.1f}" y="{top + 1:.1f}" width="{width:.1f}" height="{bar_h - 2}" fill="{colour}"/>'
            )
            body.append(
                f'<text x="{label_w + width + 4:.1f}" y="{top + bar_h - 3:.1f}">{escape(_fmt(value, fmt))}</text>'
            )
        y += group + 8
    width = max(label_w + bar_width + value_w, text_width(title, bold=True), legend_w) + 4
    return _svg(width, y + 4, title, body)


def tick_indices(xs: Sequence[int], width: float) -> list[int]:
    """Which of the evenly spaced x values get a label: every one while their labels fit side by side, else the
    multiples of 2, 5, 10, 20, ... (the first and the last always); no two labels overlap."""
    if not xs:
        return []
    widest = max(text_width(str(x)) for x in xs) + 6
    gap = width / max(len(xs) - 1, 1)
    step = next(s for m in (1, 10, 100, 1000) for s in (m, 2 * m, 5 * m) if s * gap >= widest or s >= len(xs))
    last = len(xs) - 1
    wanted = [i for i in range(len(xs)) if i in (0, last) or xs[i] % step == 0]
    picked: list[int] = []
    for i in wanted:
        if picked and (i - picked[-1]) * gap < widest:
            if i != last:
                continue
            picked.pop()  # the last label wins over a neighbour it would overprint
        picked.append(i)
    return picked


def curves(
    title: str, xs: Sequence[int], series: Sequence[tuple[str, Sequence[float]]], x_label: str = "k"
) -> str:
    """Lines over integer x (pass@k against k), y from 0 to 1, the last value of each line printed at its end."""
    names = [name for name, _ in series]
    plot_w, plot_h = 320.0, 160.0
    left = text_width("1.00") + 8
    value_w = max((text_width(f"{vs[-1]:.2f}") for _, vs in series if vs), default=0) + 10
    body: list[str] = []
    top = 28.0
    parts, legend_w, legend_h = _legend(names, top)
    body += parts
    top += legend_h + 10
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>')
        body.append(f'<text x="0" y="{y + 4:.1f}">{tick:.2f}</text>')
    span = max(len(xs) - 1, 1)

    def px(i: int) -> float:
        return left + plot_w * i / span if len(xs) > 1 else left + plot_w / 2

    for i in tick_indices(xs, plot_w):
        label = str(xs[i])
        body.append(
            f'<line x1="{px(i):.1f}" y1="{top + plot_h}" x2="{px(i):.1f}" y2="{top + plot_h + 4}" stroke="#999"/>'
        )
        body.append(
            f'<text x="{px(i) - text_width(label) / 2:.1f}" y="{top + plot_h + 16:.1f}">{label}</text>'
        )
    axis = f"{x_label} (1 to {xs[-1]})" if xs else x_label
    body.append(f'<text x="{left:.1f}" y="{top + plot_h + 32:.1f}">{escape(axis)}</text>')
    ends: list[tuple[float, float, str, str]] = []  # (y, x, text, colour) of each line's last value
    for si, (_, values) in enumerate(series):
        colour = COLOURS[si % len(COLOURS)]
        points = [(px(i), top + plot_h * (1 - v)) for i, v in enumerate(values) if not math.isnan(v)]
        if not points:
            continue
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        body.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in points]
        last = next(v for v in reversed(values) if not math.isnan(v))
        ends.append((points[-1][1] + 4, points[-1][0] + 6, f"{last:.2f}", colour))
    below = top + plot_h + 40
    previous = -math.inf
    for y, x, text, colour in sorted(
        ends
    ):  # lines ending at one value: their labels stacked, not overprinted
        y = max(y, previous + FONT_SIZE + 2)
        previous = y
        below = max(below, y + 6)
        body.append(f'<text x="{x:.1f}" y="{y:.1f}" fill="{colour}">{text}</text>')
    width = max(left + plot_w + value_w, text_width(title, bold=True), legend_w, left + text_width(axis)) + 4
    return _svg(width, below, title, body)

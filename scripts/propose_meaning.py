"""Draft a platform's specs/platforms/<id>/meaning.yaml for a person to review: every parameter and response field
of its tools with a guessed role, unit and question phrase, and sample values from the sandbox as comments.

    python scripts/propose_meaning.py tago [--out FILE]    # default: print to stdout; never overwrites a file

The guesses are rules over names, descriptions and observed values (an algorithm, not a reading): a reviewer
decides every entry, and a field left without a meaning is one EDGE never asks about or hands on.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections import defaultdict
from pathlib import Path

from kopa_gen.edge.graph import examples_of, sample_tools
from kopa_gen.edge.signatures import load_signatures
from kopa_gen.project import load_project

_DATE = re.compile(r"^(19|20)\d{2}-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])$")
_NUM = re.compile(r"^-?[\d,]+(\.\d+)?$")
_ID_NAME = re.compile(r"(^|_)(id|cd|code|no|key|seq|sn)$|Id$|ID$|Cd$|CD$|Code$|No$|NO$|SN$", re.I)
_UNITS = (("원", "원"), ("백만원", "원"), ("천원", "원"), ("%", "%"), ("비율", "%"), ("율", "%"), ("명", "명"),
          ("인원", "명"), ("건수", "건"), ("건", "건"), ("개수", "개"), ("수", "개"), ("kcal", "kcal"),
          ("분", "분"), ("km", "km"), ("주", "주"), ("석", "석"), ("표", "표"))  # fmt: skip


def head(description: str) -> str:
    return re.split(r"[(:;,\n]| - ", description, maxsplit=1)[0].strip().rstrip(".")


def guess(name: str, description: str, values: list[str]) -> dict[str, str]:
    desc = description
    if values and all(_DATE.match(v) for v in values):
        return {"role": "date", "ask": head(desc)}
    if _ID_NAME.search(name) or re.search(r"(코드|ID|고유번호|일련번호|식별)", desc):
        return {"role": "id"}
    if values and all(_NUM.match(v) for v in values):
        unit = next((u for word, u in _UNITS if word in desc), None)
        out = {"role": "measure", "ask": head(desc)}
        out["unit"] = unit or "개"
        return out
    if re.search(r"(명칭|이름|성명|명$|명\b)", head(desc)):
        return {"role": "name", "ask": head(desc)}
    if values and len(set(values)) <= 8 and len(values) >= 4:
        return {"role": "enum", "ask": head(desc)}
    return {"role": "text"}


def flow(entry: dict[str, str]) -> str:
    parts = []
    for k, v in entry.items():
        text = str(v)
        if re.search(r"[:{}\[\],#&*!|>'\"%@`]", text) or text != text.strip() or not text:
            text = "'" + text.replace("'", "''") + "'"
        parts.append(f"{k}: {text}")
    return "{" + ", ".join(parts) + "}"


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("platform")
    ap.add_argument("--out", type=Path, help="write here (refused when the file exists)")
    args = ap.parse_args()
    project = load_project()
    sigs = load_signatures(project, [args.platform])
    samples, _, _ = await sample_tools(project, sigs, examples_of(project, sigs), seed=0, tries=8)
    params: dict[str, tuple[str, set[str]]] = {}
    fields: dict[str, tuple[str, list[str], set[str]]] = {}
    for sig in sigs:
        for p in sig.bindable:
            params.setdefault(p.name, (p.description, set()))[1].add(sig.name)
        for f in sig.outputs:
            desc, vals, tools = fields.setdefault(f.name, (f.description, [], set()))
            for v in samples.of(sig.name, f.name):
                if v not in vals and len(vals) < 12:
                    vals.append(v)
            tools.add(sig.name)
    lines = [
        "# yaml-language-server: $schema=../../../generated/schemas/meaning.schema.json",
        f"# What {args.platform}'s fields and parameters mean (kopa_gen/language/meaning.py, docs/edge.md).",
        f"platform: {args.platform}",
        "params:",
    ]
    for name, (desc, tools) in sorted(params.items()):
        lines.append(f"  # {head(desc)} — {desc[:100]!r}; {len(tools)} tool(s)")
        lines.append(f"  {name}: {{}}")
    lines.append("fields:")
    by_role: dict[str, int] = defaultdict(int)
    for name, (desc, vals, tools) in sorted(fields.items()):
        entry = guess(name, desc, vals)
        by_role[entry["role"]] += 1
        shown = ", ".join(v[:30] for v in vals[:6]) or "(no sample)"
        lines.append(f"  # {desc[:110]!r} e.g. {shown}; {len(tools)} tool(s)")
        lines.append(f"  {name}: {flow(entry)}")
    lines.append("tools:")
    for sig in sigs:
        topic = re.sub(r"\s*(목록\s*)?조회$|\s*검색$", "", sig.title).strip() or sig.title
        lines.append(f"  {sig.name}: {{topic: {flow({'t': topic})[4:-1]}, noun: '', counter: 개}}")
    text = "\n".join(lines) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    elif args.out.exists():
        print(f"{args.out} exists; not overwritten", file=sys.stderr)
        return 2
    else:
        args.out.write_text(text, encoding="utf-8")
    print(f"{len(params)} parameters, {len(fields)} fields: {dict(by_role)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))

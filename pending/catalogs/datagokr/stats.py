#!/usr/bin/env python3
"""Counts for REPORT.md from the written drafts: prints markdown sections to stdout."""
import collections
import json
import re
from pathlib import Path

import yaml

HERE = Path(__file__).parent
FILES = [("fsc", "금융위원회 1160100"), ("nec", "중앙선거관리위원회 9760000"), ("tago", "국토교통부 1613000 — TAGO family"),
         ("molit_other", "국토교통부 1613000 — everything else"), ("mois", "행정안전부 1741000")]
index = json.loads((HERE / "methods_index.json").read_text(encoding="utf-8"))
spec_tools = set()
for p in (HERE.parents[2] / "specs" / "platforms").glob("*/openapi.yaml"):
    spec_tools |= set(re.findall(r"^\s+tool:\s*(\S+)", p.read_text(encoding="utf-8"), re.M))


def service(code):
    return code.rsplit("/", 1)[0] if "/" in code else "(none)"


def shape(code):
    segs = code.split("/")
    lead = "service/" if segs[0] == "service" else ""
    n = len(segs) - (1 if lead else 0)
    return f"{lead}" + "/".join(["<svc>"] * (n - 1) + ["<op>"])


summary = []
for name, title in FILES:
    d = yaml.safe_load((HERE / f"{name}.yaml").read_text(encoding="utf-8"))["datasets"]
    svc = collections.Counter(service(e["code"]) for e in d)
    env_only = [e for e in d if not e["fields"] and e.get("envelope_fields")]
    combos = collections.Counter(tuple(e["common"]) for e in d)
    creq = collections.Counter(tuple(e.get("common_required", [])) for e in d)
    shapes = collections.Counter(shape(e["code"]) for e in d)
    bom = [x["code"] for x in index[name] if x["bom"]]
    req_ops = sum(1 for e in d if any(p["required"] for p in e["params"]))
    clash = sorted({e["tool"] for e in d} & spec_tools)
    fc_over8 = sum(1 for e in d if e["field_count"] > 8)
    print(f"\n### {title} — `{name}.yaml`\n")
    print(f"- operations: **{len(d)}**; services (URL path minus the operation segment): **{len(svc)}**")
    print(f"- operations whose listed fields are only envelope fields: **{len(env_only)}** "
          f"({dict(collections.Counter(tuple(e['envelope_fields']) for e in env_only))})")
    print(f"- operations with ≥1 required own parameter: {req_ops}; with field_count > 8 (list truncated): {fc_over8}")
    print(f"- URL shapes: " + ", ".join(f"`{k}` ×{v}" for k, v in shapes.most_common()))
    if bom:
        print(f"- URL contains a U+FEFF (BOM) before the path in the source (stripped in `code`): {bom}")
    if clash:
        print(f"- tool names equal to a hand-written kopa-gen tool: {clash}")
    print(f"- `common` combinations:")
    for k, v in combos.most_common():
        print(f"  - `{list(k)}` ×{v}")
    print(f"- paging/format params the client signature makes required (`common_required`): "
          + ", ".join(f"`{list(k)}` ×{v}" for k, v in creq.most_common()))
    print(f"\n<details><summary>operations per service ({len(svc)})</summary>\n")
    print("| service | ops |\n|---|---|")
    for k, v in sorted(svc.items()):
        print(f"| `{k}` | {v} |")
    print("\n</details>")
    summary.append((name, len(d), len(svc), len(env_only)))
print("\n### Totals\n\n| file | ops | services | envelope-only ops |\n|---|---|---|---|")
for r in summary:
    print("| " + " | ".join(str(x) for x in r) + " |")

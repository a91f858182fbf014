#!/usr/bin/env python3
"""Compare the draft entries with the hand-written kopa-gen operations of the same URL (parameter and row field
names). Read-only on specs/. Writes crosscheck.json."""
import json
import re
from pathlib import Path

import yaml

HERE = Path(__file__).parent
SPECS = HERE.parents[2] / "specs" / "platforms"


def resolve(doc, ref):
    node = doc
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


out = {}
for plat, files in {"fsc": ["fsc"], "nec": ["nec"], "tago": ["tago"]}.items():
    doc = yaml.safe_load((SPECS / plat / "openapi.yaml").read_text(encoding="utf-8"))
    drafts = {}
    for f in files:
        for e in yaml.safe_load((HERE / f"{f}.yaml").read_text(encoding="utf-8"))["datasets"]:
            drafts[e["code"]] = e
    for path, item in doc["paths"].items():
        op = item["get"]
        names = []
        for p in op.get("parameters", []):
            if "$ref" in p:
                p = resolve(doc, p["$ref"])
            names.append(p["name"])
        row = op.get("x-kopa", {}).get("row")
        rowf = list(resolve(doc, row).get("properties", {})) if row else []
        code = path.lstrip("/")
        e = drafts.get(code)
        rec = {"spec_params": names, "spec_row_fields": rowf, "in_client": e is not None}
        if e:
            cp = [p["name"] for p in e["params"]] + e["common"]
            cf = [f["name"] for f in e["fields"]]
            rec.update({
                "client_params": cp,
                "params_only_in_spec": [n for n in names if n not in cp],
                "params_only_in_client": [n for n in cp if n not in names],
                "client_required": [p["name"] for p in e["params"] if p["required"]] + e.get("common_required", []),
                "client_fields_first8": cf,
                "client_fields_not_in_spec_row": [n for n in cf if n not in rowf],
                "client_fields_case_insensitive_match": [n for n in cf if n not in rowf and n.lower() in {r.lower() for r in rowf}],
                "client_field_count": e["field_count"],
                "spec_row_field_count": len(rowf),
            })
        out[f"{plat}:{code}"] = rec
(HERE / "crosscheck.json").write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
for k, v in out.items():
    if v["in_client"]:
        print(k, "| spec-only params:", v["params_only_in_spec"], "| client-only params:", v["params_only_in_client"],
              "| req:", v["client_required"], "| fields not in spec row:", v["client_fields_not_in_spec_row"],
              "| counts", v["client_field_count"], v["spec_row_field_count"])
    else:
        print(k, "NOT IN CLIENT")

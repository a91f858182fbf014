#!/usr/bin/env python3
"""Load every draft entry through kopa_gen's Dataset model (on a copy adjusted as the brief allows) and report
which fail and why. Usage: python validate.py  (from this folder, kopa-gen's venv active)."""
import collections
import copy
import json
import sys
from pathlib import Path

import yaml
from pydantic import ValidationError

from kopa_gen.language.catalog import Dataset

HERE = Path(__file__).parent
EXTRA = ("common", "common_required", "field_count", "provenance", "envelope_fields")
out = {}
for name in ("fsc", "nec", "tago", "molit_other", "mois"):
    data = yaml.safe_load((HERE / f"{name}.yaml").read_text(encoding="utf-8"))
    ok, fails, adjusted = 0, [], collections.Counter()
    for e in data["datasets"]:
        c = copy.deepcopy(e)
        for k in EXTRA:
            c.pop(k, None)
        c["code"] = c["code"].replace("/", ".")
        have = {f["name"] for f in c["fields"]}
        added = [p["name"] for p in c["params"] if p["name"] not in have]
        if added:
            adjusted["param added to fields"] += 1
            c["fields"] = c["fields"] + [{"name": n} for n in added]
        try:
            Dataset.model_validate(c)
            ok += 1
        except ValidationError as exc:
            reasons = sorted({f"{'.'.join(str(x) for x in err['loc'][:1])}:{err['type']}" for err in exc.errors()})
            bad = [str(err["input"])[:60] for err in exc.errors() if err["type"] == "string_pattern_mismatch"]
            fails.append({"code": e["code"], "reasons": reasons, "bad_values": bad[:5]})
    out[name] = {"entries": len(data["datasets"]), "valid": ok, "invalid": len(fails),
                 "adjusted": dict(adjusted),
                 "reason_counts": dict(collections.Counter(r for f in fails for r in f["reasons"])),
                 "failures": fails}
    print(name, len(data["datasets"]), "valid", ok, "invalid", len(fails), dict(adjusted),
          out[name]["reason_counts"])
(HERE / "validation.json").write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")

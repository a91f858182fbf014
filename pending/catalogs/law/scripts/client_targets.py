"""Which guide targets the two PyPI clients name (corroboration of target values only).

Reads the unpacked wheels under /tmp/pipdl (see fetch_inputs.sh) and facts_by_guide.json; writes
client_targets.json. A target counts when it appears as a quoted literal; the generic words law, school,
public and pi count only in a `target=`/`target:` context.
"""
import json
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent.parent
facts = json.loads((HERE / "facts_by_guide.json").read_text())
targets = {v["target"] for v in facts["A"].values() if v["target"]} | {"public", "pi"}
common = {"law", "school", "public", "pi"}
res = {}
for pkg in ("moleg", "caselaw"):
    txt = ""
    for f in pathlib.Path("/tmp/pipdl", pkg).rglob("*"):
        if f.is_file() and f.suffix in (".py", ".json", ".md", ".txt", ""):
            txt += f.read_text(errors="ignore")
    lits = set(re.findall(r"[\"']([A-Za-z]+)[\"']", txt))
    res[pkg] = sorted(t for t in targets if t in lits and (
        t not in common or re.search(r"target[\"']?\s*[:=,]\s*[\"']%s[\"']" % t, txt)))
(HERE / "client_targets.json").write_text(json.dumps(res, ensure_ascii=False, indent=1))
print({k: len(v) for k, v in res.items()})

#!/usr/bin/env python3
"""Extract per-endpoint FACTS from data-go-kr-client 4.16.0's generated http/client.py.

Usage: python extract.py /path/to/data_go_kr_client/http/client.py > methods.json
Facts only: URL, request parameter names (API spelling), python arg, required flag, Korean label,
listed response field names (+ Korean label), stated total field count, first docstring line.
"""
import ast
import json
import re
import sys

src = open(sys.argv[1], encoding="utf-8").read()
tree = ast.parse(src)

consts = {}
for node in tree.body:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            consts[node.targets[0].id] = node.value.value

cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DataGoKrClient")

ARG_RE = re.compile(r"^\s*(\w+) \((?:str|int|float|bool)(?:, optional)?\):\s?(.*)$")
FIELD_RE = re.compile(r"^\s*(\S[^()]*?) \((string|integer|int|float|number|boolean|bool|str|[A-Z][A-Za-z ]+)\):\s?(.*)$")
MORE_RE = re.compile(r"\.\.\. (\d+) more fields")

out = []
problems = []
for fn in cls.body:
    if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
        continue
    doc = ast.get_docstring(fn, clean=False) or ""
    # signature
    args = fn.args.args[1:]
    defaults = fn.args.defaults
    nodef = len(args) - len(defaults)
    sig = {}
    for i, a in enumerate(args):
        d = None
        has_default = i >= nodef
        if has_default:
            dn = defaults[i - nodef]
            d = dn.value if isinstance(dn, ast.Constant) else ast.unparse(dn)
        sig[a.arg] = {"required": not has_default, "default": d, "ann": ast.unparse(a.annotation) if a.annotation else None}
    # call
    ret = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "_call"]
    if len(ret) != 1:
        problems.append((fn.name, "no single _call"))
        continue
    call = ret[0]
    url_node = call.args[0]
    url = consts.get(url_node.id) if isinstance(url_node, ast.Name) else (url_node.value if isinstance(url_node, ast.Constant) else None)
    pdict = call.args[1]
    if isinstance(pdict, ast.Call):  # _p({...})
        pdict = pdict.args[0]
    params = []
    if isinstance(pdict, ast.Dict):
        for k, v in zip(pdict.keys, pdict.values):
            params.append({"name": k.value if isinstance(k, ast.Constant) else ast.unparse(k),
                           "arg": v.id if isinstance(v, ast.Name) else ast.unparse(v)})
    else:
        problems.append((fn.name, "params not dict"))
    # docstring sections
    lines = doc.split("\n")
    first = " ".join(lines[0].split())
    labels = {}
    fields = []
    more = 0
    section = None
    cur = None  # the entry continuation lines belong to
    for ln in lines[1:]:
        s = ln.strip()
        if s == "Args:":
            section, cur = "args", None; continue
        if s.startswith("Returns:"):
            section, cur = "ret", None; continue
        if s.startswith("Raises:"):
            section, cur = "raises", None; continue
        if not s:
            continue
        if section == "args":
            m = ARG_RE.match(ln)
            if m and m.group(1) in sig:
                cur = [m.group(1), m.group(2).strip()]
                labels[m.group(1)] = cur
            elif cur is not None:
                cur[1] = (cur[1] + " " + s).strip()
        elif section == "ret":
            if s.startswith("dict with fields"):
                continue
            m = MORE_RE.search(s)
            if m and s.startswith("..."):
                more = int(m.group(1)); cur = None; continue
            m = FIELD_RE.match(ln)
            if m:
                cur = {"name": m.group(1), "type": m.group(2), "label": m.group(3).strip()}
                fields.append(cur)
            elif cur is not None:
                cur["label"] = (cur["label"] + " " + s).strip()
    labels = {k: " ".join(v[1].split()) for k, v in labels.items()}
    for f in fields:
        f["label"] = " ".join(f["label"].split())
    for p in params:
        a = sig.get(p["arg"])
        p["required"] = a["required"] if a else None
        p["default"] = a["default"] if a else None
        p["ann"] = a["ann"] if a else None
        p["label"] = labels.get(p["arg"], "")
    out.append({"method": fn.name, "url": url, "first_line": first, "params": params,
                "fields": fields, "more_fields": more, "field_count": len(fields) + more,
                "sig_only": [k for k in sig if k not in {p["arg"] for p in params}]})

json.dump({"methods": out, "problems": problems}, sys.stdout, ensure_ascii=False, indent=0)

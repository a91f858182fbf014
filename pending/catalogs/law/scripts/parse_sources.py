"""Normalise three independent scrapes of the open.law.go.kr guide pages into one facts file.

A = StatPan/lawpy specs/kr/*.json           (scraped 2026-05-08 by scripts/scrape_specs.py)
B = ChangooLee/mcp-kr-legislation korean_law_api_complete_guide.md (generated 2025-07-22; commit 9b95272)
C = ChangooLee/mcp-kr-legislation src/.../utils/api_layout/*.json   (crawl 2026-01-22; commit 2e5dab4)

Inputs are read from /tmp copies extracted from the fetched mirrors (see REPORT.md); output is
facts_by_guide.json next to this script's parent. Only names/labels are kept, no code.
"""
import glob
import json
import re
import sys
from pathlib import Path

A_DIR = Path("/tmp/lawpy")
B_MD = Path("/tmp/mcpkr/guide.md")
C_DIR = Path("/tmp/mcpkr")
OUT = Path(__file__).resolve().parent.parent / "facts_by_guide.json"

URL_RE = re.compile(r"(lawSearch|lawService)\.do\?target=([A-Za-z]+)(&mobileYn=Y)?")


def split_url(u):
    m = URL_RE.search(u or "")
    if not m:
        return None, None, None
    return ("list" if m.group(1) == "lawSearch" else "body"), m.group(2), bool(m.group(3))


def parse_a():
    out = {}
    for f in sorted(A_DIR.glob("*.json")):
        if f.name.startswith("_"):
            continue
        d = json.loads(f.read_text())
        kind, target, mob = split_url(d.get("request_url", ""))
        params = []
        for p in d.get("params", []):
            name = p.get("요청변수") or p.get("col0")
            val = p.get("값") or p.get("col1", "")
            desc = p.get("설명") or p.get("col2", "")
            if name:
                params.append({"name": name.strip(), "value": val.strip(), "desc": desc.strip()})
        fields = []
        for r in d.get("response", []):
            name = r.get("필드") or r.get("요청변수") or r.get("col0")  # some pages head the response table 요청변수
            if name:
                fields.append({"name": name.strip(), "value": (r.get("값") or r.get("col1", "")).strip(),
                               "desc": (r.get("설명") or r.get("col2", "")).strip()})
        out[d["html_name"]] = {"label": d.get("label", ""), "kind": kind, "target": target, "mobile": mob,
                               "params": params, "fields": fields}
    return out


def md_tables(lines):
    """Yield tables (list of rows, each a list of cells) from a markdown block."""
    cur = []
    for ln in lines + [""]:
        if ln.startswith("|"):
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            cur.append(cells)
        elif cur:
            yield cur
            cur = []


def fix_table(rows):
    """B's tables merge the first data row into the header row (6 cells); undo that."""
    if not rows:
        return None, []
    head = rows[0]
    body = [r for r in rows[1:] if not all(set(c) <= {"-", " "} for c in r)]
    kind = head[0]
    data = []
    if len(head) >= 6 and kind in ("요청변수", "필드"):
        data.append(head[3:6])
    for r in body:
        if len(r) >= 3:
            data.append(r[:3])
    return kind, data


def parse_b():
    text = B_MD.read_text()
    secs = re.split(r"\n### OPEN API 활용가이드\n", text)
    out = {}
    for s in secs[1:]:
        m = re.search(r"\*\*API ID\*\*: `([A-Za-z]+)`", s)
        if not m:
            continue
        hid = m.group(1)
        s = s.split("\n---\n")[0]
        lines = s.split("\n")
        # Korean API name from the '##### ... API' heading(s) under 상세 내용 (last one wins)
        names = [ln.lstrip("#").strip() for ln in lines if re.match(r"^#{5,6} ", ln)]
        req = re.search(r"요청 URL : (\S+)", s)
        kind, target, mob = split_url(req.group(1) if req else "")
        if not target:
            samp = re.search(r"(lawSearch|lawService)\.do\?OC=\w+&target=([A-Za-z]+)", s)
            if samp:
                kind = "list" if samp.group(1) == "lawSearch" else "body"
                target = samp.group(2)
                mob = "mobileYn=Y" in s
        # use the tables after '상세 내용' (fuller), fall back to the first
        detail = s.split("상세 내용", 1)[1] if "상세 내용" in s else s
        params, fields, field_tables, tables = [], [], 0, []
        for rows in md_tables(detail.split("\n")):
            k, data = fix_table(rows)
            # Some guide pages head their response table '요청변수' by mistake; it then starts with an
            # optional 'target | string | 검색 대상' row, which no request table has.
            misheaded = (k == "요청변수" and params and data and data[0][0] == "target" and "필수" not in data[0][1])
            if k == "요청변수" and not params:
                params = [{"name": a, "value": b, "desc": c} for a, b, c in data]
            elif k == "필드" or misheaded:
                field_tables += 1
                tbl = [{"name": a, "value": b, "desc": c} for a, b, c in data]
                tables.append(tbl)
                fields += tbl
        if not params:
            for rows in md_tables(lines):
                k, data = fix_table(rows)
                if k == "요청변수":
                    params = [{"name": a, "value": b, "desc": c} for a, b, c in data]
                    break
        samples = re.findall(r"https?://www\.law\.go\.kr/DRF/\S+?(?=\s*\||`|\s|$)", s)
        prev = out.get(hid)
        rec = {"label": names[-1] if names else "", "kind": kind, "target": target, "mobile": mob,
               "params": params, "fields": fields, "field_tables": field_tables, "tables": tables,
               "samples": sorted(set(samples))}
        if prev is None or (len(rec["fields"]) + len(rec["params"]) > len(prev["fields"]) + len(prev["params"])):
            out[hid] = rec
    return out


def parse_c():
    out = []
    for f in sorted(C_DIR.glob("*.json")):
        if f.name.startswith("_") or f.name == "guide.md":
            continue
        d = json.loads(f.read_text())
        for a in d["apis"]:
            kind, target, mob = split_url(a.get("request_url", ""))
            out.append({"category": d["category"], "title": a["title"], "kind": kind,
                        "target": a.get("target") or target, "api_type": a.get("api_type"),
                        "sub_category": a.get("sub_category"),
                        "params": [{"name": p["name"], "value": p.get("type", ""), "desc": p.get("description", "")}
                                   for p in a.get("parameters", [])],
                        "samples": [s["url"] for s in a.get("sample_urls", [])]})
    return out


def main():
    a, b, c = parse_a(), parse_b(), parse_c()
    OUT.write_text(json.dumps({"A": a, "B": b, "C": c}, ensure_ascii=False, separators=(",", ":")))
    print(f"A={len(a)} B={len(b)} C={len(c)} -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()

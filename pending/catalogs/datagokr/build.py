#!/usr/bin/env python3
"""Turn the extracted facts (extract.py's JSON) into catalog drafts for four data.go.kr organisations.

Usage: python build.py methods.json   (writes fsc.yaml, nec.yaml, tago.yaml, molit_other.yaml, mois.yaml,
       facts_4orgs.json and stats.json beside this script)
"""
import hashlib
import json
import re
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).parent
PROV = {"source": "data-go-kr-client 4.16.0 (PyPI)", "retrieved": "2026-12-05", "verified": "one-source"}
BASE = "https://apis.data.go.kr/"

# TAGO (국가대중교통정보센터) family inside 1613000: services whose operations all take `_type` and serve
# the TAGO transport guide (bus, train, express/intercity bus, flight, ship, subway, car sharing, kickboard).
TAGO_SERVICES = [
    "BusRouteInfoInqireService", "BusSttnInfoInqireService", "ArvlInfoInqireService", "BusLcInfoInqireService",
    "TrainInfo", "ExpBusInfo", "ExpBusArrInfo", "SuburbsBusInfo", "DmstcFlightNvgInfo", "DmstcShipNvgInfo",
    "SubwayInfo", "CarSharingInfo", "PersonalMobilityInfo",
]
PAGING = {"pageNo", "numOfRows", "pageIndex", "recordCountPerPage", "page", "perPage", "pageNum"}
FORMAT = {"resultType", "_type", "type", "dataType", "returnType", "responseType", "output", "viewType", "format"}
FORMAT_LABEL = re.compile(r"(?i)xml|json|csv|형식|타입|포맷")
KEYS = {"serviceKey", "ServiceKey", "servicekey"}
ENVELOPE = {"resultCode", "resultMsg", "numOfRows", "pageNo", "totalCount", "header", "body", "items", "item",
            "response", "result_code", "result_msg", "num_of_rows", "page_no", "total_count"}
TYPE = {"str": "string", "int": "integer", "float": "number", "bool": "string"}
FTYPE = {"integer": "integer", "int": "integer", "float": "number", "number": "number"}


def snake(s: str) -> str:
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]+", "_", s)).strip("_").lower()


def is_common(p: dict) -> bool:
    if p["name"] in PAGING:
        return True
    return p["name"] in FORMAT and bool(FORMAT_LABEL.search(p["label"] or "")) or p["name"] in {"_type", "resultType", "returnType", "dataType"}


def entry(m: dict, org: str, prefix: str) -> dict:
    url = m["url"].replace("\ufeff", "")
    code = url[len(BASE) + len(org) + 1:]
    first = m["first_line"]
    summary = first.split(" — ", 1)[0].strip() or first
    params, common, common_req = [], [], []
    common_labels: dict = {}
    for p in m["params"]:
        if p["name"] in KEYS:
            continue
        if is_common(p):
            common.append(p["name"])
            if p["name"] in FORMAT and p["label"]:
                common_labels[p["name"]] = p["label"]
            if p["required"]:
                common_req.append(p["name"])
            continue
        base = (p["ann"] or "str").split(" |")[0]
        d = {"name": p["name"], "description": p["label"], "required": bool(p["required"]), "type": TYPE.get(base, "string")}
        params.append(d)
    fields, env = [], []
    for f in m["fields"]:
        if f["name"] in ENVELOPE:
            env.append(f["name"])
            continue
        d = {"name": f["name"], "description": f["label"]}
        if f["type"] in FTYPE:
            d["type"] = FTYPE[f["type"]]
        fields.append(d)
    e = {"code": code, "tool": None, "summary": summary, "description": first, "params": params,
         "common": common}
    if common_req:
        e["common_required"] = common_req
    if common_labels:
        e["common_labels"] = common_labels
    e["fields"] = fields
    if env:
        e["envelope_fields"] = env
    e["field_count"] = m["field_count"]
    e["provenance"] = dict(PROV)
    e["_method"] = m["method"]
    e["_bom"] = "\ufeff" in m["url"]
    return e


def hand_written_tools() -> set[str]:
    """Tool names the hand-written kopa-gen specs already use (read-only), so a draft never reuses one."""
    tools = set()
    for p in (HERE.parents[2] / "specs" / "platforms").glob("*/openapi.yaml"):
        tools |= set(re.findall(r"^\s+tool:\s*(\S+)", p.read_text(encoding="utf-8"), re.M))
    return tools


def hint(service: str) -> str:
    """A short service hint: `GetMarketIndexInfoService` -> `market_index`, `TrainInfo` -> `train`."""
    s = re.sub(r"^get_", "", snake(service))
    s = re.sub(r"(_info)?(_inqire)?_(service|svc|info)(?=(_v\d+)?$)", "", s)
    return s or snake(service)


def assign_tools(entries: list[dict], prefix: str) -> None:
    def op(e):
        return e["code"].rsplit("/", 1)[-1]

    def svc(e):
        parts = [x for x in e["code"].split("/")[:-1] if x != "service"]
        return parts[-1] if parts else ""

    base = {id(e): f"{prefix}_{snake(op(e))}" for e in entries}
    counts = {}
    for v in base.values():
        counts[v] = counts.get(v, 0) + 1
    used = set()
    reserved = hand_written_tools()
    for e in entries:
        t = base[id(e)]
        if counts[t] > 1 or t in reserved:
            t = f"{prefix}_{hint(svc(e))}_{snake(op(e))}"
        if len(t) > 64 or t in used:
            h = hashlib.sha1(e["code"].encode()).hexdigest()[:6]
            t = t[:57].rstrip("_") + "_" + h
        assert t not in used and t not in reserved and re.fullmatch(r"[a-z][a-z0-9_]*", t) and len(t) <= 64, t
        used.add(t)
        e["tool"] = t


def dump(path: Path, entries: list[dict]) -> None:
    clean = [{k: v for k, v in e.items() if not k.startswith("_")} for e in entries]
    text = yaml.safe_dump({"datasets": clean}, allow_unicode=True, sort_keys=False, width=1000,
                          default_flow_style=None)
    path.write_text(text, encoding="utf-8")


def main() -> None:
    methods = json.load(open(sys.argv[1], encoding="utf-8"))["methods"]

    def org_of(m):
        u = m["url"]
        return u[len(BASE):].split("/", 1)[0] if u.startswith(BASE) else None

    orgs = {"1160100": [], "9760000": [], "1613000": [], "1741000": []}
    for m in methods:
        o = org_of(m)
        if o in orgs:
            orgs[o].append(m)
    (HERE / "facts_4orgs.json").write_text(json.dumps({o: v for o, v in orgs.items()}, ensure_ascii=False, indent=1),
                                           encoding="utf-8")
    files = {}
    files["fsc"] = [entry(m, "1160100", "fsc") for m in orgs["1160100"]]
    files["nec"] = [entry(m, "9760000", "nec") for m in orgs["9760000"]]
    molit = [entry(m, "1613000", "x") for m in orgs["1613000"]]
    files["tago"] = [e for e in molit if e["code"].split("/")[0] in TAGO_SERVICES]
    files["molit_other"] = [e for e in molit if e["code"].split("/")[0] not in TAGO_SERVICES]
    files["mois"] = [entry(m, "1741000", "mois") for m in orgs["1741000"]]
    prefix = {"fsc": "fsc", "nec": "nec", "tago": "tago", "molit_other": "molit", "mois": "mois"}
    for name, entries in files.items():
        entries.sort(key=lambda e: e["code"])
        assign_tools(entries, prefix[name])
        dump(HERE / f"{name}.yaml", entries)
    meta = {name: [{"code": e["code"], "tool": e["tool"], "method": e["_method"], "bom": e["_bom"]} for e in entries]
            for name, entries in files.items()}
    (HERE / "methods_index.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
    for name, entries in files.items():
        print(name, len(entries))


if __name__ == "__main__":
    main()

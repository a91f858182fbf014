"""`kopa-gen demo`: a cross-platform chain on the embedded sandbox, through the generated MCP servers and the
official MCP client (no keys, no network). It shows the pieces agree: a company found in DART is the same company
in FSC, its address is a real legal district, and schools of that district are in NEIS. Then it runs the
benchmark tasks with the reference policies (the oracle, scripted baselines and adversarial answers)."""

from __future__ import annotations

import time
from contextlib import AsyncExitStack
from typing import Any

from mcp import Client

from kopa_gen.compose import sandbox_client
from kopa_gen.mcp.generated import generated_module
from kopa_gen.project import Project
from kopa_gen.sandbox.local import open_sandbox


class DemoFailed(Exception):
    """A step of the demo chain answered with a tool error (the sandbox or a generated server is broken)."""


async def run_demo(project: Project) -> int:
    sandbox = open_sandbox(project)
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for platform in project.platforms:
            http = sandbox_client(sandbox, platform.id)
            stack.push_async_callback(http.aclose)
            server = generated_module(platform.id, root=project.root).create_server(http)
            clients[platform.id] = await stack.enter_async_context(Client(server))

        async def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            start = time.perf_counter()
            result = await clients[tool.split("_", 1)[0]].call_tool(tool, args)
            ms = (time.perf_counter() - start) * 1000
            text = " ".join(getattr(block, "text", "") for block in result.content)
            if result.is_error:
                raise DemoFailed(f"demo failed at {tool}({args}): {text}")
            data: dict[str, Any] = result.structured_content or {}
            shown = f"total {data['total_count']}" if "total_count" in data else "record"
            print(f"  {tool:32} {str(args)[:70]:72} -> {shown} ({ms:.1f} ms)")
            return data

        print("1. DART corp-code lookup, company overview")
        codes = await call("dart_corp_code", {"corp_name": "삼성전자"})
        samsung = next(r for r in codes["rows"] if r["stock_code"] == "005930")
        company = (await call("dart_company", {"corp_code": samsung["corp_code"]}))["record"]
        print("2. FSC: the same company by its registration number, its stock prices")
        outline = await call("fsc_get_corp_outline", {"crno": company["jurir_no"], "numOfRows": 1})
        assert outline["rows"][0]["fssCorpUnqNo"] == samsung["corp_code"]
        prices = await call("fsc_get_stock_prices", {"likeSrtnCd": "005930", "numOfRows": 3})
        latest = prices["rows"][0]
        print("3. DART and FSC financials agree")
        accounts = await call(
            "dart_major_accounts",
            {"corp_code": samsung["corp_code"], "bsns_year": "2025", "reprt_code": "11011"},
        )
        revenue = next(r for r in accounts["rows"] if r["account_nm"] == "매출액" and r["fs_div"] == "CFS")[
            "thstrm_amount"
        ]
        summary = await call("fsc_get_financial_summary", {"crno": company["jurir_no"], "bizYear": "2025"})
        fsc_revenue = next(r for r in summary["rows"] if r["fnclDcd"] == "110")["enpSaleAmt"]
        assert revenue.replace(",", "") == fsc_revenue, (revenue, fsc_revenue)
        print("4. The head office's legal district, and schools there")
        gu = " ".join(company["adres"].split()[:3])
        regions = await call("region_list_legal_districts", {"locatadd_nm": gu, "numOfRows": 100})
        dong = next(
            r for r in regions["rows"] if r["umd_cd"] != "000" and r["locallow_nm"] in company["adres"]
        )
        schools = await call("neis_search_schools", {"ATPT_OFCDC_SC_CODE": "J10", "SCHUL_NM": "매탄"})
        in_gu = [s for s in schools["rows"] if s["ORG_RDNMA"].startswith(gu)]
        print("5. The largest handoff: every stock price row, paged")
        everything = await call("fsc_get_stock_prices", {"numOfRows": 1000, "pageNo": 1})
    print()
    print(f"{samsung['corp_name']} corp_code {samsung['corp_code']} stock {samsung['stock_code']}")
    print(f"  closing price {latest['basDt']}: {int(latest['clpr']):,} won; 2025 revenue (CFS) {revenue} won")
    print(f"  head office {company['adres']!r} -> legal district {dong['region_cd']} ({dong['locatadd_nm']})")
    print(f"  schools named like '매탄' in {gu}: {len(in_gu)}")
    print(f"  unfiltered stock-price records: {everything['total_count']:,}")
    await benchmark(project)
    return 0


POLICIES = {
    "oracle": "replays the gold chain, pages to the end",
    "shortcut": "asks the API to sort or filter where the gold reads every page",
    "no-lookup": "skips the code lookup, sends the documented example code",
    "first-page": "never pages",
    "first-row": "takes the first candidate wherever the chain picks one",
    "last-row": "takes the last candidate wherever the chain picks one",
    "pool-guess": "the gold calls, then one answer-pool candidate at random",
    "list-all": "submits every candidate it saw",
    "all-candidates": "submits every candidate of every step",
    "dump": "pastes its last tool results",
    "do-nothing": "answers at once",
}


async def benchmark(project: Project) -> None:
    """The benchmark with the reference policies (not models), in submit mode: the oracle must score 1.0; the
    baselines show the failure modes the tasks are built to catch, and the adversarial ones what the grader lets
    through (a sound benchmark: 0); the last line is pool-guess's exact expectation. One line per policy: pass@1
    per domain, mean ACTION."""
    import tempfile
    from pathlib import Path

    from kopa_gen.evaluate.guess import by_domain, guesses, summary_line
    from kopa_gen.evaluate.report import results
    from kopa_gen.evaluate.runner import EvalConfig, load_fixture, run_eval
    from kopa_gen.evaluate.stats import summarize

    if not project.tasks:
        return
    domains = sorted({t.domain for _, t in project.tasks})
    print(
        f"\nKOPA-Bench, {len(project.tasks)} tasks, reference policies (pass@1; ACTION is reported, never rewarded)"
    )
    print(f"| policy | {' | '.join(domains)} | all | ACTION | what it does |")
    print("|---|" + "---|" * (len(domains) + 3))
    with tempfile.TemporaryDirectory() as tmp:
        for name, what in POLICIES.items():
            records = await run_eval(project, EvalConfig(policy=name, out=Path(tmp) / name, rollouts=1))
            rows = {row.domain: row for row in summarize(results(records), k=1)}
            cells = " | ".join(f"{rows[d].pass_at_1:.2f}" for d in domains)
            print(f"| {name} | {cells} | {rows['all'].pass_at_1:.2f} | {rows['all'].action:.2f} | {what} |")
        chosen = [(t, load_fixture(project, t)) for _, t in project.tasks]
        found = guesses(chosen, "submit")
        expected = by_domain(found, 1)
        cells = " | ".join(f"{expected[d][0]:.2f}" for d in domains)
        print(
            f"| pool-guess, exact | {cells} | {expected['all'][0]:.2f} | - | what guessing is expected to earn |"
        )
    print(summary_line(found, 4))

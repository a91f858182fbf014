"""The broken-spec table: each mutation below is applied to a copy of this repository's specs, `kopa-gen build`
runs on the copy as a user would, and one row says what it printed (its first error line), whether a Python
traceback reached the user, and whether it left a file in the cache.

    python scripts/broken_specs.py            # markdown table on stdout (about 2 minutes)
    python scripts/broken_specs.py -k utf     # only the mutations whose name contains 'utf'
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kopa_gen.cache import cache_dir

ROOT = Path(__file__).resolve().parent.parent
FSC = "specs/platforms/fsc/openapi.yaml"
DART = "specs/platforms/dart/openapi.yaml"
REGION = "specs/platforms/region/openapi.yaml"
ASSEMBLY_CATALOG = "specs/platforms/assembly/catalog.yaml"
WORLD = "specs/world/world.yaml"
FSC_WORLD = "specs/world/fsc.yaml"
WORKSPACE_WORLD = "specs/world/workspace.yaml"
TASK = "specs/tasks/finance/fin-001.yaml"


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str
    old: str | bytes
    new: str | bytes
    count: int = 1  # how many occurrences to replace


def _mutations() -> list[Mutation]:
    m = Mutation
    return [
        # ------------------------------------------------------------------ platform spec: the file
        m("file is not UTF-8", FSC, b"platform: fsc", b"platform: fsc\n# caf\xe9"),
        m(
            "YAML syntax error (bad indentation)",
            FSC,
            "  domain: finance\n",
            "  domain: finance\n envelope: x\n",
        ),
        m("x-kopa key given twice", FSC, "  envelope: datagokr\n", "  envelope: datagokr\n  envelope: hub\n"),
        m(
            "unquoted comma in a flow mapping",
            FSC,
            '{code: "00", message: "NORMAL SERVICE.", category: ok}',
            "{code: '00', message: NORMAL, SERVICE, category: ok}",
        ),
        m("unknown x-kopa field", FSC, "  envelope: datagokr\n", "  envelope: datagokr\n  bogus_key: 1\n"),
        # ------------------------------------------------------------------ platform spec: x-kopa facts
        m("unknown envelope family", FSC, "  envelope: datagokr\n", "  envelope: datagokrr\n"),
        m("unknown domain", FSC, "  domain: finance\n", "  domain: fnance\n"),
        m("result code listed twice", FSC, '    - {code: "01",', '    - {code: "00",'),
        m("answer names an unknown code", FSC, '    ok: "00"', '    ok: "000"'),
        m(
            "page-size default above maximum",
            FSC,
            "default_size: 10, max_size: 10000",
            "default_size: 20000, max_size: 10000",
        ),
        m(
            "key_pattern is not a regex",
            FSC,
            'key_pattern: "^[A-Za-z0-9+/]{86}==$"',
            'key_pattern: "^[A-Za-z0-9+/{86}==$"',
        ),
        m(
            "key_pattern no sandbox key matches",
            FSC,
            'key_pattern: "^[A-Za-z0-9+/]{86}==$"',
            'key_pattern: "^KEY-[a-z]{5}$"',
        ),
        m(
            "world file the world lacks",
            DART,
            "  world: [companies.yaml, dart.yaml]",
            "  world: [companies.yaml, dartt.yaml]",
        ),
        # ------------------------------------------------------------------ platform spec: operations
        m("parameter pattern is not a regex", FSC, "pattern: '^[0-9]{8}$'", "pattern: '^[0-9{8}$'"),
        m(
            "tool name without the platform prefix",
            FSC,
            "tool: fsc_get_stock_prices",
            "tool: get_stock_prices",
        ),
        m("tool name over 64 characters", FSC, "tool: fsc_get_stock_prices", "tool: fsc_" + "x" * 61),
        m("tool name used by two platforms", FSC, "tool: fsc_get_stock_prices", "tool: fsc_get_corp_outline"),
        m(
            "row schema does not exist",
            FSC,
            "row: '#/components/schemas/StockPrice'",
            "row: '#/components/schemas/StockPrices'",
        ),
        m("source table does not exist", FSC, "table: fsc_stock_prices", "table: fsc_stock_pricez"),
        m(
            "filter column in neither row nor view",
            DART,
            "column: last_reprt, match",
            "column: last_report, match",
        ),
        m(
            "sort column in neither row nor view",
            DART,
            "{column: corp_name, desc: true}",
            "{column: corp_nm, desc: true}",
        ),
        m("filter default names no parameter", DART, "default: [end_de, today]", "default: [end_dt, today]"),
        m("span names no parameter", DART, "span: {start: bgn_de,", "span: {start: bgn_dt,"),
        m(
            "group schema that is not a components pointer",
            DART,
            "            일반사항: '#/components/schemas/EquityRegistrationGeneral'",
            "            일반사항: 'EquityRegistrationGeneral'",
        ),
        m(
            "group schema that does not exist",
            DART,
            "            발행증권: '#/components/schemas/RestructuringRegistrationIssued'",
            "            발행증권: '#/components/schemas/RestructuringRegistrationIsued'",
        ),
        m(
            "file with both member and name_column",
            DART,
            "file: {name_column: file_name, content_column: content, missing: '014', text: plain",
            "file: {member: A.xml, name_column: file_name, content_column: content, missing: '014', text: plain",
        ),
        m(
            "filter on a parameter the operation lacks",
            FSC,
            "{param: basDt, column: basDt, match: eq}",
            "{param: baseDt, column: basDt, match: eq}",
        ),
        m(
            "filter on a column the row lacks",
            FSC,
            "{param: basDt, column: basDt, match: eq}",
            "{param: basDt, column: baseDt, match: eq}",
        ),
        m(
            "unknown filter match",
            FSC,
            "{param: basDt, column: basDt, match: eq}",
            "{param: basDt, column: basDt, match: equals}",
        ),
        m(
            "dangling $ref",
            FSC,
            "$ref: '#/components/schemas/StockPriceListResponse'",
            "$ref: '#/components/schemas/NoSuchResponse'",
        ),
        m(
            "effect neither read nor write",
            FSC,
            "tool: fsc_get_stock_prices\n        effect: read",
            "tool: fsc_get_stock_prices\n        effect: reads",
        ),
        # ------------------------------------------------------------------ world
        m("world file that does not exist", WORLD, "  - fsc.yaml\n", "  - fsc.yaml\n  - nope.yaml\n"),
        m("view reads a missing table", FSC_WORLD, "FROM fsc_stock_daily", "FROM fsc_stock_dayly"),
        m("unknown generator", FSC_WORLD, "generator: fsc_stock_daily", "generator: fsc_stock_dayly"),
        m(
            "index names a missing column",
            FSC_WORLD,
            "indexes: [[basDt], [idxNm, basDt]]",
            "indexes: [[basDt], [idxNm, baseDt]]",
        ),
        m("table defined twice", FSC_WORLD, "  - name: fsc_accounts\n", "  - name: fsc_industries\n"),
        m(
            "column type not text/integer/real",
            FSC_WORLD,
            "- {name: item, type: integer}",
            "- {name: item, type: int}",
        ),
        m("episode key names a missing column", WORKSPACE_WORLD, "key: [path]", "key: [paths]"),
        m(
            "entity names a missing column",
            WORLD,
            "  corp_code: companies.corp_code",
            "  corp_code: companies.corp_cd",
        ),
        # ------------------------------------------------------------------ tasks
        m("max_calls below the gold chain", TASK, "max_calls: 6", "max_calls: 1"),
        m("unknown system.keys", TASK, "keys: [dart]", "keys: [dartt]"),
        m("unknown tool in a gold call", TASK, "tool: dart_major_accounts", "tool: dart_major_account"),
        m(
            "path syntax error",
            TASK,
            'path: "rows[account_nm=매출액][fs_div=CFS].thstrm_amount"',
            'path: "rows[account_nm=매출액][fs_div=CFS.thstrm_amount"',
        ),
        m(
            "unknown function in a path",
            TASK,
            'path: "rows[account_nm=매출액][fs_div=CFS].thstrm_amount"',
            'path: "rows[account_nm=매출액][fs_div=CFS].thstrm_amount | nope"',
        ),
        m("ACTION in the reward", TASK, "reward: [RESPONSE]", "reward: [RESPONSE, ACTION]"),
        m("unknown domain in a task", TASK, "domain: finance", "domain: fnance"),
        m("answer the chain does not give", TASK, "value: 154329557000", "value: 154329557001"),
        # ------------------------------------------------------------------ catalogs
        m(
            "catalog file that does not exist",
            "specs/platforms/assembly/openapi.yaml",
            "catalog: [catalog.yaml]",
            "catalog: [catalogue.yaml]",
        ),
    ]


@dataclass(frozen=True)
class Row:
    name: str
    code: int
    first: str
    lines: int
    traceback: bool
    leftovers: int


def run_one(mutation: Mutation, work: Path) -> Row:
    project = work / "project"
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(ROOT / "specs", project / "specs")
    target = project / mutation.file
    data = target.read_bytes()
    old = mutation.old if isinstance(mutation.old, bytes) else mutation.old.encode()
    new = mutation.new if isinstance(mutation.new, bytes) else mutation.new.encode()
    if data.count(old) < mutation.count:
        raise SystemExit(
            f"{mutation.name}: {mutation.old!r} not found in {mutation.file}; update the mutation"
        )
    target.write_bytes(data.replace(old, new, mutation.count))
    # The user's cache: a mutation that loads reuses the built world (tasks and platforms do not change it).
    cache = cache_dir()
    before = {p for p in cache.rglob("*") if p.is_file()}
    env = {**os.environ, "KOPA_GEN_CACHE": str(cache)}
    env.pop("KOPA_GEN_ROOT", None)
    done = subprocess.run(
        [sys.executable, "-m", "kopa_gen", "--root", str(project), "build"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    out = (done.stderr + done.stdout).strip().splitlines()
    errors = [line for line in out if ": error: " in line or line.startswith("error")]
    first = (errors or out or [""])[0]
    leftovers = sum(1 for p in cache.rglob("*") if p.is_file() and ".tmp" in p.name and p not in before)
    return Row(mutation.name, done.returncode, first, len(out), "Traceback" in done.stderr, leftovers)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-k", default="", help="only mutations whose name contains this")
    args = parser.parse_args()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for mutation in _mutations():
            if args.k in mutation.name:
                rows.append(run_one(mutation, Path(tmp)))
                print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print("| mutation | exit | first error line (of N printed) | traceback | partial files |")
    print("|---|---|---|---|---|")
    for r in rows:
        first = r.first.replace("|", "\\|")
        print(
            f"| {r.name} | {r.code} | `{first}` ({r.lines}) | {'YES' if r.traceback else 'no'} | {r.leftovers} |"
        )
    bad = [r for r in rows if r.code == 0 or r.traceback or r.leftovers]
    print(
        f"\n{len(rows)} mutations: {len(rows) - len(bad)} rejected at load with their place, "
        f"{sum(r.traceback for r in rows)} tracebacks, {sum(r.code == 0 for r in rows)} accepted",
        file=sys.stderr,
    )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

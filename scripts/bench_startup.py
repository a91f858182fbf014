"""Start-up benchmark (not a test): time from spawning an MCP server over stdio to the complete `tools/list` answer,
kopa-gen's generated servers against FastMCP's `FastMCP.from_openapi` on the same OpenAPI documents.

Two catalogues: this repository's real specs (every platform in one server), and the SCALE FIXTURE of
scripts/scale_fixture.py (synthetic copies of the real operations, >= 2,318 tools across five platforms; built
with `kopa-gen --root DIR build --no-world` first, since listing needs no world).

Both sides are spawned the same way, as a user's MCP host would: a subprocess on stdio, the official `mcp` client
(`stdio_client` + `ClientSession`), the clock running from spawn through `initialize` to the `list_tools` result
(client-side parsing included). Ours is `python -m kopa_gen --root DIR serve <every platform>`. FastMCP's is this
file's `fastmcp-serve` command: one `FastMCP` that mounts `FastMCP.from_openapi(openapi_spec=doc,
client=httpx2.AsyncClient(base_url=<servers[0].url>))` per platform document (fastmcp 4 takes an `httpx2`
client). The documents are handed to it pre-converted from YAML to JSON, so YAML parsing is not counted against
it; they keep their `x-kopa` extensions unless FastMCP fails on them, in which case they are stripped and the
table says so. FastMCP is optional (`pip install fastmcp`, never a project dependency); without it its column
is skipped.

With --first-call it times, instead, the first tool call after the listing (the server opens the project and the
sandbox then, for the connection), one argument-free tool per platform of the real specs, and a second call.

Usage: python scripts/bench_startup.py [--repeat 3] [--fixture DIR] [--copies N] [--first-call]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from scale_fixture import LABEL, build_scale_project, write_scale_project  # noqa: E402


@dataclass(frozen=True)
class Sample:
    ready_s: float  # spawn -> initialize answered
    total_s: float  # spawn -> tools/list answered and parsed
    tools: int
    list_bytes: int


@dataclass(frozen=True)
class Catalogue:
    label: str
    root: Path
    platforms: tuple[str, ...]


async def time_listing(command: list[str]) -> Sample:
    """Spawn `command` as an MCP stdio server; time it to `initialize` and to the full `tools/list` result."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    with open(os.devnull, "w") as errlog:
        start = time.perf_counter()
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            ready = time.perf_counter() - start
            listed = await session.list_tools()
            total = time.perf_counter() - start
    if listed.next_cursor is not None:
        raise RuntimeError(f"{command}: tools/list is paginated; this benchmark times one complete answer")
    # The answer's size as compact UTF-8 JSON (what the server wrote, re-serialized on the client side).
    size = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
    return Sample(ready, total, len(listed.tools), size)


@dataclass(frozen=True)
class FirstCall:
    tool: str
    first_s: float  # tools/list answered -> the first tools/call answered (the platform opened for it)
    second_s: float  # a second call of the same tool
    is_error: bool


async def time_first_call(command: list[str], tool: str) -> FirstCall:
    """Spawn `command`, list its tools, then call `tool` (one that needs no argument) twice; time each call."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            start = time.perf_counter()
            first = await session.call_tool(tool, {})
            middle = time.perf_counter()
            await session.call_tool(tool, {})
            end = time.perf_counter()
    return FirstCall(tool, middle - start, end - middle, bool(first.is_error))


def argumentless_tools(root: Path, platforms: tuple[str, ...]) -> list[str]:
    """Per platform, its first listed tool that requires no argument (read from the generated listing)."""
    found = []
    for pid in platforms:
        listing = json.loads(
            (root / "generated" / "servers" / pid / "tools.json").read_text(encoding="utf-8")
        )
        tools = listing["tools"] if isinstance(listing, dict) else listing
        free = [t["name"] for t in tools if not t["inputSchema"].get("required")]
        if free:
            found.append(free[0])
    return found


async def bench_first_calls(catalogue: Catalogue, repeat: int) -> None:
    print()
    print(
        f"{catalogue.label}: tools/list answered -> first tools/call answered, every platform served, median of "
        f"{repeat} spawns (ms)"
    )
    print(f"{'tool':48} {'first ms':>9} {'second ms':>10}")
    for tool in argumentless_tools(catalogue.root, catalogue.platforms):
        samples = [await time_first_call(ours(catalogue), tool) for _ in range(repeat)]
        said = " (answered with an error)" if any(s.is_error for s in samples) else ""
        first = statistics.median(s.first_s for s in samples) * 1000
        second = statistics.median(s.second_s for s in samples) * 1000
        print(f"{tool:48} {first:9.0f} {second:10.0f}{said}")


def ours(catalogue: Catalogue) -> list[str]:
    return [sys.executable, "-m", "kopa_gen", "--root", str(catalogue.root), "serve", *catalogue.platforms]


def fastmcp_documents(catalogue: Catalogue, folder: Path, strip: bool) -> list[str]:
    """The catalogue's OpenAPI documents as JSON files (optionally without x-kopa), for the FastMCP launcher: each
    platform's document as loaded, bulk catalogs expanded into ordinary paths (the openapi.yaml of a catalog
    platform alone has almost none), so both sides list the same operations."""
    from kopa_gen.project import load_project

    project = load_project(catalogue.root)
    paths = []
    for pid in catalogue.platforms:
        doc = project.platform(pid).doc
        if strip:
            doc = strip_extensions(doc)
        out = folder / f"{pid}{'-stripped' if strip else ''}.json"
        out.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        paths.append(str(out))
    return paths


def strip_extensions(node: Any) -> Any:
    """The document without `x-kopa` keys (our extension facts), anywhere."""
    if isinstance(node, dict):
        return {k: strip_extensions(v) for k, v in node.items() if k != "x-kopa"}
    if isinstance(node, list):
        return [strip_extensions(v) for v in node]
    return node


FASTMCP_PYTHON = os.environ.get("FASTMCP_PYTHON") or sys.executable
"""The interpreter of the FastMCP side: `FASTMCP_PYTHON=/path/to/venv/bin/python` keeps fastmcp (and the mcp and
pydantic versions it pins) out of this project's environment."""


def fastmcp(documents: list[str]) -> list[str]:
    return [FASTMCP_PYTHON, str(Path(__file__).resolve()), "fastmcp-serve", *documents]


def fastmcp_serve(documents: list[str]) -> None:
    """The FastMCP side: one server mounting `FastMCP.from_openapi` of every document, on stdio."""
    import httpx2
    from fastmcp import FastMCP

    server = FastMCP("fastmcp-openapi")
    for path in documents:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        client = httpx2.AsyncClient(base_url=doc["servers"][0]["url"])
        server.mount(FastMCP.from_openapi(openapi_spec=doc, client=client, name=Path(path).stem))
    server.run(transport="stdio", show_banner=False)


def median(samples: list[Sample]) -> Sample:
    return Sample(
        statistics.median(s.ready_s for s in samples),
        statistics.median(s.total_s for s in samples),
        samples[0].tools,
        samples[0].list_bytes,
    )


def real_catalogue() -> Catalogue:
    platforms = tuple(sorted(p.parent.name for p in (REPO / "specs" / "platforms").glob("*/openapi.yaml")))
    return Catalogue("real specs", REPO, platforms)


def scale_catalogue(folder: Path, copies: int | None) -> Catalogue:
    tools = write_scale_project(folder, copies)
    print(f"{LABEL}: {tools} tools in {folder}; building ...", file=sys.stderr)
    build_scale_project(folder, world=False)
    platforms = tuple(sorted(p.parent.name for p in (folder / "specs" / "platforms").glob("*/openapi.yaml")))
    return Catalogue(f"{LABEL.split(' (')[0].lower()}", folder, platforms)


async def bench(catalogues: list[Catalogue], repeat: int, work: Path) -> None:
    has_fastmcp = sys.executable != FASTMCP_PYTHON or importlib.util.find_spec("fastmcp") is not None
    if not has_fastmcp:
        print(
            "fastmcp is not installed (pip install fastmcp); the FastMCP column is skipped.", file=sys.stderr
        )
    rows = []
    for catalogue in catalogues:
        strip = False
        documents = fastmcp_documents(catalogue, work, strip) if has_fastmcp else []
        our_samples: list[Sample] = []
        their_samples: list[Sample] = []
        for _ in range(repeat):  # interleaved, so that load on the machine hits both sides alike
            our_samples.append(await time_listing(ours(catalogue)))
            if not has_fastmcp:
                continue
            try:
                their_samples.append(await time_listing(fastmcp(documents)))
            except Exception as exc:  # FastMCP failing on our documents is a finding, reported below
                if strip:
                    raise
                print(
                    f"FastMCP failed on {catalogue.label} with x-kopa ({exc!r}); retrying stripped",
                    file=sys.stderr,
                )
                strip = True
                documents = fastmcp_documents(catalogue, work, strip)
                their_samples.append(await time_listing(fastmcp(documents)))
        rows.append((catalogue, median(our_samples), median(their_samples) if their_samples else None, strip))
    print()
    print(
        f"spawn -> complete tools/list over stdio, median of {repeat} (ms); ready = spawn -> initialize answered"
    )
    head = f"{'catalogue':24} {'tools':>6} {'ours ms':>8} {'(ready)':>8} {'FastMCP ms':>11} {'(ready)':>8} "
    head += f"{'ratio':>6} {'ours list bytes':>16} {'FastMCP bytes':>14}"
    print(head)
    for catalogue, mine, theirs, stripped in rows:
        line = f"{catalogue.label:24} {mine.tools:6d} {mine.total_s * 1000:8.0f} {mine.ready_s * 1000:8.0f} "
        if theirs is None:
            line += f"{'skipped':>11} {'':>8} {'':>6} {mine.list_bytes:16,d} {'':>14}"
        else:
            if theirs.tools != mine.tools:
                line += f"(FastMCP listed {theirs.tools} tools) "
            line += f"{theirs.total_s * 1000:11.0f} {theirs.ready_s * 1000:8.0f} "
            line += f"{theirs.total_s / mine.total_s:5.1f}x {mine.list_bytes:16,d} {theirs.list_bytes:14,d}"
            if stripped:
                line += "  (FastMCP given the documents without x-kopa)"
        print(line)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "fastmcp-serve":
        fastmcp_serve(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="spawns per server and catalogue (median)")
    parser.add_argument("--fixture", help="folder for the scale fixture (default: a temporary folder)")
    parser.add_argument(
        "--copies", type=int, default=None, help="copies of every real operation in the fixture"
    )
    parser.add_argument("--real-only", action="store_true", help="only this repository's own specs")
    parser.add_argument(
        "--first-call",
        action="store_true",
        help="instead: time the first tool call after the listing, one tool per platform of the real specs",
    )
    args = parser.parse_args()
    if args.first_call:
        asyncio.run(bench_first_calls(real_catalogue(), args.repeat))
        return 0
    with tempfile.TemporaryDirectory(prefix="kopa-bench-startup-") as tmp:
        work = Path(tmp)
        fixture = Path(args.fixture) if args.fixture else work / "scale"
        catalogues = [real_catalogue()]
        if not args.real_only:
            catalogues.append(scale_catalogue(fixture, args.copies))
        asyncio.run(bench(catalogues, args.repeat, work))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

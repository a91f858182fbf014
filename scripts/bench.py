"""Benchmarks for the closing notes (not a test): build, world, per-call latency, deep pages, tool payloads.

Usage: python scripts/bench.py [--fresh-world]   (--fresh-world rebuilds the world in a temporary cache)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time

import httpx

from kopa_gen.compile.build import build
from kopa_gen.compose import SANDBOX_HOST, sandbox_client
from kopa_gen.mcp.generated import generated_module
from kopa_gen.project import find_root, load_project
from kopa_gen.sandbox.config import SandboxConfig, sandbox_key
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.build import ensure_world
from kopa_gen.world.parallel import world_workers


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(samples: list[float]) -> str:
    return f"p50 {pct(samples, 0.5) * 1000:.2f} ms, p99 {pct(samples, 0.99) * 1000:.2f} ms (n={len(samples)})"


async def latency(project: object, n: int) -> None:
    # Limits off: the loop below calls far faster than the platforms' per-second rates allow.
    sandbox = open_sandbox(project, SandboxConfig(limits=False))  # type: ignore[arg-type]
    platform = sandbox.platforms["region"]
    args = {"locatadd_nm": "서울특별시 송파구", "numOfRows": 10}
    direct: list[float] = []
    tool: list[float] = []
    transport = httpx.ASGITransport(app=sandbox.app)
    url = SANDBOX_HOST + sandbox.prefix(platform) + "/getStanReginCdList"
    query = {"ServiceKey": sandbox_key(platform), "type": "json", **{k: str(v) for k, v in args.items()}}
    async with httpx.AsyncClient(transport=transport) as http, sandbox_client(sandbox, "region") as client:
        box = generated_module("region").create_toolbox(client)
        for _ in range(n):  # interleaved, so warm-up and caches favour neither side
            t = time.perf_counter()
            (await http.get(url, params=query)).json()
            direct.append(time.perf_counter() - t)
            t = time.perf_counter()
            out = await box.call("region_list_legal_districts", args)
            tool.append(time.perf_counter() - t)
            assert not out.is_error
    print(f"direct httpx call to the sandbox (region, 10 rows): {ms(direct)}")
    print(f"in-process tool call (ToolBox -> client -> sandbox): {ms(tool)}")
    print(f"ratio tool/direct p50: {pct(tool, 0.5) / pct(direct, 0.5):.2f}")

    if "fsc" in sandbox.platforms:
        async with sandbox_client(sandbox, "fsc") as client:
            box = generated_module("fsc").create_toolbox(client)
            first = await box.call("fsc_get_stock_prices", {"numOfRows": 1000, "pageNo": 1})
            assert first.structured is not None
            total = first.structured["total_count"]
            deep_page = 225 if total > 225_000 else total // 1000
            deep: list[float] = []
            for _ in range(20):
                t = time.perf_counter()
                out = await box.call("fsc_get_stock_prices", {"numOfRows": 1000, "pageNo": deep_page})
                deep.append(time.perf_counter() - t)
                assert out.structured is not None and len(out.structured["rows"]) == 1000
            print(
                f"stock prices: total {total:,}; page {deep_page} of 1,000 rows (offset {(deep_page - 1) * 1000:,}): {ms(deep)}"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fresh-world", action="store_true")
    parser.add_argument("-n", type=int, default=300)
    args = parser.parse_args()
    root = find_root()

    t = time.perf_counter()
    project = load_project(root)
    print(f"load and check all specs: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    build(project, force=True)
    print(f"full build (all platforms): {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    report = build(project)
    print(f"no-op rebuild: {time.perf_counter() - t:.3f} s (skipped {len(report.skipped)} platforms)")
    for p in project.platforms:
        size = (root / "generated" / "servers" / p.id / "tools.json").stat().st_size
        print(f"tools.json {p.id}: {len(p.operations)} tools, {size / 1024:.1f} KiB")

    if args.fresh_world:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["KOPA_GEN_CACHE"] = tmp
            lines: list[str] = []
            cpu = _cpu()
            world = ensure_world(project.world, progress=lines.append)
            cpu = _cpu() - cpu
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())  # the machine may be shared: wall vs CPU
            print(
                f"world build: {world.seconds:.1f} s ({cpu:.1f} s CPU with its {world_workers()} worker "
                f"process(es), load {load}), {world.path.stat().st_size / 2**20:.0f} MiB, peak memory: this "
                f"process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB, largest worker "
                f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB"
            )
            print(lines[-1].strip())
            timed = [line for line in lines if line.endswith("s)")]
            slowest = sorted(timed, key=lambda line: float(line.rsplit("(", 1)[1].rstrip("s)")), reverse=True)
            print("slowest world tables:\n" + "\n".join(slowest[:8]))
            asyncio.run(latency(project, args.n))
            return
    world = ensure_world(project.world)
    print(
        f"world: {world.path.stat().st_size / 2**20:.0f} MiB ({'built ' + format(world.seconds, '.1f') + ' s' if world.fresh else 'cached'})"
    )
    asyncio.run(latency(project, args.n))


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended (the world build's workers)."""
    own, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime


if __name__ == "__main__":
    main()

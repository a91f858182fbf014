"""`kopa-gen sandbox serve` under load (not a test): N concurrent HTTP clients over a real socket, requests/s, p50, p99.

Usage: python scripts/bench_serve.py [--clients 50] [--seconds 10] [--workers 1] [--floor] [--wrk]
`--wrk` drives the load with wrk (a C load generator; Debian: `apt-get install wrk`) instead of Python clients,
which on this 2-core machine take as much CPU as the server and hide its ceiling. `--floor` also measures the same load against a bare uvicorn + Starlette app that answers every request with one
fixed 2 KB JSON body, under the same server settings: the ceiling this machine, this client and this server stack
allow before any sandbox work. The mix: stock-price pages at random depths (10 rows), stock prices by part of a short code (`likeSrtnCd`), and the
legal-district list; keys and paths as the printed table of `kopa-gen sandbox serve` gives them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx

from kopa_gen.project import find_root, load_project
from kopa_gen.sandbox.config import sandbox_key

CODES = ["005930", "000660", "035420", "0059", "0003"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def requests(base: str) -> list[tuple[str, dict[str, str]]]:
    """The request mix (a list to draw from)."""
    project = load_project(find_root())
    fsc, region = project.platform("fsc"), project.platform("region")
    stock = f"{base}/fsc{fsc.base_path}" + fsc.operation("getStockPriceInfo_V2").path
    districts = f"{base}/region{region.base_path}/getStanReginCdList"
    fkey, rkey = sandbox_key(fsc), sandbox_key(region)
    rng = random.Random(7)
    out: list[tuple[str, dict[str, str]]] = []
    for _ in range(200):
        out.append(
            (
                stock,
                {
                    "serviceKey": fkey,
                    "resultType": "json",
                    "numOfRows": "10",
                    "pageNo": str(rng.randint(1, 30000)),
                },
            )
        )
        out.append(
            (
                stock,
                {
                    "serviceKey": fkey,
                    "resultType": "json",
                    "numOfRows": "10",
                    "likeSrtnCd": rng.choice(CODES),
                },
            )
        )
        out.append(
            (districts, {"ServiceKey": rkey, "type": "json", "numOfRows": "10", "locatadd_nm": "서울특별시"})
        )
    return out


async def load(mix: list[tuple[str, dict[str, str]]], clients: int, seconds: float) -> list[float]:
    latencies: list[float] = []
    stop = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:

        async def client(i: int) -> None:
            n = i
            while time.perf_counter() < stop:
                url, params = mix[n % len(mix)]
                n += clients
                t = time.perf_counter()
                r = await http.get(url, params=params)
                latencies.append(time.perf_counter() - t)
                if r.status_code != 200:
                    raise SystemExit(f"HTTP {r.status_code} from {url}: {r.text[:200]}")

        await asyncio.gather(*(client(i) for i in range(clients)))
    return latencies


def load_wrk(
    base: str, mix: list[tuple[str, dict[str, str]]], clients: int, seconds: float
) -> tuple[float, float, float]:
    """(requests/s, p50 s, p99 s) from wrk, which sends the mix's requests in turn over `clients` connections."""
    paths = [url.removeprefix(base) + "?" + urllib.parse.urlencode(params) for url, params in mix]
    script = "local paths = {" + ",".join(f'"{p}"' for p in paths) + "}\nlocal i = 0\n"
    script += "request = function()\n  i = i + 1\n  return wrk.format('GET', paths[(i % #paths) + 1])\nend\n"
    script += "response = function(status)\n  if status ~= 200 then error('HTTP ' .. status) end\nend\n"
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:  # holds sandbox keys: removed on exit
        lua.write(script)
        lua.flush()
        cmd = ["wrk", "-t", "2", "-c", str(clients), "-d", f"{seconds:g}s", "--latency", "-s", lua.name, base]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise SystemExit("wrk saw failed requests:\n" + out)

    def ms(label: str) -> float:
        value, unit = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\b", out, re.M).groups()  # type: ignore[union-attr]
        return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return rps, ms("50%"), ms("99%")


def floor_app() -> Any:
    """The bare server of `--floor`: every path answers the same 2 KB JSON body."""
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    body = b'{"response":{"header":{"resultCode":"00"},"body":{"items":"' + b"x" * 2000 + b'"}}}'

    async def answer(request: Any) -> Response:
        return Response(body, media_type="application/json")

    return Starlette(routes=[Route("/{rest:path}", answer)])


def serve_figures(
    clients: int = 50, seconds: float = 10.0, workers: int = 1, floor: bool = False, wrk: bool = False
) -> tuple[float, float, float]:
    """(requests/s, p50 s, p99 s) of `clients` concurrent clients against a fresh `kopa-gen sandbox serve` (or,
    with `floor`, the bare app of `floor_app` served by uvicorn the same way)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "kopa_gen", "sandbox", "serve", "--no-limits", "--port", str(port)]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    if floor:
        cmd = [sys.executable, "-m", "uvicorn", "--factory", "bench_serve:floor_app", "--port", str(port)]
        cmd += ["--log-level", "warning", "--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)
    try:
        mix = requests(base)
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(base + "/", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("sandbox serve did not start") from None
                time.sleep(0.3)
        for url, params in mix:  # warm-up, one at a time: counts and bookmarks cached in every worker
            for _ in range(workers):
                httpx.get(url, params=params, timeout=120)
        if wrk:
            return load_wrk(base, mix, clients, seconds)
        asyncio.run(load(mix, clients, 1.0))  # connections open
        t = time.perf_counter()
        lat = sorted(asyncio.run(load(mix, clients, seconds)))
        wall = time.perf_counter() - t
        return len(lat) / wall, lat[len(lat) // 2], lat[min(len(lat) - 1, int(0.99 * len(lat)))]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--floor", action="store_true", help="also measure a bare server under the same load")
    parser.add_argument("--wrk", action="store_true", help="load from wrk (C) instead of Python clients")
    args = parser.parse_args()
    if args.wrk and shutil.which("wrk") is None:
        raise SystemExit("--wrk: no wrk on PATH; install it (Debian: apt-get install wrk) or drop --wrk")
    by = "wrk" if args.wrk else "Python clients"
    rps, p50, p99 = serve_figures(args.clients, args.seconds, args.workers, wrk=args.wrk)
    print(
        f"sandbox serve, {args.clients} {by}, {args.workers} worker(s): {rps:,.0f} requests/s, "
        f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms   (goal >= 2,000 requests/s, p99 <= 50 ms)"
    )
    if args.floor:
        rps, p50, p99 = serve_figures(args.clients, args.seconds, args.workers, floor=True, wrk=args.wrk)
        print(
            f"floor (bare uvicorn + Starlette, fixed body), same load: {rps:,.0f} requests/s, "
            f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()

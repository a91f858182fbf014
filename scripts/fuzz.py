"""Fuzz what users and models can send: malformed tool calls (through the same Session the evaluator uses),
malformed HTTP requests (to the sandbox over real loopback HTTP) and malformed command lines (kopa-gen's own
`main`). Prints, per surface, how many inputs were sent and how each was answered; the goal is 0 crashes,
0 tracebacks shown, 0 HTTP 5xx, 0 keys leaked.

    python scripts/fuzz.py                      # every tool of every platform, 40 mutations each, seed 0
    python scripts/fuzz.py --per-tool 200 --seed 3 --http 5000 --cli 400

Inputs are drawn from the specs (every tool's input schema, every operation's path and parameters), so a new
platform is fuzzed without changes here. Deterministic by seed."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import random
import socket
import sys
import threading
import time
import traceback
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn

from kopa_gen.cli import main as cli_main
from kopa_gen.project import Project, load_project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig, sandbox_key
from kopa_gen.sandbox.local import open_sandbox

ROOT = Path(__file__).resolve().parents[1]

# values that break naive code: wrong types, edges of numbers, Python-only integer syntax, huge and hostile text
NASTY: list[Any] = [
    None, True, False, 0, -1, 1.5, 10**30, float("inf"), "", " ", "0", "-1", "1_0", "١٢", " 5", "5 ", "1e3",
    "null", "가" * 7300, "x" * 20000, "\x00", "\ud7a3\u200b", "😀", "'; DROP TABLE t;--", "../../etc/passwd",
    "%00", "%ZZ", "a&b=c", "<x>&amp;</x>", "\r\nX-Injected: 1", [], [1, "a"], {}, {"a": {"b": [None]}},
]  # fmt: skip


def mutations(schema: dict[str, Any], rng: random.Random, n: int) -> Iterator[Any]:
    """`n` malformed argument objects for a tool with `schema` (its MCP inputSchema)."""
    props: dict[str, Any] = schema.get("properties") or {}
    names = list(props)
    yield from (None, [], "not an object", 17, {"__unknown__": 1}, {})
    for _ in range(max(0, n - 6)):
        args: dict[str, Any] = {}
        for name in names:  # a plausible value for most, a nasty one for some
            if rng.random() < 0.5:
                example = props[name].get("examples") or props[name].get("enum") or ["1"]
                args[name] = rng.choice(example)
        for name in rng.sample(names, k=min(len(names), rng.randint(1, 3))) if names else []:
            args[name] = rng.choice(NASTY)
        if rng.random() < 0.2:
            args[f"unknown_{rng.randint(0, 9)}"] = rng.choice(NASTY)
        yield args


async def fuzz_tools(project: Project, per_tool: int, seed: int) -> Counter[str]:
    rng = random.Random(seed)
    keys = {sandbox_key(p) for p in project.platforms if not p.kopa.local}
    counts = Counter({"crash (exception escaped Session.call)": 0, "traceback in result": 0, "key leaked": 0})
    platforms = sorted(p.id for p in project.platforms)
    async with Session.open(project, platforms, sandbox=SandboxConfig(limits=False)) as session:
        tools = session.tools()
        cases: list[tuple[str, Any]] = [
            (t["name"], a) for t in tools for a in mutations(t["inputSchema"], rng, per_tool)
        ]
        cases += [("no_such_tool", {}), ("", {}), ("dart_" + "x" * 300, {"a": 1})]
        for name, args in cases:
            try:
                outcome = await session.call(name, args)
            except Exception:
                counts["crash (exception escaped Session.call)"] += 1
                print(f"CRASH {name} {args!r:.200}\n{traceback.format_exc()}")
                continue
            counts["tool error" if outcome.is_error else "answered"] += 1
            text = outcome.text + json.dumps(outcome.structured, ensure_ascii=False, default=str)
            if "Traceback (most recent call last)" in text:
                counts["traceback in result"] += 1
            if any(k in text for k in keys):
                counts["key leaked"] += 1
    counts["sent"] = len(cases)
    return counts


@contextlib.contextmanager
def served(project: Project) -> Iterator[str]:
    """The sandbox app on a loopback port (real HTTP), limits off so the fuzz is not answered by the quota."""
    sandbox = open_sandbox(project, SandboxConfig(limits=False))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(sandbox.app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def http_cases(project: Project, rng: random.Random, n: int) -> Iterator[tuple[str, str]]:
    """(method, raw path-and-query) pairs around every operation of every platform."""
    sandbox = open_sandbox(project)
    ops = [(p, op) for p in project.platforms for op in p.operations]
    for _ in range(n):
        platform, op = rng.choice(ops)
        base = sandbox.prefix(platform) + op.route
        params: list[tuple[str, str]] = list(op.fixed_query.items())
        for param in op.params:
            if rng.random() < 0.6:
                value = rng.choice(NASTY)
                params.append((param.name, value if isinstance(value, str) else json.dumps(value)))
        if not platform.kopa.local and rng.random() < 0.7:
            params.append((platform.key_param, rng.choice([sandbox_key(platform), "", "wrong", "%2B%2F"])))
        query = urllib.parse.urlencode(params)
        path = base
        roll = rng.random()
        if roll < 0.1:
            path = base + "/../../" + rng.choice(["etc/passwd", "x", "%2e%2e/"])
        elif roll < 0.2:
            path = f"/{platform.id}/no/such/path"
        elif roll < 0.25:
            path = "/" + "a" * rng.randint(1, 9000)
        elif roll < 0.3:
            query = query + "&" + "%FF%FE" + "=" + "%C3%28"  # invalid UTF-8 in name and value
        elif roll < 0.35:
            query = "&&&==&" + query + "&" + query  # empty pairs and every parameter twice
        method = rng.choice(["GET"] * 8 + ["POST", "HEAD", "PUT", "DELETE", "OPTIONS"])
        yield method, path + ("?" + query if query else "")


def raw_request(port: int, method: str, target: str) -> tuple[int, bytes]:
    """One request written byte for byte on a socket (no client library to tidy the target up first): the
    status code and body, or status 0 when the server closed the connection without an answer."""
    head = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(head.encode("utf-8", "surrogateescape"))
        with contextlib.suppress(ConnectionResetError):
            while chunk := conn.recv(65536):
                data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    parts = status_line.split()
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return status, rest.partition(b"\r\n\r\n")[2]


def fuzz_http(project: Project, n: int, seed: int) -> Counter[str]:
    rng = random.Random(seed)
    keys = {sandbox_key(p) for p in project.platforms if not p.kopa.local}
    counts = Counter({"HTTP 5xx": 0, "closed without an answer": 0, "traceback in body": 0, "key leaked": 0})
    with served(project) as base:
        port = int(base.rsplit(":", 1)[1])
        for method, target in http_cases(project, rng, n):
            status, body = raw_request(port, method, target)
            counts[f"HTTP {status // 100}xx" if status else "closed without an answer"] += 1
            if not status or status >= 500:
                print(f"{status or 'closed'}: {method} {target[:160]}")
            text = body.decode("utf-8", "replace")
            if "Traceback" in text:
                counts["traceback in body"] += 1
            if any(k in text for k in keys):
                counts["key leaked"] += 1
    counts["sent"] = n
    return counts


CLI_BAD: list[list[str]] = [
    ["call", "dart", "dart_company", "{corp_code: 1}"], ["call", "dart", "dart_company", "[1]"],
    ["call", "dart", "no_tool", "{}"], ["call", "nope", "x", "{}"], ["call", "dart"], ["call"],
    ["eval", "--policy", "oracle", "--concurrency", "0"], ["eval", "--policy", "oracle", "--rollouts", "-3"],
    ["eval", "--policy", "oracle", "--seeds", "x"], ["eval", "--policy", "openai"], ["eval"],
    ["eval", "--policy", "oracle", "--k", "0"], ["eval", "--policy", "oracle", "--tasks", "no-such-task"],
    ["eval", "--base-url", "not a url", "--model", "m", "--tasks", "no-such-task"],
    ["report"], ["report", "/no/such/run"], ["report", "/no/such/run", "--k", "-1"],
    ["score", "no-such-task", "--answer", "1"], ["score"], ["tools", "no-such-platform"], ["tools", "dart", "nope"],
    ["serve"], ["serve", "nope"], ["serve", "dart", "--transport", "tcp"], ["serve", "dart", "--port", "x"],
    ["sandbox"], ["sandbox", "serve", "--port", "-1"], ["sandbox", "serve", "--port", "99999"],
    ["edge"], ["edge", "synth"], ["edge", "synth", "--graph", "/no/such/graph.json", "--out", "/tmp/x"],
    ["train"], ["train", "export", "--tasks", "nope", "--out", "/tmp/kopa-fuzz-x"],
    ["train", "grpo", "--model", "nope", "--data-dir", "/no/such"], ["new"], ["new", "platform", "Bad Id!"],
    ["new", "platform", "x", "--family", "nope"], ["build", "--seed", "x"], ["demo", "--seed", "x"],
    ["--root", "/no/such/root", "build"], ["--root", "/no/such/root", "tools"], ["frobnicate"], [],
]  # fmt: skip


def fuzz_cli(n: int, seed: int) -> Counter[str]:
    """The fixed list of mistakes, then `n` random garbles of it: a nasty value in place of one token and an option
    no command has inserted somewhere, so that a garble stays a mistake (a garble that happened to be a valid
    command would run it, e.g. a build or an eval writing into the project)."""
    rng = random.Random(seed)
    cases = [list(c) for c in CLI_BAD]
    for _ in range(n):
        argv = list(rng.choice(CLI_BAD))
        if argv and rng.random() < 0.5:
            argv[rng.randrange(len(argv))] = str(rng.choice(NASTY))
        argv.insert(rng.randint(0, len(argv)), rng.choice(["--no-such-option", "-x", "--help=1"]))
        cases.append(argv)
    counts = Counter({"exit traceback": 0, "exit 2 with more than one line": 0})
    for argv in cases:
        err = io.StringIO()
        out = io.StringIO()
        code: object
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = cli_main(["--root", str(ROOT), *argv] if "--root" not in argv else argv)
            except SystemExit as exc:
                code = exc.code
            except Exception:
                code = "traceback"
                print(f"TRACEBACK for {argv}:\n{traceback.format_exc()}", file=sys.__stdout__)
        counts[f"exit {code}"] += 1
        if code != 2:
            print(
                f"exit {code}: kopa-gen {' '.join(argv)[:160]} -> {(err.getvalue() or out.getvalue())[:160]!r}"
            )
        if code == 2 and err.getvalue().count("\n") > 1 and "usage:" not in err.getvalue():
            counts["exit 2 with more than one line"] += 1
    counts["sent"] = len(cases)
    return counts


def show(title: str, counts: Counter[str], seconds: float) -> None:
    print(f"\n{title} ({seconds:.1f} s)")
    for name, value in sorted(counts.items(), key=lambda kv: (kv[0] != "sent", kv[0])):
        print(f"  {name:<45} {value:>7,}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--per-tool", type=int, default=40, help="malformed calls per tool")
    parser.add_argument("--http", type=int, default=3000, help="malformed HTTP requests")
    parser.add_argument(
        "--cli", type=int, default=150, help="random command-line garbles on top of the fixed list"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    project = load_project(ROOT)
    start = time.perf_counter()
    show("tool calls (Session.call, sandbox)", asyncio.run(fuzz_tools(project, args.per_tool, args.seed)),
         time.perf_counter() - start)  # fmt: skip
    start = time.perf_counter()
    show(
        "HTTP requests (sandbox over loopback)",
        fuzz_http(project, args.http, args.seed),
        time.perf_counter() - start,
    )
    start = time.perf_counter()
    show("command lines (kopa-gen main)", fuzz_cli(args.cli, args.seed), time.perf_counter() - start)


if __name__ == "__main__":
    main()

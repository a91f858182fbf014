"""Fuzz what users, models and clients can send: malformed tool calls (through the same Session the evaluator
uses), malformed HTTP requests (to the sandbox over real loopback HTTP), malformed command lines (kopa-gen's own
`main`), hostile calls from concurrent MCP sessions of one `kopa-gen serve --transport http` server (each must see
only its own workspace), requests with hostile Host, Origin and Authorization headers (to a loopback server and to
one exposed with a token), and a provider that echoes the user's key back (every answer is searched for the key in
every spelling). Prints, per surface, how many inputs were sent and how each was answered; the goal is 0 crashes,
0 tracebacks shown, 0 HTTP 5xx, 0 non-tool errors, 0 hangs, 0 keys leaked, 0 isolation breaches.

    python scripts/fuzz.py                      # every surface, modest sizes (a few CPU minutes), seed 0
    python scripts/fuzz.py --per-tool 200 --seed 3 --http 5000 --cli 400 --mcp-rounds 20 --headers 2000
    python scripts/fuzz.py --only mcp,headers,echo

The values that broke it before are among the mutations: unpaired surrogates, NULs and control characters,
nesting 100,000 deep, integers of 5,000 digits, NaN, a code with a line break after it. Inputs are drawn from the
specs (every tool's input schema, every operation's path and parameters), so a new platform is fuzzed without
changes here. Deterministic by seed (the MCP sessions' interleaving is the event loop's)."""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import io
import json
import logging
import os
import random
import re
import socket
import sys
import threading
import time
import traceback
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kopa_gen.cli import main as cli_main
from kopa_gen.client.client import PlatformClient, RetryPolicy
from kopa_gen.client.live import require_key
from kopa_gen.compose import platform_client
from kopa_gen.envelopes import Page, family
from kopa_gen.mcp.remote import exposure
from kopa_gen.mcp.server import platforms_server
from kopa_gen.project import Project, load_project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig, sandbox_key
from kopa_gen.sandbox.local import open_sandbox

ROOT = Path(__file__).resolve().parents[1]


def deep(levels: int) -> Any:
    """A list nested `levels` deep, built without recursion."""
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


# values that break naive code: wrong types, edges of numbers, Python-only integer syntax, huge and hostile text,
# and what once ended an eval (issue 28): unpaired surrogates, control characters, nesting deeper than Python's
# stack, integers past the 4,300 digits Python writes, NaN, a code with a line break after it, a NUL inside text
NASTY: list[Any] = [
    None, True, False, 0, -1, 1.5, 10**30, float("inf"), "", " ", "0", "-1", "1_0", "١٢", " 5", "5 ", "1e3",
    "null", "가" * 7300, "x" * 20000, "\x00", "\ud7a3\u200b", "😀", "'; DROP TABLE t;--", "../../etc/passwd",
    "%00", "%ZZ", "a&b=c", "<x>&amp;</x>", "\r\nX-Injected: 1", [], [1, "a"], {}, {"a": {"b": [None]}},
    "\ud800", "ab\udfffcd", "\udc80" * 3, "a\x00bcdef", "\x1b[31m", "\x7f\x85", "12345678\n", "1" + "0" * 5000,
    10**5000, -(10**400), float("nan"), float("-inf"), deep(100_000), deep(40), list(range(20_000)),
    {"\ud800": 1}, {"k" * 2_000_000: 1},
]  # fmt: skip


def wire_text(value: Any) -> str:
    """How a hostile HTTP client would write `value` into a query string: text as it is, anything else as JSON
    where JSON can carry it, else as Python writes it (a nesting too deep for json.dumps, an integer too long)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (ValueError, RecursionError):
        return "[" * 50_000 + "]" * 50_000 if isinstance(value, list) else "9" * 5_000


def mutations(schema: dict[str, Any], rng: random.Random, n: int) -> Iterator[Any]:
    """`n` malformed argument objects for a tool with `schema` (its MCP inputSchema)."""
    yield from (None, [], "not an object", 17, {"__unknown__": 1}, {})
    for _ in range(max(0, n - 6)):
        yield mutation(schema, rng)


def mutation(schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One argument object: a plausible value for most arguments, a nasty one for one to three of them."""
    props: dict[str, Any] = schema.get("properties") or {}
    names = list(props)
    args: dict[str, Any] = {}
    for name in names:
        if rng.random() < 0.5:
            example = props[name].get("examples") or props[name].get("enum") or ["1"]
            args[name] = rng.choice(example)
    for name in rng.sample(names, k=min(len(names), rng.randint(1, 3))) if names else []:
        args[name] = rng.choice(NASTY)
    if rng.random() < 0.2:
        args[f"unknown_{rng.randint(0, 9)}"] = rng.choice(NASTY)
    return args


async def fuzz_tools(project: Project, per_tool: int, seed: int) -> Counter[str]:
    rng = random.Random(seed)
    keys = {sandbox_key(p) for p in project.platforms if not p.kopa.local}
    counts = Counter(
        {
            "crash (exception escaped Session.call)": 0,
            "traceback in result": 0,
            "key leaked": 0,
            "result not UTF-8 text": 0,
            "log record left running": 0,
        }
    )
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
                print(f"CRASH {name} {short(args)}\n{traceback.format_exc()}")
                continue
            counts["tool error" if outcome.is_error else "answered"] += 1
            text = outcome.text + json.dumps(outcome.structured, ensure_ascii=False, default=str)
            if "Traceback (most recent call last)" in text:
                counts["traceback in result"] += 1
            if any(k in text for k in keys):
                counts["key leaked"] += 1
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                counts["result not UTF-8 text"] += 1
        counts["log record left running"] = sum(c.error_code == "running" for c in session.calls)
    counts["sent"] = len(cases)
    return counts


def short(value: Any) -> str:
    try:
        return repr(value)[:200]
    except RecursionError:
        return "(nested too deep to show)"


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """An ASGI app on a loopback port (real HTTP) in a thread: its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="critical", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def served(project: Project) -> Iterator[str]:
    """The sandbox app on a loopback port, limits off so the fuzz is not answered by the quota."""
    with serving(open_sandbox(project, SandboxConfig(limits=False)).app) as base:
        yield base


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
                params.append((param.name, wire_text(rng.choice(NASTY))))
        if not platform.kopa.local and rng.random() < 0.7:
            params.append((platform.key_param, rng.choice([sandbox_key(platform), "", "wrong", "%2B%2F"])))
        query = urllib.parse.urlencode(params, errors="surrogatepass")  # a lone surrogate as its raw bytes
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


# --- MCP: concurrent sessions of one `kopa-gen serve --transport http` ------------------------------------------


def serve_app(project: Project, platforms: list[str], checks: Any) -> Any:
    """What `kopa-gen serve <platforms> --transport http` serves behind `checks` (kopa_gen.mcp.remote): the
    platforms opened at a session's first call, on a sandbox of the session's own."""

    def open_clients() -> dict[str, PlatformClient]:
        sandbox = open_sandbox(project, SandboxConfig(limits=False))
        return {pid: platform_client(project, pid, False, sandbox) for pid in platforms}

    return checks.app(platforms_server(ROOT, platforms, open_clients))


def hostile_json(args: Any) -> str:
    """JSON text of `args` as a hostile client writes it: a lone surrogate as its escape (valid JSON), NaN as `NaN`,
    and what Python's encoder refuses (nesting 100,000 deep, an integer of 5,000 digits) written out by hand."""
    if not isinstance(args, dict):
        return json.dumps(args)
    marked: dict[str, Any] = {}
    raw: dict[str, str] = {}
    for i, (name, value) in enumerate(args.items()):
        try:
            json.dumps(value)
            marked[name] = value
        except RecursionError:
            marked[name] = f"@@{i}@@"
            raw[f'"@@{i}@@"'] = "[" * 100_000 + "]" * 100_000
        except ValueError:  # an integer past the digits Python writes
            marked[name] = f"@@{i}@@"
            raw[f'"@@{i}@@"'] = "9" * 5_000
    text = json.dumps(marked)
    for mark, written in raw.items():
        text = text.replace(mark, written)
    return text


ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
VERSION = "2025-06-18"


class RawSession:
    """One MCP session spoken as raw JSON-RPC over HTTP: a call can carry what the SDK's client would not write."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url, self.headers, self.next_id = http, url, dict(ACCEPT), 1

    async def open(self) -> None:
        params = {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        }
        status, _ = await self.send(
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        )
        assert status == 200 and "mcp-session-id" in self.headers, status
        await self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    async def send(self, body: str) -> tuple[int, dict[str, Any] | None]:
        """(HTTP status, the JSON-RPC answer or None)."""
        response = await self.http.post(self.url, content=body.encode("utf-8"), headers=self.headers)
        if "mcp-session-id" in response.headers:
            self.headers |= {
                "mcp-session-id": response.headers["mcp-session-id"],
                "mcp-protocol-version": VERSION,
            }
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            text = "".join(line[5:] for line in text.splitlines() if line.startswith("data:"))
        try:
            answer = json.loads(text) if text.strip() else None
        except ValueError:
            answer = None
        return response.status_code, answer if isinstance(answer, dict) else None

    async def call(self, tool: str, arguments_json: str) -> tuple[int, dict[str, Any] | None]:
        self.next_id += 1
        head = f'{{"jsonrpc": "2.0", "id": {self.next_id}, "method": "tools/call", "params": {{"name": '
        return await self.send(f'{head}{json.dumps(tool)}, "arguments": {arguments_json}}}}}')


def result_text(answer: dict[str, Any] | None) -> tuple[bool | None, str]:
    """(isError, the result's text) of a tools/call answer; (None, the error) for a JSON-RPC error."""
    if answer is None:
        return None, "(no JSON-RPC answer)"
    if "error" in answer:
        return None, json.dumps(answer["error"], ensure_ascii=False)
    result = answer.get("result") or {}
    texts = [c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict)]
    return bool(result.get("isError")), "\n".join(texts) + json.dumps(result.get("structuredContent"))


async def mcp_session(
    url: str, me: int, tools: list[dict[str, Any]], calls: int, rng: random.Random, counts: Counter[str]
) -> tuple[set[str], list[str]]:
    """One session: write its own files, send `calls` hostile calls, list every page; the files it wrote and the
    paths it saw."""
    async with httpx.AsyncClient(timeout=60) as http:
        session = RawSession(http, url)
        await session.open()
        mine = {f"s{me}/{rng.randrange(10**6):06d}.txt" for _ in range(rng.randint(1, 5))} | {"same-name.txt"}
        for path in sorted(mine):
            _, answer = await session.call(
                "workspace_write_file", json.dumps({"path": path, "content": f"{me}"})
            )
            assert result_text(answer)[0] is False, answer
        for _ in range(calls):
            tool = rng.choice(tools)
            args = mutation(tool["inputSchema"], rng)
            try:
                status, answer = await session.call(tool["name"], hostile_json(args))
            except httpx.TimeoutException:
                counts["hang (no answer in 60 s)"] += 1
                continue
            counts["calls sent"] += 1
            is_error, text = result_text(answer)
            if status >= 500:
                counts["HTTP 5xx"] += 1
            elif is_error is None:  # a JSON-RPC error: the message never became a tool call. The SDK's JSON
                # parser refuses a lone surrogate's escape, nesting past its limit and a number past its range
                # with HTTP 400 and JSON-RPC -32700 (a clear answer, not a failure); anything else is counted
                kind = (
                    "refused as a message (JSON-RPC parse error)"
                    if '"code": -32700' in text
                    else "non-tool error"
                )
                counts[kind] += 1
                if kind == "non-tool error":
                    print(f"non-tool error: {tool['name']} {hostile_json(args)[:160]} -> {text[:200]}")
            else:
                counts["tool error" if is_error else "answered"] += 1
            if "Internal server error" in text or "Traceback (most recent call last)" in text:
                counts["internal error or traceback"] += 1
        seen: list[str] = []
        page = 1
        while True:
            _, answer = await session.call("workspace_list_files", json.dumps({"page_no": page}))
            rows = ((answer or {}).get("result") or {}).get("structuredContent", {}).get("rows") or []
            if not rows:
                break
            seen += [r["path"] for r in rows]
            page += 1
        return mine, seen


async def mcp_round(
    url: str, tools: list[dict[str, Any]], calls: int, seed: int, counts: Counter[str]
) -> None:
    """Two sessions at once; each must see exactly its own files, whatever the other wrote or tried."""
    views = await asyncio.gather(
        *(mcp_session(url, me, tools, calls, random.Random(f"{seed}:{me}"), counts) for me in range(2))
    )
    for mine, seen in views:
        counts["isolation breach (a session saw a file it did not write)"] += len(set(seen) - mine)
        counts["file lost (a session's own file missing)"] += len(mine - set(seen))


def fuzz_mcp(project: Project, rounds: int, calls: int, seed: int) -> Counter[str]:
    counts = Counter(
        {
            "HTTP 5xx": 0,
            "non-tool error": 0,
            "internal error or traceback": 0,
            "hang (no answer in 60 s)": 0,
            "isolation breach (a session saw a file it did not write)": 0,
            "file lost (a session's own file missing)": 0,
        }
    )
    local = sorted(p.id for p in project.platforms if p.kopa.local)
    other = sorted(p.id for p in project.platforms if not p.kopa.local)[:1]
    platforms = local + other
    tools = [t for pid in platforms for t in json.loads(
        (ROOT / "generated" / "servers" / pid / "tools.json").read_text(encoding="utf-8"))["tools"]]  # fmt: skip
    with serving(serve_app(project, platforms, exposure("127.0.0.1", 0, None))) as base:
        for number in range(rounds):
            asyncio.run(mcp_round(base + "/mcp", tools, calls, seed * 1000 + number, counts))
    counts["sent"] = rounds * 2 * calls
    counts["sessions"] = rounds * 2
    return counts


# --- Host, Origin and Authorization headers ----------------------------------------------------------------------

TOKEN = "fuzz-token-" + "t" * 24
# (value, whether the server must let it in); a hostile one imitates an allowed name
HOSTS = [
    ("127.0.0.1:{port}", True), ("localhost:{port}", True), ("kopa.test:{port}", True), ("kopa.test", True),
    ("evil.test", False), ("evil.test:{port}", False), ("127.0.0.1.evil.test", False), ("kopa.test.evil.test", False),
    ("localhost.evil.test:{port}", False), ("evil.test@127.0.0.1", False), ("127.0.0.1@evil.test", False),
    ("", False), ("kopa.test:{port}.evil.test", False), ("[::1].evil.test", False), ("kopa.test, evil.test", False),
]  # fmt: skip
ORIGINS = [
    (None, True), ("http://127.0.0.1:{port}", True), ("https://agent.kopa.test", True), ("https://evil.test", False),
    ("null", False), ("http://127.0.0.1.evil.test", False), ("https://agent.kopa.test.evil.test", False),
    ("https://agent.kopa.test@evil.test", False), ("http://localhost.evil.test:{port}", False),
    ("file://", False), ("https://evil.test/https://agent.kopa.test", False),
]  # fmt: skip
TOKENS = [
    (f"Bearer {TOKEN}", True), (None, False), ("Bearer ", False), (f"Bearer {TOKEN}x", False),
    (f"Bearer {TOKEN[:-1]}", False), (f"bearer {TOKEN}", None), (f"Basic {TOKEN}", False), ("Bearer \x00", False),
    (f"Bearer {TOKEN} {TOKEN}", False),
]  # fmt: skip
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        },
    }
)


def draw(values: Sequence[tuple[Any, bool | None]], rng: random.Random) -> tuple[Any, bool | None]:
    """An allowed value half the time, else a hostile one (so requests that must be let in are common too)."""
    allowed = rng.random() < 0.5
    return rng.choice([v for v in values if bool(v[1]) is allowed] or values)


def header_request(port: int, host: str, origin: str | None, auth: str | None) -> int:
    """One initialize POST written byte for byte (a client library would tidy the headers): the status, 0 for a
    connection closed without an answer, -1 for none in 30 s."""
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: {host}",
        *(f"Origin: {origin}" for _ in [0] if origin is not None),
    ]
    lines += [f"Authorization: {auth}"] if auth is not None else []
    lines += [f"{k}: {v}" for k, v in ACCEPT.items()] + [
        f"Content-Length: {len(INITIALIZE)}",
        "Connection: close",
    ]
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(("\r\n".join(lines) + "\r\n\r\n" + INITIALIZE).encode("utf-8"))
            with contextlib.suppress(ConnectionResetError):
                while chunk := conn.recv(65536):
                    data += chunk
                    if b"\r\n\r\n" in data:
                        break  # the status is all this needs (an accepted initialize keeps a stream open)
    except TimeoutError:
        return -1
    parts = data.partition(b"\r\n")[0].split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def fuzz_headers(project: Project, n: int, seed: int) -> Counter[str]:
    """`n` initialize requests with drawn Host, Origin and Authorization headers, to a loopback server (no token)
    and to one exposed beyond loopback (`--allow-remote --token-env`, `--allowed-host kopa.test`,
    `--allowed-origin https://agent.kopa.test`; it listens on loopback here, the checks read headers). A request
    must be let in exactly when every header it carries is one the server allows."""
    rng = random.Random(seed)
    counts = Counter({"foreign let in": 0, "allowed refused": 0, "HTTP 5xx": 0, "hang or closed": 0})
    logging.getLogger("mcp").setLevel(
        logging.ERROR
    )  # the SDK warns of every refused header; they are counted
    platforms = sorted(p.id for p in project.platforms if p.kopa.local)
    loopback = exposure("127.0.0.1", 0, None)
    remote = exposure("0.0.0.0", 0, TOKEN, ["kopa.test"], ["https://agent.kopa.test"])
    with (
        serving(serve_app(project, platforms, loopback)) as near,
        serving(serve_app(project, platforms, remote)) as far,
    ):
        for _ in range(n):
            exposed = rng.random() < 0.5
            port = int((far if exposed else near).rsplit(":", 1)[1])
            host, host_ok = draw(HOSTS, rng)
            origin, origin_ok = draw(ORIGINS, rng)
            auth, auth_ok = draw(TOKENS, rng) if exposed else (None, True)
            if not exposed:  # on loopback the names kopa.test and agent.kopa.test were never allowed
                host_ok = host_ok and "kopa.test" not in host
                origin_ok = origin_ok and "kopa.test" not in (origin or "")
            host, origin = host.format(port=port), origin.format(port=port) if origin else origin
            status = header_request(port, host, origin, auth)
            counts[f"{'exposed' if exposed else 'loopback'}: HTTP {status}"] += 1
            if status <= 0:
                counts["hang or closed"] += 1
            elif status >= 500:
                counts["HTTP 5xx"] += 1
            if (
                auth_ok is None
            ):  # the scheme's case: RFC 9110 calls it case-insensitive; either answer is safe
                continue
            let_in = status == 200
            if let_in and not host_ok and re.fullmatch(r"[^:]+:[0-9]+[^0-9].*", host):
                # the SDK's `name:*` pattern takes any Host that starts with `name:`; no browser sends a host
                # name with a colon in it, so a web page cannot use this (DNS rebinding needs a browser)
                counts[
                    "let in by the SDK's port wildcard (Host 'name:<port>junk', never sent by a browser)"
                ] += 1
                continue
            if let_in and not (host_ok and origin_ok and auth_ok):
                counts["foreign let in"] += 1
                print(f"let in: exposed={exposed} Host={host!r} Origin={origin!r} Authorization={auth!r}")
            if not let_in and host_ok and origin_ok and auth_ok:
                counts["allowed refused"] += 1
                print(f"refused ({status}): exposed={exposed} Host={host!r} Origin={origin!r}")
    counts["sent"] = n
    return counts


# --- a provider that echoes the key -----------------------------------------------------------------------------

ECHO_MODES = ("ok", "error", "garbage", "http-500", "header")


def key_forms(key: str) -> dict[str, str]:
    """Every spelling of `key` an output must not hold: raw, URL-encoded (upper- and lower-case hex), base64, hex
    and every 16-character window."""
    encoded = urllib.parse.quote(key, safe="")
    lower = encoded.split("%")[0] + "".join("%" + p[:2].lower() + p[2:] for p in encoded.split("%")[1:])
    forms = {"raw": key, "url-encoded": encoded, "url-encoded, lower hex": lower}
    forms |= {"base64": base64.b64encode(key.encode()).decode(), "hex": key.encode().hex()}
    return forms | {f"window {i}": key[i : i + 16] for i in range(len(key) - 15)}


def echo_service(project: Project, ops: dict[str, Any], rng: random.Random) -> Starlette:
    """The stand-in for the real hosts: each answer (its kind drawn) carries the key it was sent in every spelling:
    in a row, in the platform's error message, in a body not in the platform's format (whose error snippet is
    cut), in a 500's body and in response headers."""

    async def answer(request: Request) -> Response:
        platform = project.platform(request.path_params["platform"])
        op = ops[platform.id]
        sent = request.query_params.get(platform.key_param, "")
        echo = " ".join(key_forms(sent)[f] for f in ("raw", "url-encoded", "base64", "hex")) if sent else "-"
        headers = {"x-echo": sent, "x-echo-b64": base64.b64encode(sent.encode()).decode()}
        fmt = platform.format(op)
        wire = "json" if fmt.param or fmt.extension else fmt.default
        envelope = family(platform.kopa.envelope)
        mode = rng.choice(ECHO_MODES)
        if mode in ("ok", "header"):
            text = [n for n, p in op.row_props.items() if p.get("type", "string") == "string"]
            row = {name: (f"{name} {echo}" if mode == "ok" else name) for name in text}
            ok = platform.code(platform.kopa.answers.ok)
            reply = envelope.render(platform, op, ok, wire, Page([row], 1, 1, 10))
        elif mode == "error":
            answers = platform.kopa.answers
            code = platform.code(answers.invalid_param or answers.bad_value or answers.server)
            code = code.model_copy(update={"message": f"bad key {echo}"})
            reply = envelope.render(platform, op, code, wire)
        elif mode == "garbage":  # the key straddles the error snippet's cut
            return Response(
                b"<html>" + b"." * rng.randint(60, 119) + echo.encode() + b"</html>", 200, headers
            )
        else:
            return Response(f"upstream failed for {echo}", 500, headers, "text/plain")
        return Response(reply.body, reply.status, headers, reply.content_type)

    return Starlette(routes=[Route("/{platform}/{path:path}", answer, methods=["GET", "POST"])])


def echo_calls(project: Project) -> dict[str, tuple[Any, dict[str, Any]]]:
    """Per platform with a key: one list operation whose required arguments the spec's examples give, and a call."""
    out: dict[str, tuple[Any, dict[str, Any]]] = {}
    for platform in project.platforms:
        if platform.kopa.local:
            continue
        for op in platform.operations:
            examples = platform.examples(op.tool)
            required = [p.name for p in op.params if p.required and p.name not in op.fixed_query]
            if op.tool and op.kopa.shape == "list" and all(name in examples for name in required):
                out[platform.id] = (op, {name: examples[name][0] for name in required})
                break
    return out


def fuzz_echo(project: Project, calls: int, seed: int) -> Counter[str]:
    """`calls` tool calls through the MCP server in live mode, every platform with a key pointed at the echoing
    stand-in, with one key for all (data.go.kr-like: 88 characters with + / =, registered as live mode registers
    a key it reads). Every result and every log record of the process at DEBUG (httpx's included) is searched for
    every spelling of the key."""
    rng = random.Random(seed)
    key = base64.b64encode(hashlib.sha512(f"fuzz {seed}".encode()).digest()).decode("ascii")
    forms = key_forms(key)
    chosen = echo_calls(project)
    records: list[str] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = lambda record: records.append(logging.Formatter("%(name)s %(message)s").format(record))  # type: ignore[method-assign]
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.DEBUG)
    counts = Counter({"key leaked (spellings found in outputs)": 0, "non-tool error": 0, "HTTP 5xx": 0})
    outputs: list[str] = []
    try:
        with serving(echo_service(project, {pid: op for pid, (op, _) in chosen.items()}, rng)) as base:
            for pid in chosen:
                os.environ[project.platform(pid).kopa.auth.env] = key
                require_key(project.platform(pid))  # as live mode reads it: registered for redaction

            def open_clients() -> dict[str, PlatformClient]:
                return {
                    pid: PlatformClient(
                        project.platform(pid),
                        key=key,
                        base_url=f"{base}/{pid}{project.platform(pid).base_path}",
                        retry=RetryPolicy(attempts=2, backoff_s=0.01),
                    )
                    for pid in chosen
                }

            async def run() -> None:
                async with Client(platforms_server(ROOT, sorted(chosen), open_clients)) as client:
                    for _ in range(calls):
                        pid = rng.choice(sorted(chosen))
                        op, args = chosen[pid]
                        try:
                            result = await client.call_tool(op.tool, args)
                        except Exception as exc:  # counted: a call must answer
                            counts["non-tool error"] += 1
                            outputs.append(str(exc))
                            continue
                        counts["tool error" if result.is_error else "answered"] += 1
                        outputs.append(json.dumps(result.model_dump(mode="json"), ensure_ascii=False))

            asyncio.run(run())
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    outputs += records
    for text in outputs:
        found = [name for name, form in forms.items() if form in text]
        counts["key leaked (spellings found in outputs)"] += len(found)
        if found:
            print(f"LEAK ({', '.join(found[:4])}): {text[:200]}")
    counts["sent"] = calls
    counts["platforms"] = len(chosen)
    counts["outputs searched (results and log records)"] = len(outputs)
    counts["spellings per output (raw, URL-encoded x2, base64, hex, 16-character windows)"] = len(forms)
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
            argv[rng.randrange(len(argv))] = wire_text(
                rng.choice(NASTY)
            )  # surrogates: undecodable argv bytes
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
            print(f"more than one line: kopa-gen {short(argv)} -> {err.getvalue()[:300]!r}")
    counts["sent"] = len(cases)
    return counts


SURFACES = ("tools", "http", "cli", "mcp", "headers", "echo")


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
    parser.add_argument("--mcp-rounds", type=int, default=5, help="rounds of two concurrent MCP sessions")
    parser.add_argument("--mcp-calls", type=int, default=150, help="hostile tool calls per MCP session")
    parser.add_argument(
        "--headers", type=int, default=600, help="requests with drawn Host/Origin/Authorization"
    )
    parser.add_argument("--echo", type=int, default=300, help="live tool calls to the key-echoing stand-in")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only", default=",".join(SURFACES), help=f"surfaces to fuzz, of {','.join(SURFACES)}"
    )
    args = parser.parse_args()
    unknown = set(args.only.split(",")) - set(SURFACES)
    if unknown:
        parser.error(f"--only: no surface {', '.join(sorted(unknown))}; known: {', '.join(SURFACES)}")
    project = load_project(ROOT)
    runs: dict[str, tuple[str, Callable[[], Counter[str]]]] = {
        "tools": ("tool calls (Session.call, sandbox)",
                  lambda: asyncio.run(fuzz_tools(project, args.per_tool, args.seed))),
        "http": ("HTTP requests (sandbox over loopback)", lambda: fuzz_http(project, args.http, args.seed)),
        "cli": ("command lines (kopa-gen main)", lambda: fuzz_cli(args.cli, args.seed)),
        "mcp": ("two concurrent MCP sessions per round (serve --transport http, raw JSON-RPC)",
                lambda: fuzz_mcp(project, args.mcp_rounds, args.mcp_calls, args.seed)),
        "headers": ("Host, Origin and Authorization (serve on loopback, and exposed with a token)",
                    lambda: fuzz_headers(project, args.headers, args.seed)),
        "echo": ("a provider echoing the key (live MCP tool calls; results and DEBUG logs searched)",
                 lambda: fuzz_echo(project, args.echo, args.seed)),
    }  # fmt: skip
    for surface in SURFACES:  # the echo last: it registers a key for the rest of the process
        if surface in args.only.split(","):
            title, run = runs[surface]
            start = time.perf_counter()
            counts = run()
            show(title, counts, time.perf_counter() - start)


if __name__ == "__main__":
    main()

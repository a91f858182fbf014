"""`kopa-gen serve`, `sandbox serve`, `call` and `tools`: the platforms as MCP servers, as the offline HTTP
emulator, one tool call at a time, and their listings."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urlsplit

from kopa_gen.cli.options import (
    ConfigDefault,
    Subparsers,
    UsageError,
    default_of,
    fraction,
    json_object,
    load,
    parse,
    port,
    positive_int,
    root_folder,
)
from kopa_gen.language.diagnostics import InfrastructureError
from kopa_gen.mcp.generated import generated_module


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """`kopa-gen serve`."""

    root: str | None = None
    platforms: list[str]
    transport: Literal["stdio", "http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    live: bool = False
    allow_remote: bool = False
    token_env: str | None = None
    allowed_host: list[str] = field(default_factory=list)
    allowed_origin: list[str] = field(default_factory=list)
    tools_mode: Literal["all", "task", "search"] = "all"
    task: str | None = None
    output_schemas: bool = False

    def __post_init__(self) -> None:
        if (self.tools_mode == "task") != (self.task is not None):
            raise UsageError(
                "--tools-mode task lists one task's tools: give --task ID with it (and --task only with it)"
            )
        remote = self.allow_remote or self.token_env or self.allowed_host or self.allowed_origin
        if remote and self.transport != "http":
            raise UsageError(
                "--allow-remote, --token-env, --allowed-host and --allowed-origin apply to --transport http"
            )
        for origin in self.allowed_origin:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
                raise UsageError(
                    f"--allowed-origin {origin!r}: give an origin as a browser sends it, scheme://host[:port], "
                    "e.g. https://agent.example.org"
                )


@dataclass(frozen=True, kw_only=True)
class SandboxServeOptions:
    """`kopa-gen sandbox serve`; seed and fault rate default to SandboxConfig's."""

    root: str | None = None
    host: str = "127.0.0.1"
    port: int = 8765
    faults: float
    seed: int
    world_seed: int | None = None  # None: specs/world/world.yaml
    no_limits: bool = False
    threads: bool = False
    workers: int = 1

    def __post_init__(self) -> None:
        if self.workers > 1 and not self.no_limits:
            raise UsageError(
                "--workers > 1 needs --no-limits (each worker process would count quotas and rates "
                "on its own); add --no-limits or serve with one worker"
            )


@dataclass(frozen=True, kw_only=True)
class CallOptions:
    """`kopa-gen call`."""

    root: str | None = None
    platform: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    live: bool = False


@dataclass(frozen=True, kw_only=True)
class ToolsOptions:
    """`kopa-gen tools`."""

    root: str | None = None
    platform: str | None = None  # None: every platform
    tool: str | None = None
    provenance: bool = False


def cmd_serve(o: ServeOptions) -> int:
    from kopa_gen.mcp.server import platforms_server

    root = root_folder(o.root)
    exposed = _exposure(o) if o.transport == "http" else None
    if o.live:
        # A missing key is the user's mistake: say so now, not at the first tool call of a connected client.
        from kopa_gen.client.live import require_key

        project = load(o.root)
        for pid in o.platforms:
            require_key(project.platform(pid))

    @functools.cache
    def project_once() -> Any:
        return load(o.root)

    def open_clients() -> dict[str, Any]:
        # At a connection's first tool call, not at start-up (tools/list needs only the generated listings), and
        # once per connection: each client gets a sandbox of its own (workspace, counters, faults).
        from kopa_gen.compose import platform_client
        from kopa_gen.sandbox.local import open_sandbox

        project = project_once()
        platforms = [project.platform(pid) for pid in o.platforms]
        needs_sandbox = not o.live or any(p.kopa.local for p in platforms)
        sandbox = open_sandbox(project) if needs_sandbox else None
        return {p.id: platform_client(project, p.id, o.live, sandbox) for p in platforms}

    only = None
    if o.task is not None:
        task = project_once().task(o.task)
        only = task.tools or [c.tool for step in task.gold for c in step.calls]
    server = platforms_server(root, o.platforms, open_clients, o.tools_mode, only, o.output_schemas)
    if o.transport == "stdio":
        from mcp.server.stdio import stdio_server

        async def run_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        with _interrupt_exits():
            asyncio.run(run_stdio())
        return 0
    import uvicorn

    assert exposed is not None
    app = exposed.app(server)
    print(
        f"MCP {', '.join(o.platforms)} on {exposed.url}/mcp ({'live' if o.live else 'sandbox'})",
        file=sys.stderr,
    )
    uvicorn.run(app, host=o.host, port=o.port, log_level="warning")
    return 0


def _exposure(o: ServeOptions) -> Any:
    """The HTTP server's checks, or UsageError for an exposure the user did not ask for in so many words."""
    from kopa_gen.client.redaction import register
    from kopa_gen.mcp.remote import MIN_TOKEN, exposure, is_loopback, is_wildcard

    local = is_loopback(o.host)
    what = f"the tools of {', '.join(o.platforms)}" + (" on your own API keys (--live)" if o.live else "")
    if not local and not o.allow_remote:
        raise UsageError(
            f"--host {o.host} is not a loopback address: anyone who can reach it could call {what}; to serve it "
            "anyway add --allow-remote --token-env VAR (a secret clients send as 'Authorization: Bearer ...')"
        )
    if not local and not o.token_env:
        raise UsageError(
            f"--allow-remote needs --token-env VAR: the environment variable holding the secret (at least "
            f"{MIN_TOKEN} characters) every client must send as 'Authorization: Bearer ...'"
        )
    token = None
    if o.token_env:
        token = os.environ.get(o.token_env, "")
        if len(token) < MIN_TOKEN:
            raise UsageError(
                f"--token-env {o.token_env}: ${o.token_env} is {'unset' if not token else 'too short'}; put a "
                f"secret of at least {MIN_TOKEN} characters in it (e.g. the output of `openssl rand -hex 32`)"
            )
        register(token)
    if is_wildcard(o.host) and not (o.allowed_host or o.allowed_origin):
        raise UsageError(
            f"--host {o.host} answers on every interface: name the host clients reach it by with --allowed-host "
            "NAME (requests with another Host header are refused)"
        )
    exposed = exposure(o.host, o.port, token, o.allowed_host, o.allowed_origin)
    if not local:
        print(
            f"warning: serving {what} to the network at {exposed.url}/mcp; every request needs the token in "
            f"${o.token_env}; Host must be one of {', '.join(exposed.allowed_hosts)}; Origin, when sent, one of "
            f"{', '.join(exposed.allowed_origins)}",
            file=sys.stderr,
        )
    return exposed


@contextlib.contextmanager
def _interrupt_exits() -> Iterator[None]:
    """Ctrl-C ends a stdio server at once with status 130. The default (cancel, then wait) never finishes: the SDK
    reads stdin in a worker thread that no cancellation reaches, so the first Ctrl-C was ignored and the second
    printed a traceback. Nothing is lost by leaving now: each reply was flushed when it was written."""

    def leave(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(130)

    previous = signal.signal(signal.SIGINT, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def cmd_sandbox_serve(o: SandboxServeOptions) -> int:
    import uvicorn

    from kopa_gen.sandbox.config import Faults, SandboxConfig, sandbox_key
    from kopa_gen.sandbox.local import open_sandbox

    project = load(o.root)
    config = SandboxConfig(
        seed=o.seed or 0, faults=Faults(rate=o.faults), limits=not o.no_limits, threads=o.threads
    )
    sandbox = open_sandbox(project, config, o.world_seed)
    base = f"http://{o.host}:{o.port}"
    encoded = False
    for p in project.platforms:
        key = sandbox_key(p)
        print(
            f"{p.id:10} {p.server_url}  ->  {base}{sandbox.prefix(p)}   key {p.key_param}={key}", flush=True
        )
        if quote(key, safe="") != key:
            print(f"{'':10} in a URL write it encoded: {p.key_param}={quote(key, safe='')}", flush=True)
            encoded = True
    if encoded:
        print(
            "a key with + / = must be URL-encoded in a hand-written query string (the 'in a URL' form), as the real "
            "data.go.kr 'Encoding' key is; an HTTP client's params= argument encodes the plain key itself",
            flush=True,
        )
    if o.workers > 1:
        from kopa_gen.sandbox.serve import SETTINGS, settings

        os.environ[SETTINGS] = settings(project.root, config, o.world_seed)
        uvicorn.run(
            "kopa_gen.sandbox.serve:app",
            factory=True,
            workers=o.workers,
            host=o.host,
            port=o.port,
            log_level="warning",
        )
        return 0
    uvicorn.run(sandbox.app, host=o.host, port=o.port, log_level="warning")
    return 0


def _refused_early(root: Path, platform_id: str, tool: str, arguments: dict[str, Any]) -> str | None:
    """What the frozen tools.json alone says is wrong with a call (an unknown tool, a missing or unknown
    argument), in the words the tool itself would use, before any spec or world is loaded; None: nothing."""
    from kopa_gen.mcp.describe import frozen_tools

    tools = {t["name"]: t for t in frozen_tools(root, platform_id)}
    if tool not in tools:
        raise UsageError(f"{platform_id} has no tool {tool!r}; `kopa-gen tools {platform_id}` lists them")
    schema = tools[tool]["inputSchema"]
    props = schema.get("properties", {})
    parts = [
        f"{name}: required argument is missing"
        for name in schema.get("required", [])
        if name not in arguments
    ]
    parts += [f"{name}: unknown argument" for name in arguments if name not in props]
    return f"invalid arguments for {tool}: " + "; ".join(parts) if parts else None


def cmd_call(o: CallOptions) -> int:
    refused = _refused_early(root_folder(o.root), o.platform, o.tool, o.arguments)
    if refused is not None:
        print(refused)
        return 1
    from kopa_gen.compose import platform_client

    project = load(o.root)
    platform = project.platform(o.platform)
    if not any(op.tool == o.tool for op in platform.operations):
        raise UsageError(f"{platform.id} has no tool {o.tool!r}; `kopa-gen tools {platform.id}` lists them")

    async def run() -> Any:
        client = platform_client(project, platform.id, o.live)
        async with client:
            box = generated_module(platform.id, root=project.root).create_toolbox(client)
            return await box.call(o.tool, o.arguments)

    try:
        outcome = asyncio.run(run())
    except InfrastructureError as exc:  # the world cannot be opened: said like any other failed call
        print(f"{o.tool} failed: {exc}")
        return 1
    print(
        json.dumps(outcome.structured, ensure_ascii=False, indent=1) if outcome.structured else outcome.text
    )
    return 1 if outcome.is_error else 0


def cmd_tools(o: ToolsOptions) -> int:
    from kopa_gen.mcp.describe import format_listing, format_tool, frozen_tools, generated_platforms
    from kopa_gen.project import load_project

    root = root_folder(o.root)
    chosen = [o.platform] if o.platform else generated_platforms(root)
    if o.provenance and o.tool is None:
        if o.platform:
            frozen_tools(root, o.platform)  # an unknown platform: the line that lists the known ones
        from kopa_gen.mcp.describe import format_provenance

        print(format_provenance(load_project(root, only=chosen), chosen, tools=o.platform is not None))
        return 0
    if o.tool is None:
        print(format_listing(root, chosen))
        return 0
    assert o.platform is not None  # argparse fills the platform before the tool
    print(format_tool(load_project(root, only=[o.platform]), o.platform, o.tool))
    return 0


def add_commands(sub: Subparsers) -> None:
    s = sub.add_parser("serve", help="serve the MCP server of one platform (or of several, as one server)")
    s.add_argument("platforms", nargs="+", metavar="platform", help="platform ids (see `kopa-gen tools`)")
    s.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default=default_of(ServeOptions, "transport"),
        help="MCP transport",
    )
    s.add_argument(
        "--host", default=default_of(ServeOptions, "host"), help="with --transport http: address to listen on"
    )
    s.add_argument(
        "--port", type=port, default=default_of(ServeOptions, "port"), help="with --transport http: port"
    )
    s.add_argument(
        "--live", action="store_true", help="call the real service with the key from the environment"
    )
    s.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --transport http: allow a --host that is not loopback (needs --token-env)",
    )
    s.add_argument(
        "--token-env",
        metavar="VAR",
        help="with --transport http: environment variable holding the secret every request must send as "
        "'Authorization: Bearer ...' (required off loopback)",
    )
    s.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="with --transport http: a Host header value to accept besides loopback and the bound address "
        "(repeatable; required with a wildcard --host)",
    )
    s.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="with --transport http: a browser Origin to accept besides loopback, e.g. https://agent.example.org "
        "(repeatable)",
    )
    s.add_argument(
        "--tools-mode",
        choices=["all", "task", "search"],
        default=default_of(ServeOptions, "tools_mode"),
        help="all: list every tool (default); task: only the tools of --task ID (its gold tools and decoys); "
        "search: each platform's entry tools with search_tools and call_tool, which reach every tool",
    )
    s.add_argument(
        "--task", metavar="ID", help="with --tools-mode task: the benchmark task whose tools to list"
    )
    s.add_argument(
        "--output-schemas",
        action="store_true",
        help="list each tool's output schema too (left out by default: three quarters of the listing's bytes)",
    )
    s.set_defaults(func=lambda args: cmd_serve(parse(ServeOptions, args)))

    sb = sub.add_parser("sandbox", help="the offline emulator of every platform")
    sbs = sb.add_subparsers(dest="sandbox_command", required=True)
    ss = sbs.add_parser("serve", help="serve all platforms on loopback for any HTTP client")
    ss.add_argument("--host", default=default_of(SandboxServeOptions, "host"), help="address to listen on")
    ss.add_argument("--port", type=port, default=default_of(SandboxServeOptions, "port"), help="port")
    ss.add_argument(
        "--faults",
        type=fraction,
        default=ConfigDefault("kopa_gen.sandbox.config:Faults.rate"),
        help="share of requests that fail transiently (seeded)",
    )
    ss.add_argument(
        "--seed",
        type=int,
        default=ConfigDefault("kopa_gen.sandbox.config:SandboxConfig.seed"),
        help="fault seed",
    )
    ss.add_argument(
        "--world-seed", type=int, default=None, help="world seed (default: specs/world/world.yaml)"
    )
    ss.add_argument("--no-limits", action="store_true", help="do not enforce quotas and rate limits")
    ss.add_argument(
        "--threads",
        action="store_true",
        help="answer world reads in a thread pool (pays off for heavy queries; light ones are faster on the event "
        "loop, where no thread waits for the GIL)",
    )
    ss.add_argument(
        "--workers",
        type=positive_int,
        default=default_of(SandboxServeOptions, "workers"),
        help="server processes sharing the port (more than 1 needs --no-limits: quotas are counted per process)",
    )
    ss.set_defaults(func=lambda args: cmd_sandbox_serve(parse(SandboxServeOptions, args)))

    c = sub.add_parser("call", help="call one tool and print its result")
    c.add_argument("platform", help="platform id (see `kopa-gen tools`)")
    c.add_argument("tool", help="tool name (see `kopa-gen tools PLATFORM`)")
    c.add_argument(
        "arguments",
        nargs="?",
        type=json_object,
        default="{}",
        help='tool arguments as one JSON object, e.g. \'{"corp_code": "00126380"}\'',
    )
    c.add_argument(
        "--live", action="store_true", help="call the real service with the key from the environment"
    )
    c.set_defaults(func=lambda args: cmd_call(parse(CallOptions, args)))

    tl = sub.add_parser(
        "tools", help="list the tools of the platforms, or one tool's arguments and an example"
    )
    tl.add_argument("platform", nargs="?", help="platform id (default: every platform)")
    tl.add_argument("tool", nargs="?", help="tool name: its arguments, paging and an example call")
    tl.add_argument(
        "--provenance",
        action="store_true",
        help="tools per platform by how far their facts are checked (live, docs, one-source); with a platform, "
        "each tool's source",
    )
    tl.set_defaults(func=lambda args: cmd_tools(parse(ToolsOptions, args)))

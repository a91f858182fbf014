"""Every command-line mistake is one line on stderr and exit status 2, never a traceback; Ctrl-C ends a server at
once; help shows defaults and choices; the printed sandbox keys say how to put them in a URL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from kopa_gen.cache import cache_dir
from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.language.platform import Platform
from kopa_gen.policies.base import registered
from kopa_gen.project import Project
from kopa_gen.sandbox.config import sandbox_key
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT

KEY_ENVS = ("DART_API_KEY", "DATA_GO_KR_SERVICE_KEY", "NEIS_API_KEY", "ASSEMBLY_API_KEY")


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_SERVICE_KEY"))}
    return {**base, "KOPA_GEN_ROOT": str(ROOT), **extra}


def kopa(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kopa_gen", "--root", str(ROOT), *argv],
        capture_output=True,
        text=True,
        env=env(),
        timeout=timeout,
        check=False,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr.rstrip("\n")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["call", "dart", "dart_company", "{corp_code: 00126380}"],
            "kopa-gen call: error: argument arguments: not valid JSON (Expecting property name enclosed in double "
            'quotes at column 2); quote keys and text values, e.g. \'{"corp_code": "00126380"}\' '
            "(see kopa-gen call --help)",
        ),
        (
            ["eval", "--policy", "oracle", "--extra-body", "{top_k: 20}"],
            "kopa-gen eval: error: argument --extra-body: not valid JSON (Expecting property name enclosed in double "
            'quotes at column 2); quote keys and text values, e.g. \'{"chat_template_kwargs": {"enable_thinking": '
            "false}}' (see kopa-gen eval --help)",
        ),
        (
            ["call", "dart", "dart_company", "[1]"],
            "kopa-gen call: error: argument arguments: must be a JSON object {...}, not list "
            "(see kopa-gen call --help)",
        ),
        (
            ["eval", "--policy", "oracle", "--concurrency", "0"],
            "kopa-gen eval: error: argument --concurrency: must be at least 1, got 0 (see kopa-gen eval --help)",
        ),
        (
            ["eval", "--policy", "oracle", "--concurrency", "-1"],
            "kopa-gen eval: error: argument --concurrency: must be at least 1, got -1 (see kopa-gen eval --help)",
        ),
        (
            ["eval", "--policy", "oracle", "--rollouts", "0"],
            "kopa-gen eval: error: argument --rollouts: must be at least 1, got 0 (see kopa-gen eval --help)",
        ),
        (
            ["eval", "--policy", "oracle", "--rollouts", "two"],
            "kopa-gen eval: error: argument --rollouts: 'two' is not a whole number (see kopa-gen eval --help)",
        ),
        (
            ["eval", "--policy", "openai"],
            "kopa-gen eval: error: policy openai talks to a model: give --base-url URL and --model M",
        ),
        (
            ["eval", "--policy", "openai", "--model", "m"],
            "kopa-gen eval: error: policy openai talks to a model: give --base-url URL and --model M",
        ),
        (
            ["eval", "--policy", "nope"],
            "kopa-gen eval: error: argument --policy: invalid choice: 'nope' (choose from "
            + ", ".join(repr(name) for name in registered())
            + ") (see kopa-gen eval --help)",
        ),
        (
            ["serve", "region", "--transport", "tcp"],
            "kopa-gen serve: error: argument --transport: invalid choice: 'tcp' (choose from 'stdio', 'http') "
            "(see kopa-gen serve --help)",
        ),
        (
            ["eval", "--policy", "oracle", "--judge-base-url", "http://127.0.0.1:9/v1"],
            "kopa-gen eval: error: --judge-base-url needs --judge-model",
        ),
        (
            ["report", "runs/no-such-run"],
            "kopa-gen report: error: runs/no-such-run/episodes.jsonl not found; "
            "run `kopa-gen eval --out runs/no-such-run` first",
        ),
        (["eval", "--policy", "oracle", "--k", "0"], "kopa-gen eval: error: --k must be at least 1, got 0"),
        (
            ["new", "platform", "region", "--family", "datagokr"],
            "kopa-gen new platform: error: specs/platforms/region/openapi.yaml exists; choose another id or remove it",
        ),
        (
            ["sandbox", "serve", "--port", "99999"],
            "kopa-gen sandbox serve: error: argument --port: a port is 1-65535, got 99999 "
            "(see kopa-gen sandbox serve --help)",
        ),
        (
            ["edge", "synth", "--graph", "/no/such/graph.json", "--out", "/tmp/kopa-never"],
            "kopa-gen edge synth: error: /no/such/graph.json not found; run `kopa-gen edge graph --out /no/such` "
            "first",
        ),
        (
            ["call", "region", "region_no_such_tool", "{}"],
            "kopa-gen call: error: region has no tool 'region_no_such_tool'; `kopa-gen tools region` lists them",
        ),
        (
            ["--root", "/no/such/root", "tools"],
            "kopa-gen tools: error: --root /no/such/root holds no specs/ folder; give the folder of a kopa-gen "
            "project",
        ),
        (["frobnicate"], None),
    ],
)
def test_a_command_line_mistake_is_one_line(argv: list[str], line: str | None) -> None:
    got = one_line(kopa(*argv))
    if line is not None:
        assert got == line
    else:
        assert got.startswith("kopa-gen: error: argument command: invalid choice: 'frobnicate'")


def keyed_platform(project: Project) -> Platform:
    """A platform of the benchmark's tasks that needs a key in live mode."""
    for _, task in project.tasks:
        for pid in load_fixture(project, task)["platforms"]:
            platform = project.platform(pid)
            if not platform.kopa.local and not platform.kopa.auth.optional:
                return platform
    raise AssertionError("no task uses a platform that needs a key")


def missing_key(platform: Platform) -> str:
    return (
        f"live mode for {platform.id} needs your API key in ${platform.kopa.auth.env} (issued by the platform); "
        "it is never logged"
    )


def test_live_without_a_key_is_one_line(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    platform = keyed_platform(project)
    tool = platform.operations[0].tool
    assert one_line(kopa("call", platform.id, tool, "{}", "--live")) == (
        f"kopa-gen call: error: {missing_key(platform)}"
    )
    # the server says so before it starts, not at the first call of a connected client
    assert one_line(kopa("serve", platform.id, "--live")) == f"kopa-gen serve: error: {missing_key(platform)}"
    task = next(t.id for _, t in project.tasks if platform.id in load_fixture(project, t)["platforms"])
    out = str(tmp_path / "run")
    got = kopa("eval", "--policy", "oracle", "--live", "--tasks", task, "--rollouts", "1", "--out", out)
    assert one_line(got) == f"kopa-gen eval: error: {missing_key(platform)}"


def test_help_shows_defaults_and_choices() -> None:
    text = " ".join(kopa("eval", "--help").stdout.split())
    assert "--rollouts ROLLOUTS episodes per task and seed (default: 4)" in text
    assert "--concurrency CONCURRENCY episodes run at once (per worker process) (default: 4)" in text
    assert "--workers WORKERS worker processes on this machine running the episodes (default: 1)" in text
    assert "{" + ",".join(registered()) + "}" in text
    serve = " ".join(kopa("serve", "--help").stdout.split())
    assert "--transport {stdio,http} MCP transport (default: stdio)" in serve
    # an option without a default does not say "(default: None)"
    assert "(default: None)" not in text and "(default: False)" not in text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_ctrl_c_ends_the_stdio_server_at_once(world: BuiltWorld) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kopa_gen", "serve", "region"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        proc.stdin.write((json.dumps(hello) + "\n").encode())
        proc.stdin.flush()
        assert b'"result"' in proc.stdout.readline()  # serving, and reading stdin in its worker thread
        proc.send_signal(signal.SIGINT)  # what a terminal's Ctrl-C sends
        code = proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode()
    assert code == 130 and "Traceback" not in err, err


def test_ctrl_c_ends_the_http_server(world: BuiltWorld) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kopa_gen", "serve", "region", "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env(),
    )
    assert proc.stderr is not None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode()
    assert code in (0, 130) and "Traceback" not in err, err


def test_sandbox_serve_prints_keys_ready_for_a_url(project: Project, world: BuiltWorld) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kopa_gen", "sandbox", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env(),
        text=True,
    )
    assert proc.stdout is not None
    encoded = [p for p in project.platforms if quote(sandbox_key(p), safe="") != sandbox_key(p)]
    try:
        lines = [
            proc.stdout.readline().rstrip("\n") for _ in range(len(project.platforms) + len(encoded) + 1)
        ]
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert encoded, "no sandbox key needs URL-encoding"  # data.go.kr keys carry + / =
    for platform in project.platforms:
        key = sandbox_key(platform)
        at = next(i for i, line in enumerate(lines) if line.startswith(f"{platform.id} "))
        assert lines[at].endswith(f"key {platform.key_param}={key}")  # the key stays last, for scripts
        if platform in encoded:
            assert (
                lines[at + 1]
                == f"{'':10} in a URL write it encoded: {platform.key_param}={quote(key, safe='')}"
            )
    assert lines[-1].startswith("a key with + / = must be URL-encoded in a hand-written query string")


def test_a_ray_address_with_no_cluster_is_refused_at_once(tmp_path: Path) -> None:
    """Ray itself retries an address with nothing behind it for minutes; eval and edge graph say so in one line
    before a run folder is made."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    out = tmp_path / "run"
    got = kopa("eval", "--policy", "oracle", "--ray", f"127.0.0.1:{port}", "--out", str(out), timeout=60)
    assert one_line(got).startswith(
        f"kopa-gen eval: error: argument --ray: no Ray cluster answers at 127.0.0.1:{port}"
    )
    assert not out.exists()
    got = kopa("edge", "graph", "--ray", "headnode", "--out", str(out), timeout=60)
    assert one_line(got) == (
        "kopa-gen edge graph: error: argument --ray: 'headnode' is not HOST:PORT (e.g. 10.0.0.1:6379, the address "
        "`ray start --head` prints)"
    )


def test_a_bad_world_worker_count_is_one_line(project: Project, tmp_path: Path) -> None:
    """Read only when a world has to be built: a cache without the world makes `build` build one. The cache keeps
    the project's checked specs (validating every spec again costs minutes on a busy machine, and is not what this
    test is about)."""
    cache = tmp_path / "cache"
    for kept in ("valid-specs", "projects"):
        if (cache_dir() / kept).is_dir():
            shutil.copytree(cache_dir() / kept, cache / kept)
    got = subprocess.run(
        [sys.executable, "-m", "kopa_gen", "--root", str(ROOT), "build"],
        capture_output=True,
        text=True,
        env=env(KOPA_GEN_CACHE=str(cache), KOPA_GEN_WORLD_WORKERS="two"),
        timeout=120,
        check=False,
    )
    assert got.returncode == 2, got.stderr
    assert got.stderr.strip().splitlines()[-1] == (
        "kopa-gen build: error: $KOPA_GEN_WORLD_WORKERS='two': give a whole number of processes, e.g. 2"
    )
    assert "Traceback" not in got.stderr


def test_a_missing_argument_is_refused_before_any_spec_is_loaded() -> None:
    """`kopa-gen call` says what is missing from the frozen tools.json alone, in the tool's own words: no platform
    spec, world, session or policy is imported for it (each of those costs seconds on a busy machine)."""
    from kopa_gen.mcp.describe import frozen_tools, generated_platforms

    pid, tool = next(
        (pid, t)
        for pid in generated_platforms(ROOT)
        for t in frozen_tools(ROOT, pid)
        if t["inputSchema"].get("required")
    )
    missing = "; ".join(f"{name}: required argument is missing" for name in tool["inputSchema"]["required"])
    heavy = [
        "kopa_gen.runtime.session",
        "kopa_gen.policies.base",
        "kopa_gen.client.client",
        "kopa_gen.mcp.server",
    ]
    script = (
        "import sys\nimport kopa_gen.project\nloads = []\n"
        "kopa_gen.project.load_project = lambda *a, **k: loads.append(a)\n"
        "from kopa_gen.cli import main\n"
        f"try:\n    main(['--root', {str(ROOT)!r}, 'call', {pid!r}, {tool['name']!r}, '{{}}'])\n"
        "except SystemExit:\n    pass\n"
        f"print('loaded:', [m for m in {heavy!r} if m in sys.modules], 'specs loaded:', len(loads))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env(), timeout=120, check=False
    )
    lines = ran.stdout.splitlines()
    expected = [f"invalid arguments for {tool['name']}: {missing}", "loaded: [] specs loaded: 0"]
    assert lines == expected, ran.stdout + ran.stderr

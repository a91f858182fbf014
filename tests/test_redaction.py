"""A live key never escapes, even from a service that echoes it. A stand-in for the real host (TLS with a
certificate made here for the platform's real host name, reached through a CONNECT proxy exactly as a corporate
proxy is reached: `HTTPS_PROXY`, `SSL_CERT_FILE`; no kopa-gen code is told about it) echoes the key it is sent in a
successful row, in an error message, in a body that is not the platform's format (whose error snippet is cut), in
a 500's body and in a response header. Every output is then searched for the key raw, URL-encoded (upper- and
lower-case hex), base64 and hex, and for every 16-character window of it: `kopa-gen call --live`'s stdout and
stderr, the MCP server's results, every log record of the process at DEBUG (httpx's own included, exception text
included), and the run folder of a live eval."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import hashlib
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kopa_gen.cli import main
from kopa_gen.compose import platform_client
from kopa_gen.envelopes import Page, family
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.mcp.server import platforms_server
from kopa_gen.policies.double import ChatDouble, Reply, ToolCall
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT

PLATFORM = "region"  # a data.go.kr key: 88 characters with + / =, whose URL-encoded form differs from it
KEY = base64.b64encode(hashlib.sha512(b"kopa-gen redaction test").digest()).decode("ascii")
MODES = ("ok", "error", "garbage", "http-500", "gateway")


def spellings(key: str) -> dict[str, str]:
    encoded = quote(key, safe="")
    lower = encoded[:0] + "".join(
        part if i == 0 else "%" + part[:2].lower() + part[2:] for i, part in enumerate(encoded.split("%"))
    )
    found = {
        "raw": key,
        "url-encoded": encoded,
        "url-encoded, lower-case hex": lower,
        "base64": base64.b64encode(key.encode()).decode(),
        "hex": key.encode().hex(),
    }
    found |= {f"window {i}": key[i : i + 16] for i in range(len(key) - 15)}
    return found


def leaks(text: str) -> list[str]:
    return [name for name, form in spellings(KEY).items() if form in text]


def certificates(folder: Path, host: str) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for `host` signed by it (the client is told to trust the CA)."""
    now = dt.datetime.now(dt.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("kopa-gen test CA"))
        .issuer_name(name("kopa-gen test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name(host))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = folder / "ca.pem", folder / "host.pem", folder / "host.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return paths


def stand_in(project: Project) -> Starlette:
    """The echoing service: each answer carries the key it was sent, raw and URL-encoded, where the tool's
    `locatadd_nm` argument says."""
    platform = project.platform(PLATFORM)
    (op,) = [op for op in platform.operations if op.kopa.shape == "list"][:1]
    envelope = family(platform.kopa.envelope)
    text_fields = [n for n, p in op.row_props.items() if p.get("type", "string") == "string"]

    async def answer(request: Request) -> Response:
        sent = request.query_params.get(platform.key_param, "")
        echo = f"{sent} / {quote(sent, safe='')}"
        headers = {"x-echo": sent, "x-echo-encoded": quote(sent, safe="")}
        mode = request.query_params.get("locatadd_nm", "ok")
        if mode == "ok":
            row = {name: f"{name} {echo}" for name in text_fields}
            reply = envelope.render(platform, op, platform.code("INFO-0"), "json", Page([row], 1, 1, 10))
        elif mode == "error":
            code = platform.code("ERROR-1").model_copy(update={"message": f"bad serviceKey {echo}"})
            reply = envelope.render(platform, op, code, "json")
        elif mode == "gateway":
            code = platform.code("30").model_copy(update={"message": f"SERVICE_KEY {echo} IS NOT REGISTERED"})
            from kopa_gen.envelopes.gateway import render_gateway

            reply = render_gateway(code)
        elif mode == "garbage":  # the key straddles the ~120-byte error snippet
            return Response(b"<html>" + b"." * 90 + echo.encode() + b"</html>", 200, headers, "text/html")
        else:
            return Response(f"upstream failed for {echo}", 500, headers, "text/plain")
        return Response(reply.body, reply.status, headers, reply.content_type)

    return Starlette(routes=[Route("/{path:path}", answer)])


@contextlib.contextmanager
def serving(app: Any, **ssl_files: str) -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="critical", timeout_graceful_shutdown=1, **ssl_files
    )  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def connect_proxy(target_port: int) -> Iterator[int]:
    """An HTTP CONNECT proxy that sends every tunnel to the stand-in, whatever host is asked for."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def pipe(a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := a.recv(65536):
                b.sendall(data)
        with contextlib.suppress(OSError):
            b.shutdown(socket.SHUT_WR)

    def tunnel(client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                client.close()
                return
            head += chunk
        upstream = socket.create_connection(("127.0.0.1", target_port))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
        pipe(client, upstream)

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = listener.accept()
                threading.Thread(target=tunnel, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield port
    finally:
        listener.close()


@pytest.fixture
def live_host(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    host = urlsplit(project.platform(PLATFORM).server_url).hostname
    assert host is not None
    ca, cert, key = certificates(tmp_path, host)
    with (
        serving(stand_in(project), ssl_certfile=str(cert), ssl_keyfile=str(key)) as port,
        connect_proxy(port) as proxy,
    ):
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy}")
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        monkeypatch.setenv(project.platform(PLATFORM).kopa.auth.env, KEY)
        yield


def test_an_echoing_service_never_gets_the_key_into_any_output(
    project: Project,
    world: BuiltWorld,
    live_host: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    outputs: dict[str, str] = {}
    tool = next(op.tool for op in project.platform(PLATFORM).operations if op.kopa.shape == "list")

    for mode in (
        "ok",
        "garbage",
    ):  # kopa-gen call --live (the other answers go through the same tool box below)
        code = main(
            ["--root", str(ROOT), "call", "--live", PLATFORM, tool, json.dumps({"locatadd_nm": mode})]
        )
        captured = capsys.readouterr()
        outputs[f"call {mode}"] = captured.out + captured.err
        assert code == (0 if mode == "ok" else 1), outputs[f"call {mode}"]
    assert "***" in outputs["call ok"] and "***" in outputs["call garbage"]

    async def through_mcp() -> None:  # the MCP server, live
        server = platforms_server(
            ROOT, [PLATFORM], lambda: {PLATFORM: platform_client(project, PLATFORM, True)}
        )
        async with Client(server) as client:
            for mode in MODES:
                result = await client.call_tool(tool, {"locatadd_nm": mode})
                outputs[f"mcp {mode}"] = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)

    asyncio.run(through_mcp())

    task = next(t for _, t in project.tasks if PLATFORM in _platforms(project, t))
    for other in _platforms(
        project, task
    ):  # the run opens every platform of the task live; only PLATFORM echoes
        env = project.platform(other).kopa.auth.env
        if other != PLATFORM:
            monkeypatch.setenv(env, f"another-{other}-key-never-sent")
    script = [
        Reply(tool_calls=[ToolCall(tool, {"locatadd_nm": m}) for m in MODES]),
        Reply(content="최종 답: 1"),
    ]
    with ChatDouble(script) as double:  # a live eval's run folder
        endpoint = EndpointSettings(
            base_url=double.base_url, model="m", api_key_env="KOPA_TEST_NO_KEY", retries=0
        )
        config = EvalConfig(
            policy="openai", out=tmp_path / "run", rollouts=1, tasks=[task.id], live=True,
            answer_mode="text", endpoint=endpoint,
        )  # fmt: skip
        asyncio.run(run_eval(project, config))
        outputs["model requests"] = json.dumps(double.bodies, ensure_ascii=False)
    for path in sorted((tmp_path / "run").iterdir()):
        outputs[f"run folder {path.name}"] = path.read_text(encoding="utf-8")

    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    outputs["log"] = "\n".join(formatter.format(r) for r in caplog.records)
    assert any(r.name.startswith("httpx") for r in caplog.records), "httpx's request log was captured"
    assert "retry" in outputs["log"], "the retry line was captured"

    found = {where: leaks(text) for where, text in outputs.items()}
    assert not {where: names for where, names in found.items() if names}
    checked = len(spellings(KEY)) * len(outputs)
    assert checked > 70 * 10, checked  # every form, windows included, against every output


def _platforms(project: Project, task: Any) -> list[str]:
    fixture = json.loads((project.fixtures_dir / task.domain / f"{task.id}.json").read_text(encoding="utf-8"))
    platforms: list[str] = fixture["platforms"]
    return platforms


def test_every_spelling_is_redacted_before_a_cut() -> None:
    from kopa_gen.client.redaction import redact

    for name, form in spellings(KEY).items():
        if name.startswith("window"):
            continue
        text = f"echo: {form} (sent)"
        assert leaks(redact(text, [KEY])) == [], name
        assert ssl  # the TLS module is what the stand-in is served with


def test_a_key_that_holds_another_key_is_masked_whole_in_any_hash_order() -> None:
    """Two keys of one process where one begins with the other (a test key and a longer live one, a key and its
    successor): the longer must be masked before the shorter, or its tail shows. Which one a set of keys yields
    first depends on the string hash seed, so the check runs under several seeds."""
    import os
    import subprocess
    import sys

    script = (
        "from kopa_gen.client.redaction import register, redact, redact_bytes\n"
        "short, long = 'sk-check-0123456789', 'sk-check-0123456789abcdef'\n"
        "register(short)\n"
        "said = redact('echo ' + long + ' end', [long])\n"
        "body = redact_bytes(('echo ' + long + ' end').encode(), [long]).decode()\n"
        "print(said, body, sep='|')\n"
    )
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        said = out.stdout.strip()
        assert "abcdef" not in said and said == "echo *** end|echo *** end", (seed, said)

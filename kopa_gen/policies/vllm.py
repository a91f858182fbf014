"""`kopa-gen eval --serve-vllm MODEL_PATH`: start a local vLLM OpenAI-compatible server for the run, with the
tool-call parser of the model's family, wait until it serves the model, and stop it afterwards (as BFCL launches
its own server).

The families and their flags (docs/evaluation.md gives the sources; vLLM's own documentation wins where it
differs): Qwen3.5 writes tool calls in the Qwen3-Coder XML layout (`qwen3_coder`), gemma-4 in its own
(`gemma4`), EXAONE (4.0's model card; 4.5 unverified) in the Hermes layout (`hermes`), Ministral-3 in Mistral's
(`mistral`, with Mistral's tokenizer and config formats). A family is recognised from the model's config.json
`model_type` or its folder name; `--vllm-args` may name the parser itself, and then no family is needed.

vLLM is not a dependency of kopa-gen: the server is `vllm` on PATH, else `python -m
vllm.entrypoints.openai.api_server`, or the command in $KOPA_GEN_VLLM (another environment's vllm)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from kopa_gen.language.diagnostics import UserError

COMMAND_ENV = "KOPA_GEN_VLLM"


@dataclass(frozen=True)
class Family:
    """A model family: how to recognise it and the vLLM flags its tool calls need."""

    name: str
    model_types: tuple[str, ...]  # config.json model_type values
    names: tuple[str, ...]  # substrings of the model's folder name, lower-cased
    flags: tuple[str, ...]


FAMILIES: tuple[Family, ...] = (
    Family(
        "qwen3.5",
        ("qwen3_5", "qwen3_5_moe"),
        ("qwen3.5", "qwen3_5", "qwen3-5"),
        ("--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3"),
    ),
    Family(
        "gemma-4",
        ("gemma4", "gemma4_text"),
        ("gemma-4", "gemma4"),
        ("--enable-auto-tool-choice", "--tool-call-parser", "gemma4"),
    ),
    Family(
        "exaone-4.5",
        ("exaone4", "exaone4_5"),
        ("exaone-4", "exaone4"),
        ("--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--reasoning-parser", "deepseek_r1"),
    ),
    Family(
        "ministral-3",
        ("mistral3", "ministral3"),
        ("ministral-3", "ministral3"),
        (
            "--tokenizer-mode",
            "mistral",
            "--config-format",
            "mistral",
            "--load-format",
            "mistral",
            "--enable-auto-tool-choice",
            "--tool-call-parser",
            "mistral",
        ),
    ),
)


class ServeError(UserError):
    """The local vLLM server could not be started or never became ready: one line, with where its log is."""


def family_of(model_path: str) -> Family | None:
    """The family of the model at `model_path` (a folder or a hub id): config.json's model_type, else the name."""
    config = Path(model_path) / "config.json"
    if config.is_file():
        try:
            model_type = str(json.loads(config.read_text(encoding="utf-8")).get("model_type", "")).lower()
        except (OSError, ValueError, AttributeError):
            model_type = ""
        for family in FAMILIES:
            if model_type in family.model_types:
                return family
    name = Path(model_path.rstrip("/")).name.lower()
    return next((f for f in FAMILIES if any(n in name for n in f.names)), None)


def served_name(model_path: str) -> str:
    """The name the server lists the model under (its folder name)."""
    return Path(model_path.rstrip("/")).name or model_path


def launcher() -> list[str]:
    """The command that starts vLLM's OpenAI server: $KOPA_GEN_VLLM, `vllm serve`, or the module."""
    given = os.environ.get(COMMAND_ENV)
    if given:
        return shlex.split(given)
    if shutil.which("vllm"):
        return ["vllm", "serve"]
    return [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]


def serve_command(
    model_path: str,
    port: int,
    extra: list[str],
    name: str | None = None,
    tool_parser: bool = True,
    base: list[str] | None = None,
) -> list[str]:
    """The full command line: the launcher, the model (positional for `vllm serve`, `--model` for the module),
    loopback host and port, the served name, the family's flags (with `tool_parser`, unless `extra` names a
    parser itself; prompt mode needs none), then `extra`."""
    base = base if base is not None else launcher()
    model = [model_path] if base[-1:] == ["serve"] else ["--model", model_path]
    own = ["--host", "127.0.0.1", "--port", str(port), "--served-model-name", name or served_name(model_path)]
    flags: list[str] = []
    if tool_parser and not any(a.startswith("--tool-call-parser") for a in extra):
        family = family_of(model_path)
        if family is None:
            known = ", ".join(f.name for f in FAMILIES)
            raise ServeError(
                f"no tool-call parser is known for {model_path} (families: {known}); give one with "
                '--vllm-args="--enable-auto-tool-choice --tool-call-parser NAME", or run with --tool-mode prompt '
                "(tools described in the prompt: no parser needed)"
            )
        flags = list(family.flags)
    return [*base, *model, *own, *flags, *extra]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    """A started server process: its command, base URL, the name it serves and its log file."""

    command: list[str]
    base_url: str
    model: str
    log: Path
    process: subprocess.Popen[bytes]

    def tail(self, lines: int = 5) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])

    def wait_ready(self, timeout_s: float, poll_s: float = 1.0) -> float:
        """Poll /health, then /v1/models until it lists the model; the seconds it took. ServeError when the
        process exits or the time runs out."""
        start = time.monotonic()
        root = self.base_url.removesuffix("/v1")
        with httpx.Client(timeout=5.0) as http:
            while True:
                if self.process.poll() is not None:
                    raise ServeError(
                        f"the vLLM server exited with status {self.process.returncode} before it was ready "
                        f"(log {self.log}: {self.tail()})"
                    )
                try:
                    if http.get(f"{root}/health").status_code == 200:
                        listed = http.get(f"{self.base_url}/models").json().get("data") or []
                        if any(isinstance(m, dict) and m.get("id") == self.model for m in listed):
                            return time.monotonic() - start
                except (httpx.HTTPError, ValueError, AttributeError):
                    pass
                if time.monotonic() - start > timeout_s:
                    raise ServeError(
                        f"the vLLM server did not serve {self.model} within {timeout_s:g}s (log {self.log}: "
                        f"{self.tail()}); raise --vllm-ready-timeout for a large model"
                    )
                time.sleep(poll_s)

    def stop(self, grace_s: float = 30.0) -> None:
        """SIGTERM to the server's process group (vLLM's engine processes too), SIGKILL after `grace_s`."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@contextlib.contextmanager
def serving(
    model_path: str,
    extra: list[str],
    name: str | None = None,
    ready_timeout_s: float = 1200.0,
    tool_parser: bool = True,
    say: Callable[[str], None] | None = None,
) -> Iterator[Server]:
    """Start the server, wait until it serves the model, yield it, and stop it however the block ends."""
    port = free_port()
    command = serve_command(model_path, port, extra, name, tool_parser)
    log = Path(tempfile.gettempdir()) / f"kopa-gen-vllm-{port}.log"
    if say is not None:
        say(f"starting {shlex.join(command)} (log {log})")
    with log.open("wb") as out:
        try:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise ServeError(
                f"cannot start {command[0]} ({exc}); install vLLM (`pip install vllm`) or point ${COMMAND_ENV} "
                "at its command"
            ) from None
    server = Server(command, f"http://127.0.0.1:{port}/v1", name or served_name(model_path), log, process)
    try:
        seconds = server.wait_ready(ready_timeout_s)
        if say is not None:
            say(f"vLLM serves {server.model} at {server.base_url} (ready after {seconds:.0f}s)")
        yield server
    finally:
        server.stop()

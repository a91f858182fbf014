"""Serving a model for a run, as an on-premise user does: `--serve-vllm` builds the vLLM command line of the
model's family, starts it, waits until it serves the model, runs and stops it (tested against
tests/vllm_double.py, a protocol double of `vllm serve` run as a real process: vLLM itself is not installed here);
the endpoint check refuses a wrong URL, path, model, key or a server without tool support in one line before any
run folder exists; prompt mode reads calls written in the reply's text."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.cli import main
from kopa_gen.language.settings import AgentSettings, EndpointSettings
from kopa_gen.policies.base import TaskContext, system_prompt
from kopa_gen.policies.double import ChatDouble, Fail, Raw, Reply, ToolCall
from kopa_gen.policies.openai import OpenAIPolicy
from kopa_gen.policies.preflight import EndpointCheckError, check_endpoint
from kopa_gen.policies.prompted import read_calls
from kopa_gen.policies.vllm import ServeError, serve_command
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT

DOUBLE = Path(__file__).parent / "vllm_double.py"
QWEN_FLAGS = ["--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3"]


def model_dir(tmp_path: Path, name: str, model_type: str | None = None) -> str:
    folder = tmp_path / name
    folder.mkdir(parents=True)
    if model_type is not None:
        (folder / "config.json").write_text(json.dumps({"model_type": model_type}), encoding="utf-8")
    return str(folder)


# --- the command line ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "model_type", "flags"),
    [
        ("Qwen3.5-9B", None, QWEN_FLAGS),
        ("checkpoint-400", "qwen3_5", QWEN_FLAGS),
        ("gemma-4-26B-A4B-it", None, ["--enable-auto-tool-choice", "--tool-call-parser", "gemma4"]),
        (
            "EXAONE-4.5-33B",
            None,
            ["--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--reasoning-parser", "deepseek_r1"],
        ),
        (
            "Ministral-3-8B-Instruct-2512",
            None,
            [
                "--tokenizer-mode", "mistral", "--config-format", "mistral", "--load-format", "mistral",
                "--enable-auto-tool-choice", "--tool-call-parser", "mistral",
            ],
        ),
    ],
)  # fmt: skip
def test_each_family_gets_its_tool_parser(
    tmp_path: Path, name: str, model_type: str | None, flags: list[str]
) -> None:
    path = model_dir(tmp_path, name, model_type)
    command = serve_command(path, 8123, ["--max-model-len", "65536"], base=["vllm", "serve"])
    served = Path(path).name
    assert command == [
        "vllm", "serve", path, "--host", "127.0.0.1", "--port", "8123", "--served-model-name", served,
        *flags, "--max-model-len", "65536",
    ]  # fmt: skip
    module = serve_command(path, 8123, [], base=[sys.executable, "-m", "vllm.entrypoints.openai.api_server"])
    assert module[3:5] == ["--model", path], "the module form takes --model, not a positional path"


def test_an_unknown_family_needs_a_parser_named_or_prompt_mode(tmp_path: Path) -> None:
    path = model_dir(tmp_path, "my-llama", "llama")
    with pytest.raises(
        ServeError, match=r"no tool-call parser is known for .*my-llama \(families: qwen3\.5, "
    ):
        serve_command(path, 1, [], base=["vllm", "serve"])
    named = serve_command(
        path, 1, ["--enable-auto-tool-choice", "--tool-call-parser", "llama3_json"], base=["vllm", "serve"]
    )
    assert named[-3:] == ["--enable-auto-tool-choice", "--tool-call-parser", "llama3_json"]
    assert serve_command(path, 1, [], tool_parser=False, base=["vllm", "serve"])[-2:] == [
        "--served-model-name",
        "my-llama",
    ]


# --- the launcher, against a real server process -------------------------------------------------------------


def double_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **extra: str) -> Path:
    argv = tmp_path / "argv.json"
    monkeypatch.setenv("KOPA_GEN_VLLM", f"{sys.executable} {DOUBLE} serve")
    monkeypatch.setenv("KOPA_TEST_VLLM_ARGV", str(argv))
    for key, value in extra.items():
        monkeypatch.setenv(key, value)
    return argv


def refused(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_serve_vllm_starts_waits_runs_and_stops_the_server(
    project: Project,
    world: BuiltWorld,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv_file = double_env(monkeypatch, tmp_path, KOPA_TEST_VLLM_DELAY="1.5")
    path = model_dir(tmp_path, "Qwen3.5-4B")
    out = tmp_path / "run"
    code = main(
        [
            "--root", str(ROOT), "eval", "--serve-vllm", path, "--vllm-args=--max-model-len 8192",
            "--tasks", "fin-003", "--rollouts", "1", "--out", str(out), "--vllm-ready-timeout", "60",
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    argv = json.loads(argv_file.read_text(encoding="utf-8"))
    port = int(argv[argv.index("--port") + 1])
    assert argv == [
        "serve", path, "--host", "127.0.0.1", "--port", str(port), "--served-model-name", "Qwen3.5-4B",
        *QWEN_FLAGS, "--max-model-len", "8192",
    ]  # fmt: skip
    asked = [
        json.loads(line) for line in Path(f"{argv_file}.requests").read_text(encoding="utf-8").splitlines()
    ]
    assert asked[0] == {"model": "Qwen3.5-4B", "tools": True}, "the endpoint check comes first, with a tool"
    assert len(asked) == 2 and asked[1]["model"] == "Qwen3.5-4B"
    assert "vLLM serves Qwen3.5-4B at http://127.0.0.1:" in err and "(ready after " in err
    assert refused(port), "the server is stopped when the run ends"
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["endpoint"]["model"] == "Qwen3.5-4B" and run["server"].startswith(f"vllm serve {path} ")
    (record,) = [
        json.loads(line) for line in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert record["usage"]["prompt_tokens"] == 7 and record["final_message"] == "정답: 모르겠습니다"


def test_a_server_that_cannot_start_is_one_line_with_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    double_env(monkeypatch, tmp_path, KOPA_TEST_VLLM_FAIL="torch.OutOfMemoryError: CUDA out of memory")
    out = tmp_path / "run"
    path = model_dir(tmp_path, "Qwen3.5-9B")
    code = main(["--root", str(ROOT), "eval", "--serve-vllm", path, "--tasks", "fin-003", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and not out.exists()
    assert err[-1].startswith(
        "kopa-gen eval: error: the vLLM server exited with status 3 before it was ready"
    )
    assert "CUDA out of memory" in err[-1]


def test_serve_vllm_refuses_a_base_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--serve-vllm", "/m/Qwen3.5-4B", "--base-url", "http://x/v1"]) == 2
    assert "--serve-vllm starts its own server: leave out --base-url" in capsys.readouterr().err


# --- the endpoint check --------------------------------------------------------------------------------------


def endpoint(base_url: str, model: str = "double", **fields: Any) -> EndpointSettings:
    return EndpointSettings(base_url=base_url, model=model, api_key_env="KOPA_TEST_CHECK_KEY", **fields)


@pytest.mark.anyio
async def test_a_model_that_answers_passes_with_one_request() -> None:
    with ChatDouble([Reply(tool_calls=[ToolCall("echo", {"text": "OK"})])]) as double:
        checked = await check_endpoint(endpoint(double.base_url), tools=True)
        (body,) = double.bodies
    assert checked.called_tool and body["max_tokens"] == 1 and body["model"] == "double"
    assert [t["function"]["name"] for t in body["tools"]] == ["echo"] and body["tool_choice"] == "auto"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (
            Fail(404, "The model `qwen` does not exist."),
            "does not serve model 'qwen' (HTTP 404); it serves: double; give --model",
        ),
        (
            Fail(
                400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
            ),
            "the server refuses tool calls (HTTP 400: ",
        ),
        (Fail(401, "invalid key sk-check-0123456789"), "refused the key (HTTP 401: "),
        (Fail(503, "loading"), "answered HTTP 503 ("),
        (Raw({"object": "list"}), "answered 200 but not with a chat completion"),
    ],
)
async def test_each_refusal_says_what_to_do(reply: Any, said: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOPA_TEST_CHECK_KEY", "sk-check-0123456789")
    with ChatDouble([reply]) as double:
        with pytest.raises(EndpointCheckError) as caught:
            await check_endpoint(endpoint(double.base_url, "qwen"), tools=True)
        assert len(double.requests) == 1
    assert said in str(caught.value) and "sk-check-0123456789" not in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.anyio
async def test_a_refusal_that_echoes_the_key_at_the_cut_shows_none_of_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server's text is cut to 300 characters for the message: the key is redacted before the cut, so a key
    the cut falls inside leaves no piece of itself (the body's wrapper shifts where the key lands, so the key is
    placed at every offset around the cut)."""
    key = "sk-check-0123456789abcdef"
    monkeypatch.setenv("KOPA_TEST_CHECK_KEY", key)
    offsets = range(230, 310, 4)
    with ChatDouble([Fail(401, "x" * n + key) for n in offsets]) as double:
        said = []
        for _ in offsets:
            with pytest.raises(EndpointCheckError) as caught:
                await check_endpoint(endpoint(double.base_url), tools=False)
            said.append(str(caught.value))
    pieces = {key[i : i + 6] for i in range(len(key) - 5)}
    assert not [(text, p) for text in said for p in pieces if p in text]
    assert any(text.count("x") < n for text, n in zip(said, offsets, strict=True)), "the cut fell in the key"


@pytest.mark.anyio
async def test_a_base_url_without_v1_and_a_closed_port_say_so() -> None:
    with (
        ChatDouble([]) as double,
        pytest.raises(EndpointCheckError, match=r"HTTP 404 .*check the base URL \(it usually ends in /v1\)"),
    ):
        await check_endpoint(endpoint(double.base_url.removesuffix("/v1")), tools=True)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        with pytest.raises(EndpointCheckError, match=r"cannot reach the model endpoint .* \(ConnectError"):
            await check_endpoint(endpoint(url), tools=True)


def test_eval_checks_the_model_before_making_a_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatDouble([Fail(404, "The model `nope` does not exist.")]) as double:
        code = main(
            [
                "--root",
                str(ROOT),
                "eval",
                "--base-url",
                double.base_url,
                "--model",
                "nope",
                "--out",
                str(tmp_path / "r"),
            ]
        )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "r").exists()
    assert "does not serve model 'nope' (HTTP 404); it serves: double; give --model" in err


# --- prompt mode ---------------------------------------------------------------------------------------------


def test_calls_are_read_from_the_text_in_order() -> None:
    text = (
        "회사 코드를 찾겠습니다.\n<tool_call>\n"
        '{"name": "dart_corp_code", "arguments": {"corp_name": "삼성전자"}}\n</tool_call>\n'
        '<tool_call>{"name": "dart_company", "arguments": "{\\"corp_code\\": \\"00126380\\"}"}</tool_call>\n'
        '<tool_call>{"name": "dart_company", "arguments": {"corp_code": "0012'
    )
    content, calls = read_calls(text, 2)
    assert content == "회사 코드를 찾겠습니다."
    assert [(c.id, c.tool) for c in calls] == [
        ("call_2_0", "dart_corp_code"),
        ("call_2_1", "dart_company"),
        ("call_2_2", "dart_company"),
    ]
    assert calls[0].arguments == {"corp_name": "삼성전자"} and calls[1].arguments == {"corp_code": "00126380"}
    assert (
        "Unterminated string starting at" in calls[2].arguments.error
    )  # an unclosed last block still counts


@pytest.mark.anyio
async def test_prompt_mode_describes_the_tools_and_returns_results_as_text(
    project: Project, world: BuiltWorld
) -> None:
    task = next(t for _, t in project.tasks if t.id == "fin-001")
    ctx = TaskContext(task, {})
    call = '<tool_call>\n{"name": "dart_corp_code", "arguments": {"corp_name": "삼성전자"}}\n</tool_call>'
    broken = '<tool_call>{"name": "dart_company", "arguments": {"corp_code": 0012}}</tool_call>'
    script = [Reply(content=f"찾겠습니다.\n{call}"), Reply(content=broken), Reply(content="정답: 모름")]
    with ChatDouble(script) as double:
        agent = OpenAIPolicy(
            endpoint=EndpointSettings(base_url=double.base_url, model="m", backoff_s=0),
            agent=AgentSettings(tool_mode="prompt"),
        )
        async with Session.open(project, ["dart"], max_calls=6) as session:
            episode = await agent.run(ctx, session)
        first, second, third = double.bodies
    assert "tools" not in first and "tool_choice" not in first
    system = first["messages"][0]["content"]
    assert system.startswith(system_prompt(task)) and "<tools>" in system
    assert all(f'"name": "{t["name"]}"' in system for t in session.tools())
    assert second["messages"][2] == {"role": "assistant", "content": f"찾겠습니다.\n{call}"}
    assert second["messages"][3] == {
        "role": "user",
        "content": f'<tool_response name="dart_corp_code">\n{session.calls[0].text}\n</tool_response>',
    }
    assert [(c.tool, c.error_code) for c in session.calls] == [
        ("dart_corp_code", None),
        ("dart_company", "bad_arguments"),
    ]
    assert (
        "not valid JSON: Expecting ',' delimiter: the parser stopped at line 1, column 54 (character 53)"
        in session.calls[1].text
    )
    assert session.calls[1].text in third["messages"][-1]["content"]
    assert (episode.stop_reason, episode.final_message, episode.turns) == (
        "answered",
        "정답: 모름",
        [[0], [1]],
    )


def test_native_tool_parsing_errors_name_the_position() -> None:
    from kopa_gen.policies.openai import parse_turn

    body = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [{"id": "a", "function": {"name": "x", "arguments": '{"a": 1,, "b": 2}'}}],
                }
            }
        ]
    }
    (call,) = parse_turn(body, 0).calls
    assert call.arguments.error == (
        "Expecting property name enclosed in double quotes: the parser stopped at line 1, column 9 (character 8), "
        """near '{"a": 1,, "b": 2}'"""
    )

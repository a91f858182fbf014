"""The command line's shared pieces: each `Endpoint` group refuses a base URL without a model, naming both flags;
a user's mistake is one line and exit status 2 (with its hint); a bug is a traceback, never a generic message; and
a flag's default is the config class's own."""

from __future__ import annotations

import pytest

from kopa_gen import cli
from kopa_gen.cli import UsageError, main
from kopa_gen.cli import run as run_commands
from kopa_gen.cli.edge import GraphOptions
from kopa_gen.cli.options import parse
from kopa_gen.cli.run import EvalOptions
from kopa_gen.edge.graph import GraphConfig
from kopa_gen.evaluate.runner import EvalConfig
from kopa_gen.language.diagnostics import NotFound, UserError
from kopa_gen.language.settings import AgentSettings, EndpointSettings, GenerationSettings


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["eval", "--base-url", "http://x/v1"], "base-url"),
        (["eval", "--policy", "oracle", "--judge-base-url", "http://x/v1"], "judge-base-url"),
        (["edge", "graph", "--scorer", "llm", "--scorer-base-url", "http://x/v1"], "scorer-base-url"),
        (["edge", "synth", "--writer-base-url", "http://x/v1"], "writer-base-url"),
        (["edge", "synth", "--resolver-base-url", "http://x/v1"], "resolver-base-url"),
        (["edge", "synth", "--verifier-base-url", "http://x/v1"], "verifier-base-url"),
    ],
)
def test_a_base_url_without_its_model_is_refused(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    command = " ".join(argv[:2] if argv[0] == "edge" else argv[:1])
    assert err == f"kopa-gen {command}: error: --{flag} needs --{flag.replace('base-url', 'model')}\n"


def test_an_endpoint_group_parses_into_one_endpoint() -> None:
    args = cli.parser().parse_args(
        [
            "eval",
            "--base-url",
            "http://x/v1",
            "--model",
            "m",
            "--judge-base-url",
            "http://j/v1",
            "--judge-model",
            "j",
        ]
    )
    args.answer_mode = "text"  # the judge reads prose
    options = parse(EvalOptions, args)
    assert options.model_endpoint == EndpointSettings(base_url="http://x/v1", model="m")
    assert options.judge is not None and options.judge.model == "j"
    assert options.name == "openai"


def test_generation_and_agent_flags_fill_one_settings_object_each() -> None:
    args = cli.parser().parse_args(
        [
            "eval", "--base-url", "http://x/v1/", "--model", "m", "--temperature", "0.7", "--top-p", "0.9",
            "--max-tokens", "512", "--sampling-seed", "-1", "--stop", "</answer>", "--stop", "END",
            "--extra-body", '{"chat_template_kwargs": {"enable_thinking": false}}', "--timeout", "30",
            "--retries", "1", "--max-turns", "12", "--episode-timeout", "90", "--no-parallel-tool-calls",
            "--tool-mode", "prompt", "--no-budget-grace", "--tool-result-chars", "0",
        ]
    )  # fmt: skip
    options = parse(EvalOptions, args)
    assert options.model_endpoint == EndpointSettings(
        base_url="http://x/v1",
        model="m",
        timeout_s=30,
        retries=1,
        generation=GenerationSettings(
            temperature=0.7,
            top_p=0.9,
            max_tokens=512,
            seed=None,
            stop=["</answer>", "END"],
            extra_body={"chat_template_kwargs": {"enable_thinking": False}},
        ),
    )
    assert options.agent == AgentSettings(
        max_turns=12, episode_timeout_s=90, parallel_tool_calls=False, tool_mode="prompt", budget_grace=False
    )
    assert options.tool_result_chars is None
    plain = parse(EvalOptions, cli.parser().parse_args(["eval", "--base-url", "http://x/v1", "--model", "m"]))
    assert plain.agent == AgentSettings() and plain.tool_result_chars == EvalConfig.tool_result_chars
    assert plain.model_endpoint == EndpointSettings(base_url="http://x/v1", model="m")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--temperature", "3"], "argument --temperature: Input should be less than or equal to 2"),
        (["--top-p", "0"], "argument --top-p: Input should be greater than 0"),
        (
            ["--extra-body", '{"temperature": 1}'],
            "argument --extra-body: extra body may not set 'temperature': use --temperature",
        ),
        (
            ["--extra-body", '{"messages": []}'],
            "argument --extra-body: extra body may not set 'messages': kopa-gen writes it",
        ),
        (["--extra-body", "[1]"], "argument --extra-body: must be a JSON object {...}, not list"),
        (["--max-turns", "0"], "argument --max-turns: Input should be greater than or equal to 1"),
        (
            ["--base-url", "localhost:8000/v1"],
            "argument --base-url: 'localhost:8000/v1' is not an http(s) URL",
        ),
    ],
)
def test_a_setting_out_of_range_is_one_line_naming_its_flag(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["eval", "--base-url", "http://x/v1", "--model", "m"]
    try:  # argparse's own type errors exit; ours return the status
        code = main([*base, *argv] if argv[0] != "--base-url" else ["eval", *argv, "--model", "m"])
    except SystemExit as exc:
        code = int(str(exc.code))
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kopa-gen eval: error: {said}") and err.count("\n") == 1, err


def test_defaults_are_the_config_classes_own() -> None:
    options = parse(EvalOptions, cli.parser().parse_args(["eval", "--policy", "oracle"]))
    config = EvalConfig(policy="oracle", out=None)  # type: ignore[arg-type]
    assert (options.rollouts, options.seeds, options.concurrency, options.answer_mode) == (
        config.rollouts,
        config.seeds,
        config.concurrency,
        config.answer_mode,
    )
    graph = parse(GraphOptions, cli.parser().parse_args(["edge", "graph"]))
    assert (graph.paths, graph.iterations, graph.epsilon, graph.audit) == (
        GraphConfig.paths_per_iteration,
        GraphConfig.max_iterations,
        GraphConfig.epsilon,
        GraphConfig.audit_trials,
    )


def test_a_user_error_is_one_line_with_its_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(options: object) -> int:
        raise UsageError("no such thing", hint="give --json")

    monkeypatch.setattr(run_commands, "cmd_stats", refuse)
    assert main(["stats"]) == 2
    assert capsys.readouterr().err == "kopa-gen stats: error: no such thing (give --json)\n"


def test_an_unknown_name_is_a_user_error_and_still_a_key_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unknown(options: object) -> int:
        raise NotFound("no task 'fin-999'")

    assert issubclass(NotFound, UserError) and issubclass(NotFound, KeyError)
    monkeypatch.setattr(run_commands, "cmd_stats", unknown)
    assert main(["stats"]) == 2
    assert capsys.readouterr().err == "kopa-gen stats: error: no task 'fin-999'\n"


def test_a_bug_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(options: object) -> int:
        return {}["missing"]  # type: ignore[no-any-return]

    monkeypatch.setattr(run_commands, "cmd_stats", bug)
    with pytest.raises(KeyError, match="missing"):
        main(["stats"])

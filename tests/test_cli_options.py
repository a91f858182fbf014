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
    assert options.model_endpoint is not None and options.model_endpoint.options() == {
        "base_url": "http://x/v1",
        "model": "m",
        "api_key_env": "OPENAI_API_KEY",
    }
    assert options.judge is not None and options.judge.model == "j"
    assert options.name == "openai"


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

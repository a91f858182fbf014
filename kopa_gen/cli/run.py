"""`kopa-gen eval`, `report`, `score`, `judge calibrate` and `stats`: run policies and models on the tasks and
read the results."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import json
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kopa_gen.language.settings import AgentSettings, EndpointSettings
    from kopa_gen.project import Project

from kopa_gen.cli.options import (
    Agent,
    Choices,
    ConfigDefault,
    Endpoint,
    Subparsers,
    UsageError,
    default_of,
    json_value,
    load,
    parse,
    positive_int,
    spread,
    spread_arguments,
)

_EVAL = "kopa_gen.evaluate.runner:EvalConfig"


def _policies() -> list[str]:
    from kopa_gen.policies.base import registered

    return registered()


def _answer_modes() -> tuple[str, ...]:
    from kopa_gen.language.task import ANSWER_MODES

    return ANSWER_MODES


def budget(text: str) -> int | None:
    """argparse type: the tool-result budget in characters, 0 for none."""
    value = positive_int(text) if text.strip() not in ("0", "none") else 0
    return value or None


def _check_k(k: int | None) -> None:
    if k is not None and k < 1:
        raise UsageError(f"--k must be at least 1, got {k}")


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """`kopa-gen eval`; rollouts, seeds, concurrency and answer mode default to EvalConfig's."""

    root: str | None = None
    policy: str | None = None
    model_endpoint: EndpointSettings | None = field(default=None, metadata={"endpoint": ""})
    agent: AgentSettings = field(metadata={"agent": True})
    tool_result_chars: int | None
    model: str | None = None  # also names the run folder
    tasks: list[str] | None = None
    task_dir: str | None = None
    split: str = (
        "all"  # all | held-out | seen: the benchmark's held-out split (specs/domains.yaml) or the rest
    )
    answer_mode: str
    tools_mode: str = "task"
    rollouts: int
    seeds: list[int]
    concurrency: int
    workers: int
    ray: str | None = None
    out: str | None = None
    k: int | None = None
    live: bool = False
    judge: EndpointSettings | None = field(default=None, metadata={"endpoint": "judge"})
    serve_vllm: str | None = None
    vllm_args: str | None = None
    vllm_ready_timeout: float = 1200.0

    def __post_init__(self) -> None:
        _check_k(self.k)
        if self.serve_vllm and self.policy not in (None, "openai", "closed-book"):
            raise UsageError(f"--serve-vllm serves a model; policy {self.policy} is not one")
        if self.name is None:
            raise UsageError(
                "give --policy NAME (oracle, no-lookup, first-page, list-all, dump, do-nothing) or --base-url URL "
                "--model M (add --policy closed-book to ask the model without tools)"
            )
        if self.name in ("openai", "closed-book") and self.model_endpoint is None:
            raise UsageError(f"policy {self.name} talks to a model: give --base-url URL and --model M")
        if self.judge and self.answer_mode != "text":
            raise UsageError(
                "the LLM judge reads prose replies: give --answer-mode text (a submission is graded by type alone)"
            )

    @property
    def name(self) -> str | None:
        """The policy: --policy, or openai for a model endpoint."""
        return self.policy or ("openai" if self.model_endpoint else None)


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """`kopa-gen report`."""

    root: str | None = None
    runs: list[str]
    k: int | None = None
    out: str | None = None  # None: the run's folder, or runs/a+b for several

    def __post_init__(self) -> None:
        _check_k(self.k)


@dataclass(frozen=True, kw_only=True)
class ScoreOptions:
    """`kopa-gen score`."""

    root: str | None = None
    task: str
    answer: str | None = None
    submit: list[object] | None = None
    calls: str | None = None
    task_dir: str | None = None
    seed: int = 0


@dataclass(frozen=True, kw_only=True)
class CalibrateOptions:
    """`kopa-gen judge calibrate`."""

    root: str | None = None
    judge: EndpointSettings | None = field(default=None, metadata={"endpoint": ""})
    corpus: list[str]
    concurrency: int = 8


@dataclass(frozen=True, kw_only=True)
class StatsOptions:
    """`kopa-gen stats`."""

    root: str | None = None
    json: bool = False
    task_dir: str | None = None


def default_run_folder(name: str, task_dir: str | None) -> Path:
    """runs/<model or policy> for the benchmark; runs/<model or policy>-<set> for a task dir (named after the
    folder, or its parent when the folder is called `tasks`), so a synthesized set never lands in the benchmark
    run (and run.json refuses a different set in the same folder)."""
    if not task_dir:
        return Path("runs") / name
    folder = Path(task_dir).resolve()
    label = folder.parent.name if folder.name == "tasks" else folder.name
    return Path("runs") / f"{name}-{label}"


SERVED = "http://127.0.0.1:0/v1"
"""The base URL of a model `--serve-vllm` has yet to start (replaced by the server's own)."""


def _with_server(args: argparse.Namespace) -> argparse.Namespace:
    """With --serve-vllm, the model's endpoint is the server about to start: its flags stand for it."""
    if getattr(args, "serve_vllm", None):
        if args.base_url:
            raise UsageError("--serve-vllm starts its own server: leave out --base-url")
        from kopa_gen.policies.vllm import served_name

        args.base_url = SERVED
        args.model = args.model or served_name(args.serve_vllm)
    return args


@contextlib.contextmanager
def _model(o: EvalOptions, endpoint: EndpointSettings | None) -> Iterator[EndpointSettings | None]:
    """The model's endpoint for the run: as given, or a vLLM server started for it (stopped afterwards)."""
    if not o.serve_vllm or endpoint is None:
        yield endpoint
        return
    from kopa_gen.policies.vllm import serving

    extra = shlex.split(o.vllm_args or "")
    say = functools.partial(print, file=sys.stderr)
    tools = o.name == "openai" and o.agent.tool_mode == "native"
    with serving(o.serve_vllm, extra, endpoint.model, o.vllm_ready_timeout, tools, say) as server:
        yield endpoint.model_copy(update={"base_url": server.base_url})


def _check(endpoint: EndpointSettings, tools: bool, what: str) -> None:
    """The endpoint check before the first episode (kopa_gen/policies/preflight.py)."""
    from kopa_gen.policies.preflight import check_endpoint

    checked = asyncio.run(check_endpoint(endpoint, tools))
    print(
        f"{what} {endpoint.model} at {endpoint.base_url}: answered in {checked.seconds:.2f}s"
        + (", tools accepted" if tools else ""),
        file=sys.stderr,
    )


def saved(out: Path) -> int:
    """Episodes a run folder holds that a resume will not run again."""
    from kopa_gen.evaluate.rundir import INFRASTRUCTURE, read_episodes

    path = out / "episodes.jsonl"
    return sum(r.get("stop_reason") != INFRASTRUCTURE for r in read_episodes(path).records)


def cmd_eval(o: EvalOptions) -> int:
    name = o.name
    assert name is not None  # EvalOptions refuses no policy
    from kopa_gen.evaluate.rundir import check_layout, read_manifest

    out = Path(o.out) if o.out else default_run_folder(o.model or name, o.task_dir)
    if not o.out and o.split != "all":
        out = out.with_name(f"{out.name}-{o.split}")  # a split's run never mixes with the whole set's
    check_layout(
        out
    )  # a run folder that cannot be one is said before the specs load (and before a server starts)
    if (out / "episodes.jsonl").is_file() and (out / "episodes.jsonl").stat().st_size:
        read_manifest(out)  # one that holds episodes must hold a run manifest; an empty one's is replaced
    try:
        return _eval(o, name, out)
    except KeyboardInterrupt:
        if (out / "episodes.jsonl").exists():
            print(
                f"\ninterrupted: {saved(out)} episodes saved in {out}; run the same command to resume",
                file=sys.stderr,
            )
        else:
            print("\ninterrupted before the first episode; nothing was saved", file=sys.stderr)
        return 130


def _eval(o: EvalOptions, name: str, out: Path) -> int:
    from kopa_gen.evaluate.report import print_summary
    from kopa_gen.evaluate.rundir import read_manifest
    from kopa_gen.evaluate.runner import InfrastructureStop, failed_infrastructure

    given = o.model_endpoint if name in ("openai", "closed-book") else None
    with _model(o, given) as endpoint:
        # first of all (before the project loads and the run folder exists): a refusal is said at once
        if endpoint is not None:
            _check(endpoint, name == "openai" and o.agent.tool_mode == "native", "model")
        if o.judge is not None:
            _check(o.judge, False, "judge")
        project = load(o.root)
        if o.task_dir:
            project = project.with_task_set(Path(o.task_dir))
        project = split_of(project, o.split)
        try:
            records = _run(o, name, out, project, endpoint)
        except InfrastructureStop as exc:
            print(f"\nkopa-gen eval: {exc}", file=sys.stderr)
            return 1
    print_summary(records, o.k, read_manifest(out))
    print(f"episodes: {out / 'episodes.jsonl'}")
    down = failed_infrastructure(records)
    if down:
        print(
            f"{len(down)} episode(s) failed-infrastructure (the model endpoint, a platform or the sandbox failed "
            "past every retry); they are left out of the scores until you run the same command again, which "
            "retries them",
            file=sys.stderr,
        )
        return 1
    return 0


def split_of(project: Project, split: str) -> Project:
    """The project with only the tasks of one split: `held-out` (tasks touching a held-out platform of
    specs/domains.yaml), `seen` (the others) or `all`."""
    if split == "all":
        return project
    if not project.held_out:
        raise UsageError(
            "--split needs a held-out split; declare `held_out: {platforms: [...]}` in specs/domains.yaml"
        )
    keep = [(f, t) for f, t in project.tasks if project.touches_held_out(t) == (split == "held-out")]
    if not keep:
        raise UsageError(f"no task in the {split} split (held-out platforms: {', '.join(project.held_out)})")
    return dataclasses.replace(project, tasks=tuple(keep))


def _run(
    o: EvalOptions, name: str, out: Path, project: Project, endpoint: EndpointSettings | None
) -> list[dict[str, Any]]:
    from kopa_gen.evaluate.runner import EvalConfig, print_progress, run_eval

    config = EvalConfig(
        policy=name,
        out=out,
        endpoint=endpoint,
        agent=o.agent,
        tool_result_chars=o.tool_result_chars,
        tasks=o.tasks,
        rollouts=o.rollouts,
        seeds=o.seeds,
        concurrency=o.concurrency,
        live=o.live,
        answer_mode=o.answer_mode,  # type: ignore[arg-type]  # argparse checked the choice
        tools_mode=o.tools_mode,  # type: ignore[arg-type]  # argparse checked the choice
        spread=spread(o.workers, o.ray),
        judge=o.judge,
        server=shlex.join(["vllm", "serve", o.serve_vllm, *shlex.split(o.vllm_args or "")])
        if o.serve_vllm
        else None,
    )
    return asyncio.run(
        run_eval(project, config, print_progress, warn=lambda line: print(line, file=sys.stderr))
    )


def report_folder(runs: list[str], out: str | None) -> Path:
    """Where `report` writes: --out; one run's own folder; for several runs a new folder beside the first named
    after them all (runs/a+b), never inside one of them (it would overwrite that run's own report)."""
    if out:
        return Path(out)
    folders = [Path(r) for r in runs]
    if len(folders) == 1:
        return folders[0]
    return folders[0].resolve().parent / "+".join(f.resolve().name for f in folders)


def cmd_report(o: ReportOptions) -> int:
    from kopa_gen.evaluate.report import RunData, render_report
    from kopa_gen.evaluate.rundir import read_episodes, read_manifest

    runs: dict[str, RunData] = {}
    for folder in map(Path, o.runs):
        episodes = folder / "episodes.jsonl"
        if not episodes.exists():
            raise UsageError(f"{episodes} not found; run `kopa-gen eval --out {folder}` first")
        read = read_episodes(episodes)
        for line in read.warnings:
            print(line, file=sys.stderr)
        name = folder.name if folder.name not in runs else str(folder)
        runs[name] = RunData(read.records, read_manifest(folder))
    out = report_folder(o.runs, o.out)
    where = f"--out {out}" if o.out else str(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{where} is a file; give the folder to write report.md and report.html in")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file stands where a folder above it would be; no permission
        raise UsageError(f"{where} cannot be made ({exc.strerror}); give a folder you can write in") from None
    report = render_report(runs, o.k)
    for line in report.warnings:
        print(line, file=sys.stderr)
    report.write(out)
    print(report.md)
    print(f"wrote {out / 'report.md'} and {out / 'report.html'} ({len(report.pages)} transcript pages)")
    return 0


def cmd_score(o: ScoreOptions) -> int:
    from kopa_gen.evaluate.probe import probe

    project = load(o.root)
    if o.task_dir:
        project = project.with_task_set(Path(o.task_dir))
    verdict = asyncio.run(
        probe(project, o.task, o.answer, Path(o.calls) if o.calls else None, o.seed, o.submit)
    )
    print(json.dumps(verdict, ensure_ascii=False, indent=1))
    return 0 if verdict["reward"] else 1


def cmd_judge_calibrate(o: CalibrateOptions) -> int:
    from kopa_gen.evaluate.corpus import corpus_tasks
    from kopa_gen.evaluate.corpus import load as load_corpus
    from kopa_gen.evaluate.judge import OpenAIJudge, calibrate
    from kopa_gen.policies.openai import EndpointError

    assert o.judge is not None  # --base-url and --model are required
    project = load(o.root)
    files = [Path(f) for f in o.corpus] or sorted((project.root / "tests" / "data").glob("*_corpus.yaml"))
    files = [f for f in files if f.name != "response_corpus.yaml"]  # that one has no tasks
    if not files:
        raise UsageError("no labelled corpus found; give --corpus FILE (a tests/data/*_corpus.yaml)")
    cases = []
    for f in files:
        try:
            cases += load_corpus(f)
        except (OSError, ValueError, KeyError) as exc:
            raise UsageError(f"{f}: not a labelled corpus ({exc})") from None
    tasks = {k: (t, f) for k, (t, f) in corpus_tasks(project).items() if t.answer is not None}
    unknown = sorted({c.task for c in cases} - set(tasks))
    if unknown:
        raise UsageError(f"the corpus names tasks this project lacks: {', '.join(unknown[:5])}")
    judge = OpenAIJudge(o.judge)
    try:
        result = asyncio.run(calibrate(judge, cases, tasks, o.concurrency))
    except EndpointError as exc:
        raise UsageError(f"the judge at {o.judge.base_url} failed: {exc}") from None
    print(f"{len(result.rows)} text-mode replies from {', '.join(f.name for f in files)}")
    print(result.table())
    return 0


def cmd_stats(o: StatsOptions) -> int:
    from kopa_gen.evaluate.taskstats import benchmark_table, handoff_table, profile_lines, stats_document

    project = load(o.root)
    if o.task_dir:
        from kopa_gen.world.build import ensure_world

        project = project.with_task_set(Path(o.task_dir))
        ensure_world(project.world)
    if o.json:
        print(json.dumps(stats_document(project), ensure_ascii=False, indent=1))
        return 0
    doc = stats_document(project)
    print(benchmark_table(project, doc))
    print()
    print(handoff_table(project, doc))
    print()
    print(profile_lines(project, doc))
    return 0


def add_commands(sub: Subparsers) -> None:
    e = sub.add_parser("eval", help="run a policy or a model on the benchmark tasks")
    e.add_argument(
        "--policy",
        choices=Choices(_policies),
        help="reference policy: oracle, no-lookup, first-page, list-all, dump, do-nothing; or openai / "
        "closed-book with --base-url and --model (closed-book: the model without tools)",
    )
    Endpoint.add(
        e,
        "",
        url_help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1",
        model_help="model name at the endpoint",
        key_help="environment variable holding the endpoint key",
    )
    e.add_argument("--tasks", nargs="*", help="task ids or globs (default: all)")
    e.add_argument(
        "--split",
        choices=["all", "held-out", "seen"],
        default="all",
        help="the held-out split of specs/domains.yaml (tasks on platforms withheld from training), the rest, or all",
    )
    e.add_argument(
        "--task-dir", help="evaluate a synthesized task set (the folder `kopa-gen edge synth` wrote) instead"
    )
    e.add_argument(
        "--answer-mode",
        choices=Choices(_answer_modes),
        default=ConfigDefault(f"{_EVAL}.answer_mode"),
        help="submit: the agent commits through the submit_answer tool, graded by type (default); text: it "
        "answers in prose ending with a '최종 답:' line",
    )
    e.add_argument(
        "--tools-mode",
        choices=["task", "all", "search"],
        default="task",
        help="which tools the agent meets: task: the task's own list, its gold tools and decoys (default); all: "
        "every tool of every platform; search: each platform's entry tools with search_tools and call_tool",
    )
    e.add_argument(
        "--rollouts",
        type=positive_int,
        default=ConfigDefault(f"{_EVAL}.rollouts"),
        help="episodes per task and seed",
    )
    e.add_argument(
        "--seeds", type=int, nargs="+", default=ConfigDefault(f"{_EVAL}.seeds"), help="sandbox seeds"
    )
    e.add_argument(
        "--concurrency",
        type=positive_int,
        default=ConfigDefault(f"{_EVAL}.concurrency"),
        help="episodes run at once (per worker process)",
    )
    spread_arguments(e, "episodes")
    e.add_argument(
        "--out",
        help="run folder (default runs/<model or policy>, or runs/<model or policy>-<set> with --task-dir); "
        "resumable, and it refuses another task set or policy",
    )
    e.add_argument(
        "--k",
        type=int,
        default=None,
        help="k of the printed pass@k (default: the rollouts per seed, as report)",
    )
    e.add_argument(
        "--live", action="store_true", help="call the real services with keys from the environment"
    )
    e.add_argument(
        "--tool-result-chars",
        type=budget,
        default=ConfigDefault(f"{_EVAL}.tool_result_chars"),
        metavar="N",
        help="the tool-result budget: a longer result reaches the model cut at a row boundary, with a note (the "
        "same number as the SFT export's and verl's max_tool_response_length); 0: never cut",
    )
    Agent.add(e)
    Endpoint.add(
        e,
        "judge",
        url_help="OpenAI-compatible endpoint of an LLM judge (RESPONSE fallback; off)",
        model_help="judge model name",
        key_help="environment variable of the judge key",
    )
    serve = e.add_argument_group("serving", "start a local vLLM server for the run (docs/evaluation.md)")
    serve.add_argument(
        "--serve-vllm",
        metavar="MODEL_PATH",
        help="start `vllm serve MODEL_PATH` with the tool-call parser of its family on a free loopback port, wait "
        "until it serves the model, run, then stop it (vLLM must be installed, or $KOPA_GEN_VLLM name its command)",
    )
    serve.add_argument(
        "--vllm-args",
        metavar="ARGS",
        help='more vLLM flags, as one string: --vllm-args="--tensor-parallel-size 2 --max-model-len 65536"',
    )
    serve.add_argument(
        "--vllm-ready-timeout",
        type=float,
        default=default_of(EvalOptions, "vllm_ready_timeout"),
        metavar="S",
        help="seconds to wait for the server to serve the model",
    )
    e.set_defaults(func=lambda args: cmd_eval(parse(EvalOptions, _with_server(args))))

    rp = sub.add_parser("report", help="markdown and HTML report of one run, or several side by side")
    rp.add_argument("runs", nargs="+", help="run folders (runs/<name>)")
    rp.add_argument(
        "--k",
        type=int,
        default=None,
        help="k of the table's pass@k (default: the rollouts per seed, as eval)",
    )
    rp.add_argument(
        "--out",
        help="where to write report.md, report.html and episodes/ (default: the run's folder; for several runs a "
        "new folder beside the first, named after them all: runs/a+b)",
    )
    rp.set_defaults(func=lambda args: cmd_report(parse(ReportOptions, args)))

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
    sc.add_argument(
        "--seed", type=int, default=default_of(ScoreOptions, "seed"), help="sandbox seed for the replay"
    )
    sc.set_defaults(func=lambda args: cmd_score(parse(ScoreOptions, args)))

    jd = sub.add_parser("judge", help="the LLM judge of text-mode RESPONSE")
    jds = jd.add_subparsers(dest="judge_command", required=True, metavar="{calibrate}")
    jc = jds.add_parser("calibrate", help="run the judge over the labelled corpora; agreement by class")
    Endpoint.add(
        jc,
        "",
        url_help="OpenAI-compatible endpoint of the judge (ends in /v1)",
        model_help="judge model name",
        key_help="environment variable of the judge key",
        required=True,
    )
    jc.add_argument(
        "--corpus", nargs="*", default=[], help="labelled corpus files (default tests/data/*_corpus.yaml)"
    )
    jc.add_argument(
        "--concurrency",
        type=positive_int,
        default=default_of(CalibrateOptions, "concurrency"),
        help="requests at once",
    )
    jc.set_defaults(func=lambda args: cmd_judge_calibrate(parse(CalibrateOptions, args)))

    st = sub.add_parser("stats", help="the benchmark table and handoff statistics of the tasks")
    st.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    st.add_argument(
        "--task-dir",
        default=None,
        help="a task set folder (DIR/tasks/<domain>/<id>.yaml; gold chains without a fixture are run now)",
    )
    st.set_defaults(func=lambda args: cmd_stats(parse(StatsOptions, args)))

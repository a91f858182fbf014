"""What `kopa-gen edge graph` and `kopa-gen edge synth` do, apart from argument parsing."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kopa_gen.edge.dataset import SynthConfig, quotas, stats_markdown, synthesize_spread, write_dataset
from kopa_gen.edge.graph import GraphConfig, IterationLog, PhaseA, problems, run_phase_a, to_json
from kopa_gen.edge.picture import to_dot, to_svg
from kopa_gen.edge.scorer import SCORERS, EdgeScorer, LLMScorer
from kopa_gen.edge.writer import LLMWriter, QueryWriter
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.synthesis import GraphDoc
from kopa_gen.plugins import UnknownName
from kopa_gen.project import Project
from kopa_gen.runtime.spread import Spread


def make_scorer(name: str, endpoint: EndpointSettings | None) -> EdgeScorer:
    """The scorer registered as `name` (kopa_gen.edge.scorer.SCORERS) on the given endpoint."""
    try:
        return SCORERS.get(name)(endpoint)
    except (UnknownName, ValueError) as exc:
        raise SystemExit(f"--scorer {name}: {exc}") from None


def _progress(log: IterationLog, phase: PhaseA) -> None:
    alive = len(phase.alive())
    print(
        f"\riteration {log.iteration:3d}: pass {log.pass_rate:.2f}, step success {log.step_success_rate:.2f}, "
        f"{alive}/{len(phase.edges)} edges alive",
        end="",
        file=sys.stderr,
        flush=True,
    )


PAPER_PHASE_A = {
    "skeleton": "100%, 50.2%, -",
    "g_star": "85.2%, 62.7%, 27.7%",
    "pruned": "14.8%, -, 70.5%",
}
"""The paper's Phase A figures (../shared/reference/paper-facts.md, one source: the paper), shown beside ours."""


def analysis_table(doc: dict[str, Any]) -> str:
    a = doc["analysis"]

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    lines = [
        "| edges | count | share | audited | unreachable | executions | execution success | never succeeded "
        "| paper: share, execution success, never succeeded |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    total = a["skeleton"]["edges"] or 1
    for name in ("skeleton", "g_star", "pruned"):
        g = a[name]
        lines.append(
            f"| {name} | {g['edges']} | {pct(g['edges'] / total)} | {g['audited']} | {g['unreachable']} "
            f"| {g['executions']} | {pct(g['success_rate'])} | {pct(g['never_succeeded'])} | {PAPER_PHASE_A[name]} |"
        )
    tp, ss, th = a["trajectory_pass_rate"], a["step_success_rate"], a["thompson_pass_rate"]
    lines += [
        "",
        f"over {a['iterations']} iterations (first vs last {tp['window']}): trajectory pass rate "
        f"{pct(tp['first'])} → {pct(tp['last'])} (Thompson-sampled paths only {pct(th['first'])} → "
        f"{pct(th['last'])}), step success rate {pct(ss['first'])} → {pct(ss['last'])}; "
        "paper, over 100 iterations: trajectory pass rate +31 points, step success +28 points",
    ]
    return "\n".join(lines)


async def edge_graph(project: Project, config: GraphConfig, scorer: EdgeScorer, out: Path) -> int:
    start = time.perf_counter()
    phase = await run_phase_a(project, scorer, config, _progress)
    print(file=sys.stderr)
    if isinstance(scorer, LLMScorer):
        await scorer.aclose()
    out.mkdir(parents=True, exist_ok=True)
    text = to_json(phase)
    doc = json.loads(text)
    (out / "graph.json").write_text(text, encoding="utf-8")
    (out / "graph.svg").write_text(to_svg(doc), encoding="utf-8")
    (out / "graph.dot").write_text(to_dot(doc), encoding="utf-8")
    (out / "analysis.md").write_text(analysis_table(doc) + "\n", encoding="utf-8")
    elapsed = time.perf_counter() - start
    t = phase.timings
    print(analysis_table(doc))
    print(
        f"{len(phase.tools)} tools, {len(phase.starts)} can start a chain; skeleton {len(phase.edges)} edges "
        f"({len(phase.rejected)} rejected by the scorer), G* {len(phase.alive())} kept; "
        f"{len(phase.iterations)} iterations, {phase.probes} probes, {phase.calls} calls in {elapsed:.1f}s "
        f"(retrieval {t['retrieval_s']:.2f}s, iterations {t['iterations_s']:.1f}s, audit {t['audit_s']:.1f}s)"
    )
    print(f"wrote {out / 'graph.json'}, graph.svg, graph.dot, analysis.md")
    issues = problems(phase)
    for line in issues:
        print(f"problem: {line}", file=sys.stderr)
    for item in phase.unreachable:
        print(f"note: {item['tool']} cannot start a chain: {item['why']}", file=sys.stderr)
    return 1 if issues else 0


async def edge_synth(
    project: Project,
    graph: Path,
    out: Path,
    config: SynthConfig,
    writer: QueryWriter | None,
    spread: Spread | None = None,
) -> int:
    if not graph.exists():
        raise SystemExit(f"{graph} not found; run `kopa-gen edge graph --out {graph.parent}` first")
    doc = read_graph(graph)
    start = time.perf_counter()
    try:
        cands, report = await synthesize_spread(
            project, doc, config, spread, writer, say=lambda line: print(line, file=sys.stderr, flush=True)
        )
    except ValueError as exc:
        print(f"problem: {exc}", file=sys.stderr)
        return 1
    finally:
        if isinstance(writer, LLMWriter):
            await writer.aclose()
    elapsed = time.perf_counter() - start
    stats = write_dataset(project, out, cands, report, elapsed)
    print(stats_markdown(stats, report, elapsed))
    if isinstance(writer, LLMWriter):
        print(writer.summary())
        if writer.failed and not writer.accepted:
            print("problem: every rewrite failed; the composed questions were kept", file=sys.stderr)
    print(f"{len(cands)} tasks in {elapsed:.1f}s; wrote {out}")
    print(f"evaluate them: kopa-gen eval --policy oracle --task-dir {out} --rollouts 1")
    missing = [t for t, n in quotas(config.tasks, config.mix).items() if n and not report.kept.get(t)]
    for typ in missing:
        print(
            f"problem: no {typ} task survived (see 'not instantiable' and the filters above)", file=sys.stderr
        )
    return 1 if not cands else 0


def read_graph(path: Path) -> GraphDoc:
    """graph.json as the typed G* document; another shape fails naming the file and the field."""
    try:
        return GraphDoc.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(
            f"{path}: {where}: {first['msg']}",
            hint="it was not written by this version of `kopa-gen edge graph`; run it again",
        ) from None

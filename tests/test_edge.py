"""EDGE end to end on the real specs and sandbox: Phase A builds G* (deterministically, with fault injection on,
pruning structurally failing edges and keeping environmentally failing ones), Phase B makes tasks of all six
patterns that the oracle solves through the normal evaluator, and the static filters catch constructed bad
tasks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.edge.dataset import (
    Candidate,
    Report,
    SynthConfig,
    decorative,
    leaked,
    located_values,
    run_filters,
    synthesize,
    write_dataset,
)
from kopa_gen.edge.graph import GraphConfig, problems, run_phase_a, to_json
from kopa_gen.edge.probe import ProbeConfig
from kopa_gen.edge.retriever import RetrieverConfig
from kopa_gen.edge.scorer import OfflineScorer
from kopa_gen.edge.signatures import load_signatures
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.language.answers import NumberAnswer
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.task import From
from kopa_gen.policies.double import ChatDouble, Reply, ToolCall
from kopa_gen.project import Project, load_project
from kopa_gen.runtime.answer import derive_answer

LEXICAL = RetrieverConfig(model="none")


def small(platforms: tuple[str, ...], iterations: int, **kw: Any) -> GraphConfig:
    return GraphConfig(
        platforms=platforms,
        retriever=LEXICAL,
        max_iterations=iterations,
        min_iterations=iterations,
        paths_per_iteration=16,
        audit_trials=1,
        **kw,
    )


@pytest.fixture(scope="module")
def project() -> Project:
    return load_project()


@pytest.fixture(scope="module")
def gstar(project: Project) -> dict[str, Any]:
    phase = asyncio.run(run_phase_a(project, OfflineScorer(), small(("dart", "fsc", "neis"), 12)))
    assert not problems(phase)
    doc: dict[str, Any] = json.loads(to_json(phase))
    return doc


@pytest.fixture(scope="module")
def synthesized(project: Project, gstar: dict[str, Any]) -> tuple[list[Candidate], Any]:
    return asyncio.run(synthesize(project, gstar, SynthConfig(per_pattern=1, max_starts=6)))


def test_phase_a_is_deterministic(project: Project) -> None:
    config = small(("fsc",), 3)
    a = asyncio.run(run_phase_a(project, OfflineScorer(), config))
    b = asyncio.run(run_phase_a(project, OfflineScorer(), config))
    assert to_json(a) == to_json(b)
    assert a.probes > 0 and a.iterations


def test_structural_failures_are_pruned_environmental_ones_survive(project: Project) -> None:
    """fsc with 30% injected faults: the crno hand-off from the company outline keeps working (its failures are
    faults), the basDt hand-off from a year-end snapshot into daily stock prices finds nothing (structural)."""
    config = small(("fsc",), 40, probe=ProbeConfig(fault_rate=0.3))
    phase = asyncio.run(run_phase_a(project, OfflineScorer(), config))
    good = phase.edges["fsc_get_corp_outline->fsc_get_affiliates"]
    assert good.alive
    assert good.posterior.failures.get("environmental", 0) >= 1, "fault injection never hit the good edge"
    assert good.posterior.failures.get("structural", 0) == 0
    bad = [e for e in phase.edges.values() if e.proposal.consumer == "fsc_get_stock_prices"]
    assert bad and all(not e.alive for e in bad if e.posterior.failures.get("structural", 0) >= 3)
    assert any(not e.alive for e in bad)


def test_gstar_document(gstar: dict[str, Any]) -> None:
    kept = [e for e in gstar["edges"] if e["status"] == "kept"]
    assert kept and gstar["analysis"]["iterations"] == 12
    edge = next(e for e in gstar["edges"] if e["id"] == "dart_corp_code->dart_dividends")
    assert edge["bindings"][0] == {
        "param": "corp_code",
        "field": "corp_code",
        "score": edge["bindings"][0]["score"],
    }
    assert set(edge["posterior"]) == {"alpha", "beta", "mean", "p_exceeds_tau"}


def test_every_pattern_yields_a_task_the_oracle_solves(
    project: Project, synthesized: tuple[list[Candidate], Any], tmp_path: Path
) -> None:
    cands, report = synthesized
    patterns = {c.draft.pattern for c in cands}
    assert patterns == {"seq", "fan", "drv", "sem", "cmp", "cond"}, (patterns, report.not_instantiable)
    write_dataset(project, tmp_path, cands, report)
    task_set = project.with_task_set(tmp_path)
    assert {t.id for _, t in task_set.tasks} == {c.task.id for c in cands}
    records = asyncio.run(
        run_eval(task_set, EvalConfig(policy="oracle", out=tmp_path / "run", rollouts=1, concurrency=2))
    )
    assert len(records) == len(cands)
    assert all(r["reward"] for r in records), [
        (r["task"], r["final_message"]) for r in records if not r["reward"]
    ]
    failing = asyncio.run(
        run_eval(task_set, EvalConfig(policy="do-nothing", out=tmp_path / "nothing", rollouts=1))
    )
    assert not any(r["reward"] for r in failing)


def test_synthesis_is_deterministic(project: Project, gstar: dict[str, Any], synthesized: Any) -> None:
    again, _ = asyncio.run(synthesize(project, gstar, SynthConfig(per_pattern=1, max_starts=6)))
    first, _ = synthesized
    assert [c.task.model_dump_json() for c in again] == [c.task.model_dump_json() for c in first]


def test_leak_filter_catches_an_answer_in_the_query(synthesized: tuple[list[Candidate], Any]) -> None:
    cand = synthesized[0][0]
    assert not leaked(cand.task)
    shown = (
        cand.draft.answer_value[0] if isinstance(cand.draft.answer_value, list) else cand.draft.answer_value
    )
    bad = cand.task.model_copy(update={"query": f"{cand.task.query} (참고: {shown})"})
    assert leaked(bad)


def test_decorative_filter_catches_an_answer_that_ignores_the_chain(
    project: Project, synthesized: tuple[list[Candidate], Any]
) -> None:
    cand = next(c for c in synthesized[0] if c.draft.pattern == "seq")
    sigs = {s.name: s for s in load_signatures(project)}
    examples = project.platform(sigs[cand.draft.root].platform).kopa.examples
    assert not asyncio.run(decorative(project, cand, sigs, examples))
    # answer taken from the first call: perturbing the hand-off cannot change it
    root_answer = From.model_validate({"from": "c1", "path": "total_count"})
    bad_task = cand.task.model_copy(update={"answer_from": root_answer})
    bad_draft = type(cand.draft)(
        **{**cand.draft.__dict__, "answer_value": cand.draft.results["c1"]["total_count"]}
    )
    bad = Candidate(bad_draft, bad_task, cand.fixture)
    assert asyncio.run(decorative(project, bad, sigs, examples))


def test_drafts_with_a_tool_result_too_long_for_a_context_are_not_instantiated(
    project: Project, gstar: dict[str, Any]
) -> None:
    config = SynthConfig(per_pattern=1, max_starts=2, patterns=("seq",), max_result_chars=10)
    cands, report = asyncio.run(synthesize(project, gstar, config))
    assert cands == []
    assert report.not_instantiable["seq: a tool result over 10 characters"] >= 1


def test_no_kept_edge_is_a_clear_error(project: Project, gstar: dict[str, Any]) -> None:
    empty = dict(gstar, edges=[dict(e, status="pruned") for e in gstar["edges"]])
    with pytest.raises(ValueError, match="G\\* has no kept edge"):
        asyncio.run(synthesize(project, empty, SynthConfig(per_pattern=1)))


def _resolver_script(cand: Candidate, final: str) -> list[Any]:
    """A scripted re-solver (over the chat-completions protocol double, not a model): the gold calls with the
    arguments the gold run resolved, step by step, then `final` as its answer."""
    script: list[Any] = [
        Reply(tool_calls=[ToolCall(c["tool"], c["args"]) for c in step])
        for step in (cand.fixture or {})["steps"]
    ]
    return [*script, Reply(content=final)]


@pytest.mark.parametrize(("judge_says", "calls"), [("YES", True), ("NO", True), ("YES", False)])
def test_resolve_stage_replaces_a_verified_different_answer(
    project: Project,
    gstar: dict[str, Any],
    synthesized: tuple[list[Candidate], Any],
    judge_says: str,
    calls: bool,
    tmp_path: Path,
) -> None:
    """Replaced only when the re-solver made the gold calls and the judge confirms; otherwise removed."""
    cand = next(c for c in synthesized[0] if isinstance(c.task.answer, NumberAnswer))
    stored = cand.task.answer
    assert isinstance(stored, NumberAnswer)
    # another number the chain's results hold: what a re-solver that read the query differently would answer
    value = next(
        v
        for _, v in located_values(cand.draft.results)
        if str(v).isdigit() and int(v) != stored.value and int(v) > 0
    )
    sigs = {s.name: s for s in load_signatures(project, gstar["config"]["platforms"])}
    fresh = Candidate(cand.draft, cand.task)
    report = Report()
    with (
        ChatDouble(
            _resolver_script(cand, f"정답: {value}") if calls else [Reply(content=f"정답: {value}")]
        ) as resolver,
        ChatDouble([Reply(content=judge_says)]) as judge,
    ):
        config = SynthConfig(
            resolver="openai",
            resolver_endpoint=EndpointSettings(base_url=resolver.base_url, model="double"),
            verifier=EndpointSettings(base_url=judge.base_url, model="judge"),
        )
        kept = asyncio.run(run_filters(project, [fresh], sigs, config, report))
        asked = judge.bodies
    if not calls:  # an answer without the gold calls is not verifiable: the judge is never asked
        assert asked == [] and kept == [] and sum(report.removed["resolve"].values()) == 1
        return
    assert len(asked) == 1 and cand.task.query in asked[0]["messages"][0]["content"]
    if judge_says == "NO":
        assert kept == [] and sum(report.removed["resolve"].values()) == 1
        return
    assert [k.task.id for k in kept] == [cand.task.id] and sum(report.replaced.values()) == 1
    new = kept[0].task
    assert isinstance(new.answer, NumberAnswer) and new.answer.value == int(value)
    assert new.answer_from is not None
    assert str(derive_answer(cand.draft.results, new.answer_from)) == str(value)
    assert kept[0].replaced == {"answer": stored.model_dump(mode="json"), "by": "openai"}
    # the replaced task is an ordinary task: the build's oracle solves it through the normal evaluator
    write_dataset(project, tmp_path, kept, report)
    task_set = project.with_task_set(tmp_path)
    records = asyncio.run(run_eval(task_set, EvalConfig(policy="oracle", out=tmp_path / "run", rollouts=1)))
    assert [r["reward"] for r in records] == [1]
    assert json.loads((tmp_path / "synth.json").read_text())[new.id]["replaced"]["by"] == "openai"


def test_graph_svg_labels_fit_and_do_not_overlap(project: Project) -> None:
    """Every tool's label, written along its radius, lies inside the canvas, and neighbouring tools on the circle
    are at least one font height apart (so their labels cannot overlap), for every tool the specs define."""
    import math
    import re

    from kopa_gen.edge.picture import CHAR_PX, FONT_PX, to_svg

    tools = [{"name": op.tool, "platform": p.id} for p in project.platforms for op in p.operations]
    svg = to_svg({"tools": tools, "edges": [], "seed": 0, "scorer": "offline"})
    width, height = (float(v) for v in re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).groups())  # type: ignore[union-attr]
    circles = [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg)]
    labels = re.findall(
        r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="(start|end)"[^>]*rotate\(([-\d.]+)[^>]*>([^<]+)<', svg
    )
    assert len(circles) == len(labels) == len(tools)
    for x, y, anchor, degrees, name in labels:
        length = len(name) * CHAR_PX * (1 if anchor == "start" else -1)
        end_x = float(x) + length * math.cos(math.radians(float(degrees)))
        end_y = float(y) + length * math.sin(math.radians(float(degrees)))
        assert 0 <= end_x <= width and 0 <= end_y <= width <= height, name
    gaps = [math.dist(a, b) for a, b in zip(circles, circles[1:] + circles[:1], strict=True)]
    assert min(gaps) >= FONT_PX

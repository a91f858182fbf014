"""Episodes and probes spread over worker processes (`--workers`) and over a local two-node Ray cluster (`--ray`)
give exactly the in-process results: the same records (less their timings) and the same G*."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.edge.graph import GraphConfig, run_phase_a, to_json
from kopa_gen.edge.retriever import RetrieverConfig
from kopa_gen.edge.scorer import OfflineScorer
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.project import Project
from kopa_gen.runtime.spread import Spread, batch_size
from kopa_gen.world.build import BuiltWorld
from tests.conftest import declared_tools

TIMINGS = {"elapsed_s", "elapsed_ms"}


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _tasks(project: Project) -> list[str]:
    """One task per domain (read from the specs), so every platform family crosses the process boundary."""
    first: dict[str, str] = {}
    for _, task in project.tasks:
        first.setdefault(task.domain, task.id)
    return sorted(first.values())


def _eval(project: Project, out: Path, spread: Spread) -> dict[str, Any]:
    config = EvalConfig(
        policy="oracle",
        out=out,
        tasks=_tasks(project),
        rollouts=2,
        seeds=[0, 1],
        concurrency=2,
        spread=spread,
    )
    records = asyncio.run(run_eval(project, config))
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(records)  # every record written once, as it came
    return {r["key"]: _untimed(r) for r in records}


def _graph(project: Project, spread: Spread) -> str:
    config = GraphConfig(
        platforms=("fsc",),
        tools=declared_tools(project, "fsc"),
        retriever=RetrieverConfig(model="none"),
        max_iterations=2,
        min_iterations=2,
        paths_per_iteration=8,
        audit_trials=1,
        spread=spread,
    )
    return to_json(asyncio.run(run_phase_a(project, OfflineScorer(), config)))


@pytest.fixture(scope="module")
def in_process(
    project: Project, world: BuiltWorld, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    return {
        "eval": _eval(project, tmp_path_factory.mktemp("inproc"), Spread()),
        "graph": _graph(project, Spread()),
    }


def test_batches_keep_every_worker_busy_and_are_never_empty() -> None:
    assert batch_size(0, 2, 4) == 1
    assert batch_size(7, 2, 4) == 1  # fewer jobs than four per worker: one each
    assert batch_size(1000, 2, 4) == 16  # capped at 4 x concurrency
    assert batch_size(80, 2, 4) == 10


def test_worker_processes_give_the_in_process_results(
    project: Project, in_process: dict[str, Any], tmp_path: Path
) -> None:
    spread = Spread(workers=2)
    records = _eval(project, tmp_path / "workers", spread)
    assert records == in_process["eval"]
    assert all(r["reward"] == 1 for r in records.values())  # the oracle passes wherever it runs
    assert _graph(project, spread) == in_process["graph"]


def test_a_resumed_spread_run_only_runs_what_is_missing(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "resume"
    first = _eval(project, out, Spread(workers=2))
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    kept = lines[: len(lines) // 2]
    (out / "episodes.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    again = _eval(project, out, Spread(workers=2))
    assert again == first
    keys = [json.loads(line)["key"] for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(keys) == len(set(keys)) == len(first)  # nothing run twice


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A local Ray cluster of a head and one more node, one CPU each (what `ray start` on two machines makes)."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        yield str(cluster.address)
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_a_two_node_ray_cluster_gives_the_in_process_results(
    project: Project, in_process: dict[str, Any], ray_cluster: str, tmp_path: Path
) -> None:
    import ray

    spread = Spread(ray=ray_cluster)
    assert _eval(project, tmp_path / "ray", spread) == in_process["eval"]
    assert _graph(project, spread) == in_process["graph"]
    nodes = [n for n in ray.nodes() if n["Alive"]]
    assert len(nodes) == 2

"""`kopa-gen train export`: a task set (the benchmark, or a synthesized EDGE set) as verl training data.

    OUT/train.parquet, OUT/val.parquet          RL rows for verl's RLHFDataset (the row contract of contract.py)
    OUT/sft_train.parquet, OUT/sft_val.parquet  SFT rows for MultiTurnSFTDataset (through sft_dataset.py): the
                                                oracle's trajectory per task, `messages` and `tools` as JSON strings,
                                                tool results cut as RL cuts them (contract.cut_tool_result)
    OUT/export.json                             the stats returned by `export`, with every task's split and group

The split is by group, never by task, so near-duplicate tasks cannot sit on both sides: a benchmark task is its
own group; an EDGE task's group is its root call (the first gold call: tool and arguments), the start every
pattern built from it shares. Groups are shuffled by `seed` and taken into val until it holds `val_fraction` of
the tasks. SFT rows follow the same split, so no SFT-train trajectory belongs to a val task.

Every nested payload the contract leaves free-form is a JSON string, and every struct column has one fixed schema
given here, so Arrow cannot unify heterogeneous structs across rows (and fill the missing keys with None).

Needs pyarrow (the `train` extra); kopa_gen itself imports without it.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from kopa_gen.client.errors import redact
from kopa_gen.evaluate.runner import EvalConfig, opened_platforms, run_episode, secrets, selected
from kopa_gen.evaluate.submission import SUBMIT_TOOL
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.modes import ToolsMode
from kopa_gen.language.task import Task
from kopa_gen.mcp.render import CUT_MARK as CUT
from kopa_gen.policies.base import system_prompt
from kopa_gen.policies.openai import openai_tools
from kopa_gen.project import Project
from kopa_gen.runtime.session import exposure, listed_tools
from kopa_gen.train.contract import (
    AGENT_NAME,
    TOOL_CHARS,
    TOOL_SIDE,
    cut_tool_result,
    data_source,
    episode_spec,
    ground_truth,
    submit_tool_for,
)

GroupBy = Literal["task", "root"]
Split = Literal["train", "val"]

RL_FILES: dict[Split, str] = {"train": "train.parquet", "val": "val.parquet"}
SFT_FILES: dict[Split, str] = {"train": "sft_train.parquet", "val": "sft_val.parquet"}
STATS_FILE = "export.json"


class ExportError(UserError):
    """A task set that cannot be exported as it is (no tasks, missing fixtures or tools, a bad argument)."""


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ExportError(
            "exporting training data needs pyarrow; install the train extra (`pip install -e '.[train]'`)"
        ) from exc
    return pyarrow, pyarrow.parquet


def rl_schema() -> Any:  # pyarrow.Schema
    """The RL columns of contract.py, each with one fixed Arrow type."""
    pa, _ = _pyarrow()
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("agent_name", pa.string()),
            ("prompt", pa.list_(message)),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            (
                "extra_info",
                pa.struct(
                    [
                        ("index", pa.int64()),
                        ("split", pa.string()),
                        ("task_id", pa.string()),
                        ("tool_selection", pa.list_(pa.string())),
                        ("episode", pa.string()),
                    ]
                ),
            ),
        ]
    )


def sft_schema() -> Any:  # pyarrow.Schema
    """SFT rows: `messages` and `tools` as JSON strings (decoded by sft_dataset.JsonMultiTurnSFTDataset), plus
    where the row came from."""
    pa, _ = _pyarrow()
    return pa.schema(
        [
            ("messages", pa.string()),
            ("tools", pa.string()),
            ("task_id", pa.string()),
            ("data_source", pa.string()),
            ("split", pa.string()),
        ]
    )


# ---------------------------------------------------------------------------------------------- task set


def fixtures_of(project: Project, tasks: Sequence[Task]) -> dict[str, dict[str, Any]]:
    """Every task's gold fixture; one error naming every task without one."""
    out: dict[str, dict[str, Any]] = {}
    missing: list[str] = []
    for task in tasks:
        path = project.fixtures_dir / task.domain / f"{task.id}.json"
        if not path.exists():
            missing.append(task.id)
            continue
        out[task.id] = json.loads(path.read_text(encoding="utf-8"))
    if missing:
        hint = (
            "run `kopa-gen build`"
            if project.fixtures is None
            else f"synthesize the set again (`kopa-gen edge synth --out {project.fixtures_dir.parent}`)"
        )
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise ExportError(f"no gold fixture under {project.fixtures_dir} for {shown}; {hint}")
    return out


def exposed_tools(
    project: Project,
    task: Task,
    fixture: dict[str, Any],
    platforms: Sequence[str],
    tools_mode: ToolsMode = "task",
) -> list[dict[str, Any]]:
    """The tools an episode of `task` over `platforms` (`opened_platforms`) lists, in MCP format, exactly as
    `Session.tools()` lists them (without the answer tool): in task mode the task's `tools`, else every tool of
    the fixture's platforms; in all mode every tool of `platforms`; in search mode their entry tools,
    `search_tools` and `call_tool`."""
    for pid in platforms:
        path = project.root / "generated" / "servers" / pid / "tools.json"
        if not path.exists():
            raise ExportError(f"task {task.id}: no {path} for platform {pid!r}; run `kopa-gen build`")
    out = listed_tools(project, platforms, *exposure(project, platforms, task.tools, tools_mode))
    if task.tools is not None and tools_mode == "task":
        lacking = sorted(set(task.tools) - {t["name"] for t in out})
        if lacking:
            raise ExportError(
                f"task {task.id} exposes {', '.join(lacking)}, which no platform of its fixture "
                f"({', '.join(fixture['platforms'])}) has"
            )
    return out


# ---------------------------------------------------------------------------------------------- split


def group_key(task: Task, group_by: GroupBy) -> str:
    """The leakage group of a task: itself (`task`), or its root call, tool and arguments (`root`)."""
    if group_by == "task":
        return task.id
    root = task.gold[0].calls[0]
    args = root.model_dump(mode="json", by_alias=True)["args"]
    return json.dumps([root.tool, args], ensure_ascii=False, sort_keys=True)


def split_groups(sizes: dict[str, int], val_fraction: float, seed: int) -> dict[str, Split]:
    """Each group's side. Groups are sorted, shuffled by `seed`, and taken into val until it holds
    round(val_fraction * tasks) tasks (at least one when val_fraction > 0), never every group."""
    if not 0.0 <= val_fraction < 1.0:
        raise ExportError(f"val_fraction must be in [0, 1), got {val_fraction}")
    order = sorted(sizes)
    random.Random(seed).shuffle(order)
    total = sum(sizes.values())
    target = round(val_fraction * total)
    if val_fraction > 0:
        target = max(1, target)
    side: dict[str, Split] = {g: "train" for g in order}
    taken = 0
    for group in order[:-1]:  # the last group in the order always trains
        if taken >= target:
            break
        side[group] = "val"
        taken += sizes[group]
    return side


# ---------------------------------------------------------------------------------------------- rows


def rl_row(
    task: Task,
    fixture: dict[str, Any],
    tools: Sequence[str],
    source: str,
    split: Split,
    index: int,
    episode_seed: int,
    tools_mode: ToolsMode = "task",
    platforms: Sequence[str] | None = None,
) -> dict[str, Any]:
    return {
        "data_source": source,
        "agent_name": AGENT_NAME,
        "prompt": [
            {"role": "system", "content": system_prompt(task, "submit")},
            {"role": "user", "content": task.query},
        ],
        "ability": task.domain,
        "reward_model": {"style": "rule", "ground_truth": ground_truth(task, fixture)},
        "extra_info": {
            "index": index,
            "split": split,
            "task_id": task.id,
            "tool_selection": [*tools, SUBMIT_TOOL],
            "episode": episode_spec(task, fixture, episode_seed, "submit", tools_mode, platforms),
        },
    }


def sft_messages(
    task: Task,
    messages: Sequence[dict[str, Any]],
    tool_chars: int = TOOL_CHARS,
    tool_side: str = TOOL_SIDE,
) -> list[dict[str, Any]]:
    """The oracle's transcript as SFT messages: checked to be system, user, (assistant with tool_calls, its tool
    results)*, and the answer: the assistant turn that calls submit_answer (its receipt dropped), or a final
    assistant message in text mode; an assistant turn that only calls tools gets content "" (chat templates
    would print None). Arguments stay dicts, as chat templates expect. Each tool result is cut as verl's agent
    loop cuts it in RL (contract.cut_tool_result with the same cap and side), so SFT never trains on context RL
    does not show; a turn's results stay consecutive tool messages, which sft_dataset templates as one turn."""
    if len(messages) < 3 or [m["role"] for m in messages[:2]] != ["system", "user"]:
        raise ExportError(f"task {task.id}: the oracle transcript does not start with system, user")
    out: list[dict[str, Any]] = [dict(messages[0]), dict(messages[1])]
    pending: list[str] = []
    for i, m in enumerate(messages[2:], start=2):
        role = m["role"]
        if role == "assistant":
            if pending:
                raise ExportError(f"task {task.id}: message {i} comes before the results of {pending}")
            calls = m.get("tool_calls") or []
            msg: dict[str, Any] = {"role": "assistant", "content": m.get("content") or ""}
            if calls:
                msg["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]},
                    }
                    for c in calls
                ]
                pending = [c["id"] for c in calls]
            out.append(msg)
        elif role == "tool":
            if not pending or m.get("tool_call_id") != pending[0]:
                raise ExportError(f"task {task.id}: tool message {i} answers no pending call")
            pending.pop(0)
            content = cut_tool_result(str(m["content"]), tool_chars, tool_side)
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": content})
        else:
            raise ExportError(f"task {task.id}: unexpected {role!r} message {i} in the oracle transcript")
    if pending:
        raise ExportError(f"task {task.id}: the oracle transcript ends before the results of {pending}")
    # submit mode: the transcript ends with the turn that submits; its receipt is the environment's, not trained
    while out[-1]["role"] == "tool" and len(out) >= 2:
        out.pop()
    last = out[-1]
    submits = [c["function"]["name"] for c in last.get("tool_calls") or []]
    ends_in_text = "tool_calls" not in last and bool(last["content"])
    if last["role"] != "assistant" or not (ends_in_text or (submits and set(submits) == {SUBMIT_TOOL})):
        raise ExportError(f"task {task.id}: the oracle transcript does not end with an answer")
    return out


async def oracle_records(
    project: Project,
    tasks: Sequence[Task],
    fixtures: dict[str, dict[str, Any]],
    episode_seed: int,
    concurrency: int,
    tool_chars: int | None = TOOL_CHARS,
    tools_mode: ToolsMode = "task",
    withheld: tuple[str, ...] = (),
) -> dict[str, dict[str, Any]]:
    """One oracle episode per task, exactly as `kopa-gen eval --policy oracle --tools-mode ...` runs it (results
    within the tool-result budget `tool_chars`; in all and search mode without the `withheld` platforms)."""
    config = EvalConfig(
        policy="oracle",
        out=Path("."),
        answer_mode="submit",
        tool_result_chars=tool_chars,
        tools_mode=tools_mode,
        withheld=withheld,
    )
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(task: Task) -> tuple[str, dict[str, Any]]:
        async with gate:
            return task.id, await run_episode(project, config, task, fixtures[task.id], episode_seed, 0)

    return dict(await asyncio.gather(*(one(t) for t in tasks)))


# ---------------------------------------------------------------------------------------------- export


def _write(rows: list[dict[str, Any]], schema: Any, path: Path) -> int:
    pa, pq = _pyarrow()
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path)
    return path.stat().st_size


def export(
    project: Project,
    task_set_name: str,
    out_dir: Path,
    val_fraction: float = 0.1,
    seed: int = 0,
    *,
    tasks: list[str] | None = None,
    group_by: GroupBy | None = None,
    sft: bool = True,
    episode_seed: int = 0,
    concurrency: int = 1,
    tool_chars: int = TOOL_CHARS,
    tool_side: str = TOOL_SIDE,
    include_held_out: bool = False,
    tools_mode: ToolsMode = "task",
) -> dict[str, Any]:
    """Write the RL and SFT parquet files of `project`'s task set (or of the `tasks` id patterns) into `out_dir`
    and return the stats (also written to OUT/export.json).

    `group_by` defaults to `task` for the benchmark and `root` for a synthesized set (`project.with_task_set`).
    `seed` decides the split; `episode_seed` is the sandbox seed of the oracle episodes and of the RL rows'
    episode spec. Only oracle episodes with reward 1 become SFT rows; the others are listed under `sft_skipped`.
    `tool_chars` / `tool_side` must be the GRPO config's max_tool_response_length / tool_response_truncate_side:
    SFT tool results are cut with them. `tools_mode` is how the episodes' tools meet the model (`--tools-mode`,
    kopa_gen/mcp/search.py): the RL rows' episodes open their sessions so and the SFT rows are the oracle's
    trajectories in it (in search mode: it searches for each tool by its title, then calls it through
    `call_tool`); in all and search mode the held-out platforms stay closed unless `include_held_out`. The same
    arguments give byte-identical files."""
    start = time.perf_counter()
    _pyarrow()
    chosen = sorted((t for _, t in selected(project, tasks)), key=lambda t: t.id)
    withheld = [] if include_held_out else [t.id for t in chosen if project.touches_held_out(t)]
    chosen = [t for t in chosen if t.id not in withheld]
    if not chosen:
        raise ExportError(
            f"task set {task_set_name!r} has no tasks"
            + (
                f" outside the held-out split ({len(withheld)} touch {', '.join(project.held_out)}; "
                "--include-held-out exports them)"
                if withheld
                else ""
            )
        )
    mode: GroupBy = group_by or ("task" if project.fixtures is None else "root")
    fixtures = fixtures_of(project, chosen)
    closed = () if include_held_out else tuple(project.held_out)
    opened = {t.id: opened_platforms(project, fixtures[t.id], tools_mode, closed) for t in chosen}
    tools = {t.id: exposed_tools(project, t, fixtures[t.id], opened[t.id], tools_mode) for t in chosen}
    groups = {t.id: group_key(t, mode) for t in chosen}
    sizes: dict[str, int] = {}
    for g in groups.values():
        sizes[g] = sizes.get(g, 0) + 1
    side_of = split_groups(sizes, val_fraction, seed)
    split: dict[str, Split] = {t.id: side_of[groups[t.id]] for t in chosen}
    source = data_source(task_set_name)
    out_dir.mkdir(parents=True, exist_ok=True)

    rows: dict[Split, list[dict[str, Any]]] = {"train": [], "val": []}
    for index, task in enumerate(chosen):
        names = [t["name"] for t in tools[task.id]]
        side = split[task.id]
        rows[side].append(
            rl_row(
                task, fixtures[task.id], names, source, side, index, episode_seed, tools_mode, opened[task.id]
            )
        )
    size: dict[str, int] = {}
    for side, name in RL_FILES.items():
        size[name] = _write(rows[side], rl_schema(), out_dir / name)
    rl_s = time.perf_counter() - start

    sft_rows: dict[Split, list[dict[str, Any]]] = {"train": [], "val": []}
    skipped: list[dict[str, Any]] = []
    longest: dict[str, int] = {}  # per task, its oracle trajectory's longest tool result (characters)
    cut: list[
        str
    ] = []  # tasks whose gold chain meets a result the budget cut (the model would not see it all)
    if sft:
        records = asyncio.run(
            oracle_records(
                project, chosen, fixtures, episode_seed, concurrency, tool_chars, tools_mode, closed
            )
        )
        hidden = secrets(project, EvalConfig(policy="oracle", out=Path(".")))
        for task in chosen:
            record = records[task.id]
            results = [str(m.get("content") or "") for m in record["messages"] if m.get("role") == "tool"]
            longest[task.id] = max(map(len, results), default=0)
            if any(CUT in text for text in results):
                cut.append(task.id)
            if not record["reward"] or task.id in cut:  # a cut chain would teach answering from unseen rows
                skipped.append(
                    {
                        "task_id": task.id,
                        "stop_reason": record["stop_reason"],
                        "error": record["error"]
                        or (
                            f"a gold result is cut to fit {tool_chars} characters" if task.id in cut else None
                        ),
                        "response": record["response"],
                        "environment": record["environment"],
                    }
                )
                continue
            side = split[task.id]
            messages = sft_messages(task, record["messages"], tool_chars, tool_side)
            sft_rows[side].append(
                {
                    "messages": redact(json.dumps(messages, ensure_ascii=False), hidden),
                    "tools": json.dumps(
                        [
                            *openai_tools(tools[task.id]),
                            submit_tool_for(json.loads(episode_spec(task, fixtures[task.id]))),
                        ],
                        ensure_ascii=False,
                    ),
                    "task_id": task.id,
                    "data_source": source,
                    "split": side,
                }
            )
        for side, name in SFT_FILES.items():
            size[name] = _write(sft_rows[side], sft_schema(), out_dir / name)
    total_s = time.perf_counter() - start

    group_counts = {s: sum(1 for g, v in side_of.items() if v == s) for s in ("train", "val")}
    stats: dict[str, Any] = {
        "task_set": task_set_name,
        "data_source": source,
        "out": str(out_dir),
        "tasks": len(chosen),
        "group_by": mode,
        "tools_mode": tools_mode,
        "val_fraction": val_fraction,
        "seed": seed,
        "episode_seed": episode_seed,
        "groups": {"total": len(sizes), **group_counts},
        "rows": {
            "train": len(rows["train"]),
            "val": len(rows["val"]),
            **({"sft_train": len(sft_rows["train"]), "sft_val": len(sft_rows["val"])} if sft else {}),
        },
        "sft_skipped": skipped,
        # tasks left out because they touch a platform of the held-out split (specs/domains.yaml)
        "held_out": {"platforms": list(project.held_out), "skipped": withheld},
        # the tool-result budget (= verl's max_tool_response_length): results are rendered within it, cut at a row
        # boundary with a note; a task whose gold chain meets a cut result cannot be solved from what the model
        # sees, so they are counted and named here ("cut"); "over_limit" lists results longer than the budget
        # anyway (a session without it), which verl would cut mid-row
        "tool_result_chars": {
            "limit": tool_chars,
            "side": tool_side,
            "per_task": dict(sorted(longest.items())),
            "max": max(longest.values(), default=0),
            "median": sorted(longest.values())[len(longest) // 2] if longest else 0,
            "over_limit": sorted(t for t, n in longest.items() if n > tool_chars),
            "cut": sorted(cut),
        },
        "bytes": size,
        "seconds": {"rl": round(rl_s, 3), "sft": round(total_s - rl_s, 3), "total": round(total_s, 3)},
        "split": {t.id: {"split": split[t.id], "group": groups[t.id]} for t in chosen},
    }
    (out_dir / STATS_FILE).write_text(
        json.dumps(stats, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return stats


def format_stats(stats: dict[str, Any]) -> str:
    """A few lines for the terminal."""
    rows, groups = stats["rows"], stats["groups"]
    lines = [
        f"{stats['tasks']} tasks of {stats['task_set']} -> {stats['out']}",
        f"  groups ({stats['group_by']}): {groups['total']} ({groups['train']} train, {groups['val']} val)",
        f"  RL rows: {rows['train']} train, {rows['val']} val (tools in {stats.get('tools_mode', 'task')} mode)",
    ]
    held = stats.get("held_out") or {}
    if held.get("skipped"):
        lines.append(
            f"  held out: {len(held['skipped'])} tasks touch {', '.join(held['platforms'])} (not exported)"
        )
    if "sft_train" in rows:
        lines.append(
            f"  SFT rows: {rows['sft_train']} train, {rows['sft_val']} val, "
            f"{len(stats['sft_skipped'])} skipped (oracle reward 0)"
        )
        lines.extend(
            f"    skipped {s['task_id']}: {s['stop_reason']} {s['error'] or ''}".rstrip()
            for s in stats["sft_skipped"]
        )
        chars = stats["tool_result_chars"]
        lines.append(
            f"  longest tool result per task: median {chars['median']}, max {chars['max']} characters"
        )
        lines[-1] += f" (the budget: {chars['limit']})"
        if chars["over_limit"]:
            lines.append(
                f"  warning: {len(chars['over_limit'])} tasks need a tool result longer than "
                f"{chars['limit']} characters (verl's max_tool_response_length cuts it): "
                + ", ".join(chars["over_limit"])
            )
        if chars.get("cut"):
            lines.append(
                f"  warning: {len(chars['cut'])} tasks' gold chains meet a result cut to fit the budget of "
                f"{chars['limit']} characters (smaller gold pages would fit): " + ", ".join(chars["cut"])
            )
    lines.append("  files: " + ", ".join(f"{name} {n / 1024:.1f} KiB" for name, n in stats["bytes"].items()))
    lines.append(
        f"  time: {stats['seconds']['total']:.1f}s (RL {stats['seconds']['rl']:.1f}s, "
        f"SFT {stats['seconds']['sft']:.1f}s)"
    )
    return "\n".join(lines)

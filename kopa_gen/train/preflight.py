"""The data half of `kopa-gen train grpo|sft --dry-run`: load the exported data through the dataset classes the
run will use (verl's RLHFDataset subclass rl_dataset.KopaRLHFDataset, verl's MultiTurnSFTDataset subclass
sft_dataset.JsonMultiTurnSFTDataset) with the Qwen3.5 tokenizer and chat template (qwen35.tokenizer), and name
what would crash or silently train wrong once the GPUs are paid for:

- RL rows verl's `filter_overlong_prompts` drops (their prompt with their own tools exceeds data.max_prompt_length),
- RL prompts the agent loop would left-truncate (longer than rollout.prompt_length, cutting the system turn),
- fewer train rows than data.train_batch_size (the dataloader drops the last batch: zero steps per epoch),
- SFT rows that do not template, or are longer than data.max_length,
- tasks whose gold chain needs a tool result longer than the RL cap (multi_turn.max_tool_response_length), and SFT
  rows cut with another cap than the config's.

Needs the `train` extra.
"""

from __future__ import annotations

import copy
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kopa_gen.train.qwen35 import tokenizer as load_tokenizer

if TYPE_CHECKING:
    from omegaconf import DictConfig

STATS_FILE = "export.json"


@dataclass
class DataReport:
    """What the preflight measured (lines for the terminal) and what must be fixed before a launch."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lengths: dict[str, list[int]] = field(default_factory=dict)


def _spread(values: list[int]) -> str:
    if not values:
        return "no rows"
    return f"min {min(values)}, median {int(statistics.median(values))}, max {max(values)} tokens"


def _files(value: Any) -> list[str]:
    return [str(value)] if isinstance(value, str) else [str(v) for v in value]


def _data_config(cfg: DictConfig, **changes: Any) -> DictConfig:
    from omegaconf import OmegaConf, open_dict

    data = copy.deepcopy(cfg.data)
    OmegaConf.resolve(data)
    with open_dict(data):
        for key, value in changes.items():
            data[key] = value
    return data


def _export_stats(train_files: list[str]) -> dict[str, Any] | None:
    path = Path(train_files[0]).parent / STATS_FILE
    if not path.is_file():
        return None
    stats: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return stats


def _tool_caps(
    cfg: DictConfig, kind: Literal["grpo", "sft"], report: DataReport, stats: dict[str, Any]
) -> None:
    """Tool results over the RL cap; for SFT, rows cut with another cap than the export recorded."""
    chars = stats.get("tool_result_chars") or {}
    per_task: dict[str, int] = chars.get("per_task") or {}
    if kind == "grpo":
        multi = cfg.actor_rollout_ref.rollout.multi_turn
        limit, side = int(multi.max_tool_response_length), str(multi.tool_response_truncate_side)
        if chars.get("limit") is not None and (chars.get("limit"), chars.get("side", side)) != (limit, side):
            report.problems.append(
                f"the export cut SFT tool results at {chars.get('limit')} characters ({chars.get('side')}) but "
                f"multi_turn.max_tool_response_length is {limit} ({side}); export again with the same cap "
                "so SFT and RL show the same context"
            )
    else:
        limit = int(chars.get("limit") or 0)
    cut = list(chars.get("cut") or [])
    if cut:
        report.problems.append(
            f"{len(cut)} tasks' gold chains meet a tool result cut to fit the budget of {chars.get('limit')} "
            f"characters: {', '.join(cut)}; the model cannot see what their answers need. Give their gold calls "
            "smaller pages, or export with a larger budget and the same max_tool_response_length"
        )
    over = sorted(t for t, n in per_task.items() if limit and n > limit)
    if over:
        report.problems.append(
            f"{len(over)} tasks need a tool result longer than the RL cap of {limit} characters (longest "
            f"{max(per_task[t] for t in over)}): {', '.join(over)}; raise "
            "actor_rollout_ref.rollout.multi_turn.max_tool_response_length and export again with the same "
            "cap, or leave these tasks out of the export (--tasks)"
        )


def check_grpo_data(cfg: DictConfig, tok: Any) -> DataReport:
    from verl.utils.dataset.rl_dataset import get_dataset_class

    report = DataReport()
    cls = get_dataset_class(cfg.data)
    if not hasattr(cls, "prompt_tokens"):
        report.problems.append(
            f"data.custom_cls is {cls.__name__}, which measures prompts with every tool of the tool config; "
            "use kopa_gen.train.rl_dataset.KopaRLHFDataset (what `kopa-gen train grpo` sets)"
        )
        return report
    rollout_cap = int(cfg.actor_rollout_ref.rollout.prompt_length)
    cap = int(cfg.data.max_prompt_length)
    filtering = bool(cfg.data.filter_overlong_prompts)
    for split, key in (("train", "train_files"), ("val", "val_files")):
        files = _files(cfg.data[key])
        everything = cls(
            data_files=files,
            tokenizer=tok,
            processor=None,
            config=_data_config(cfg, filter_overlong_prompts=False, filter_overlong_prompts_workers=1),
        )
        lengths = [everything.prompt_tokens(everything.dataframe[i]) for i in range(len(everything))]
        report.lengths[split] = lengths
        kept = cls(
            data_files=files,
            tokenizer=tok,
            processor=None,
            config=_data_config(cfg, filter_overlong_prompts_workers=1),
        )
        dropped = len(everything) - len(kept)
        truncated = sum(1 for n in lengths if n > rollout_cap and (not filtering or n <= cap))
        report.lines.append(
            f"  {split}: {len(kept)} of {len(everything)} rows kept, {dropped} dropped, {truncated} truncated; "
            f"prompts with their own tools: {_spread(lengths)}"
        )
        if dropped:
            report.problems.append(
                f"{split}: verl's filter_overlong_prompts drops {dropped} of {len(everything)} rows longer than "
                f"data.max_prompt_length={cap} tokens (longest {max(lengths)}); raise data.max_prompt_length "
                "or leave those tasks out"
            )
        if truncated:
            report.problems.append(
                f"{split}: {truncated} prompts are longer than actor_rollout_ref.rollout.prompt_length="
                f"{rollout_cap} tokens and the agent loop left-truncates them (the system turn goes first); "
                "raise rollout.prompt_length to data.max_prompt_length"
            )
        if split == "train" and len(kept) < int(cfg.data.train_batch_size):
            report.problems.append(
                f"train: {len(kept)} rows for data.train_batch_size={cfg.data.train_batch_size}: the dataloader "
                f"drops the incomplete batch, so an epoch has zero steps; set data.train_batch_size to at most "
                f"{len(kept)} or export more tasks"
            )
    stats = _export_stats(_files(cfg.data.train_files))
    if stats is not None:
        _tool_caps(cfg, "grpo", report, stats)
    return report


def check_sft_data(cfg: DictConfig, tok: Any) -> DataReport:
    from kopa_gen.train.sft_dataset import JsonMultiTurnSFTDataset

    report = DataReport()
    cap = int(cfg.data.max_length)
    for split, key in (("train", "train_files"), ("val", "val_files")):
        files = _files(cfg.data[key])
        # no cap while measuring: the real cap's truncation=error would stop at the first long row
        data = JsonMultiTurnSFTDataset(files, tok, _data_config(cfg, max_length=10**9, truncation="error"))
        lengths: list[int] = []
        for i in range(len(data)):
            try:
                lengths.append(int(data[i]["input_ids"].shape[-1]))
            except Exception as error:  # the template's own exception types
                report.problems.append(
                    f"{split} row {i}: does not template with the chat template: {type(error).__name__}: {error}"
                )
        report.lengths[split] = lengths
        over = [n for n in lengths if n > cap]
        report.lines.append(
            f"  {split}: {len(lengths)} of {len(data)} rows template, {len(over)} over data.max_length={cap}; "
            f"{_spread(lengths)}"
        )
        if over:
            report.problems.append(
                f"{split}: {len(over)} SFT rows are longer than data.max_length={cap} tokens (longest {max(over)}) "
                f"and truncation={cfg.data.truncation}; raise data.max_length (and data.max_token_len_per_gpu) "
                "or leave those tasks out"
            )
        if split == "train" and len(data) < int(cfg.data.train_batch_size):
            report.problems.append(
                f"train: {len(data)} SFT rows for data.train_batch_size={cfg.data.train_batch_size}: zero steps "
                f"per epoch; set data.train_batch_size to at most {len(data)} (divisible by the data-parallel "
                "size) or export more tasks"
            )
    stats = _export_stats(_files(cfg.data.train_files))
    if stats is not None:
        _tool_caps(cfg, "sft", report, stats)
    return report


def check_data(kind: Literal["grpo", "sft"], cfg: DictConfig) -> DataReport:
    """Load the data the config names through the run's dataset classes with the Qwen3.5 tokenizer."""
    model = str(cfg.actor_rollout_ref.model.path if kind == "grpo" else cfg.model.path)
    loaded = load_tokenizer(model)
    report = (
        check_grpo_data(cfg, loaded.tokenizer) if kind == "grpo" else check_sft_data(cfg, loaded.tokenizer)
    )
    report.lines.insert(0, f"{kind} data with {loaded.source}:")
    return report

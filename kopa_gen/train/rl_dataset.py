"""verl's RLHFDataset measuring each prompt with the row's own tools.

verl 0.9.1's `filter_overlong_prompts` templates every prompt with *all* tool schemas of the tool config (about
22.7k tokens for 50 tools), while the agent loop shows a trajectory only the tools of its
`extra_info.tool_selection`: the filter then drops rows that fit. This subclass measures exactly what the agent
loop renders (the row's messages, its selected tools in selection order, the generation prompt, the
`apply_chat_template_kwargs`) and filters on that. `kopa-gen train grpo` sets it as `data.custom_cls`; the
dry-run preflight (kopa_gen.train.preflight) loads the data through it. Needs the `train` extra.
"""

from __future__ import annotations

import json
from typing import Any

from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.utils.tokenizer.tokenizer import normalize_token_ids

from kopa_gen.train import contract


class KopaRLHFDataset(RLHFDataset):  # type: ignore[misc, unused-ignore]
    tool_schemas: list[dict[str, Any]] | None
    tokenizer: Any
    processor: Any
    prompt_key: str
    max_prompt_length: int
    filter_overlong_prompts: bool
    apply_chat_template_kwargs: Any
    num_workers: int | None
    dataframe: Any

    def row_tools(self, row: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The tool schemas the agent loop shows this row: its `tool_selection`, else every tool; `submit_answer`
        typed by the row's task, as the agent loop shows it."""
        info = row.get("extra_info") or {}
        selection = info.get("tool_selection")
        if not selection or not self.tool_schemas:
            return self.tool_schemas
        by_name = {s["function"]["name"]: s for s in self.tool_schemas}
        episode = info.get("episode")
        typed = contract.submit_tool_for(json.loads(episode)) if isinstance(episode, str) else None
        if typed is not None:
            by_name[typed["function"]["name"]] = typed
        return [by_name[name] for name in selection if name in by_name]

    def prompt_tokens(self, row: dict[str, Any]) -> int:
        """The row's prompt length in tokens, as the agent loop builds it."""
        kwargs = {
            k: v
            for k, v in dict(self.apply_chat_template_kwargs or {}).items()
            if k not in {"tokenize", "return_dict", "return_tensors"}
        }
        messages = list(row[self.prompt_key])
        tools = self.row_tools(row)
        if self.processor is not None:
            text = self.processor.apply_chat_template(
                messages, tools=tools, add_generation_prompt=True, tokenize=False, **kwargs
            )
            ids = self.processor.tokenizer(text=text, add_special_tokens=False)["input_ids"]
            return len(ids)
        ids = self.tokenizer.apply_chat_template(
            messages, tools=tools, add_generation_prompt=True, tokenize=True, **kwargs
        )
        return len(normalize_token_ids(ids))

    def maybe_filter_out_long_prompts(self, dataframe: Any = None) -> Any:
        if not self.filter_overlong_prompts:
            return dataframe
        limit = self.max_prompt_length
        kept = dataframe.filter(
            lambda row: self.prompt_tokens(row) <= limit,
            num_proc=self.num_workers,
            desc=f"Filtering prompts longer than {limit} tokens (with each row's own tools)",
        )
        print(f"filter dataset len: {len(kept)}")
        return kept

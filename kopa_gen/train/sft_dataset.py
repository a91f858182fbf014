"""verl's MultiTurnSFTDataset over the SFT rows of `kopa-gen train export`, whose `messages` and `tools` columns are
JSON strings (Arrow would otherwise unify the tool-call argument structs of all rows, and every call would be
trained with the other tools' argument names set to null — ../shared/reference/verl-0.9.md, SFT baseline).

Two more things verl 0.9.1 does per message (it templates one message at a time) that we fix here:
- Qwen3.5's template rejects a conversation without a user query, so the lone system message fails, and verl's
  fallback (a dummy user message first) then trips "System message must be at the beginning" (verl issue #7378;
  the fix, PR #7322, is not in 0.9.1). The system turn is templated with an empty user turn after it instead, and
  that turn's tokens are cut off again.
- Consecutive tool results (one assistant turn's parallel calls) are templated together, as one user turn the way
  the whole-conversation template and verl's agent loop render them, not as one user turn per result.

Use it through the SFT trainer's config:

    data.custom_cls.path=pkg://kopa_gen.train.sft_dataset data.custom_cls.name=JsonMultiTurnSFTDataset
    data.messages_key=messages data.tools_key=tools

Imports verl, so only the `train` extra's environment may import this module.
"""

from __future__ import annotations

import json
from typing import Any

import torch
from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset
from verl.utils.tokenizer.chat_template import apply_chat_template

EMPTY_USER = {"role": "user", "content": ""}


def decoded(value: Any) -> Any:
    """A JSON-string cell as its value; anything else (a row written without the JSON encoding) unchanged."""
    return json.loads(value) if isinstance(value, str) else value


def tool_run(messages: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    """The tool messages from `index` up to the next message of another role ([] if `index` continues a run)."""
    if index > 0 and messages[index - 1]["role"] == "tool":
        return []
    end = index
    while end < len(messages) and messages[end]["role"] == "tool":
        end += 1
    return messages[index:end]


class JsonMultiTurnSFTDataset(MultiTurnSFTDataset):  # type: ignore[misc, unused-ignore]
    """MultiTurnSFTDataset whose `messages` and `tools` cells are decoded from JSON before verl reads them, and
    whose system turn and parallel tool results template with Qwen3.5 (see the module docstring)."""

    messages: list[Any]
    tools: list[Any] | None
    messages_key: str
    processor: Any
    tokenizer: Any
    apply_chat_template_kwargs: dict[str, Any]
    system_prompt: list[int]

    def _read_files_and_process(self) -> None:
        super()._read_files_and_process()  # type: ignore[no-untyped-call, unused-ignore]
        # `messages` feeds __len__ only; `tools` is what __getitem__ hands the chat template with the first turn
        self.messages = [decoded(m) for m in self.messages]
        if self.tools is not None:
            self.tools = [decoded(t) for t in self.tools]

    def _build_messages(self, example: dict[str, Any]) -> list[dict[str, Any]]:
        # __getitem__ passes the dataframe row, whose messages cell is still the JSON string
        example = {**example, self.messages_key: decoded(example[self.messages_key])}
        messages: list[dict[str, Any]] = super()._build_messages(example)
        return messages

    def _template(self, messages: list[dict[str, Any]], tools: Any, enable_thinking: bool | None) -> Any:
        kwargs = {**self.apply_chat_template_kwargs}
        if enable_thinking is not None:
            kwargs["enable_thinking"] = enable_thinking
        processor = self.processor if self.processor is not None else self.tokenizer
        return dict(
            apply_chat_template(
                processor,
                messages=messages,
                tools=tools,
                add_generation_prompt=False,
                tokenize=True,
                return_dict=True,
                return_tensors="pt",
                **kwargs,
            )
        )

    def _process_single_message(
        self,
        index: int,
        message: dict[str, Any],
        full_message: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        enable_thinking: bool | None = None,
    ) -> tuple[Any, Any, Any, dict[str, Any]]:
        if message["role"] == "system" and index == 0:
            return self._system_turn(message, tools, enable_thinking)
        if message["role"] != "tool":
            result: tuple[Any, Any, Any, dict[str, Any]] = super()._process_single_message(
                index, message, full_message, tools, enable_thinking
            )
            return result
        run = tool_run(full_message, index)
        if not run:  # templated with the first result of its run
            empty = torch.zeros(0, dtype=torch.long)
            return empty, empty.clone(), empty.clone(), {}
        inputs = self._template(run, tools, enable_thinking)
        input_ids, attention_mask = inputs.pop("input_ids")[0], inputs.pop("attention_mask")[0]
        if index != 0:  # as verl does for every non-system message
            input_ids = input_ids[len(self.system_prompt) :]
            attention_mask = attention_mask[len(self.system_prompt) :]
        return input_ids, torch.zeros_like(attention_mask), attention_mask, inputs

    def _system_turn(
        self, message: dict[str, Any], tools: list[dict[str, Any]] | None, enable_thinking: bool | None
    ) -> tuple[Any, Any, Any, dict[str, Any]]:
        try:
            inputs = self._template([message], tools, enable_thinking)
        except Exception:  # Qwen3.5: no user query (the exception type is the template's)
            inputs = self._template([message, EMPTY_USER], tools, enable_thinking)
            user = self._template([EMPTY_USER], None, enable_thinking)["input_ids"][0]
            user = user[len(self.system_prompt) :]  # a template's default system turn, if it has one
            ids = inputs["input_ids"][0]
            if len(user) == 0 or len(ids) < len(user) or not torch.equal(ids[-len(user) :], user):
                raise ValueError(
                    "the chat template renders a system turn followed by an empty user turn differently from "
                    "the empty user turn alone; check the model's chat template"
                ) from None
            inputs = {
                **inputs,
                "input_ids": inputs["input_ids"][:, : -len(user)],
                "attention_mask": inputs["attention_mask"][:, : -len(user)],
            }
        input_ids, attention_mask = inputs.pop("input_ids")[0], inputs.pop("attention_mask")[0]
        return input_ids, torch.zeros_like(attention_mask), attention_mask, inputs

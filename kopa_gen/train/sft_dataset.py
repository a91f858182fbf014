"""verl's MultiTurnSFTDataset over the SFT rows of `kopa-gen train export`, whose `messages` and `tools` columns are
JSON strings (Arrow would otherwise unify the tool-call argument structs of all rows, and every call would be
trained with the other tools' argument names set to null — ../shared/reference/verl-0.9.md, SFT baseline).

Use it through the SFT trainer's config:

    data.custom_cls.path=<checkout>/kopa_gen/train/sft_dataset.py data.custom_cls.name=JsonMultiTurnSFTDataset
    data.messages_key=messages data.tools_key=tools

Imports verl, so only the `train` extra's environment may import this module.
"""

from __future__ import annotations

import json
from typing import Any

from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset


def decoded(value: Any) -> Any:
    """A JSON-string cell as its value; anything else (a row written without the JSON encoding) unchanged."""
    return json.loads(value) if isinstance(value, str) else value


class JsonMultiTurnSFTDataset(MultiTurnSFTDataset):  # type: ignore[misc, unused-ignore]
    """MultiTurnSFTDataset whose `messages` and `tools` cells are decoded from JSON before verl reads them."""

    messages: list[Any]
    tools: list[Any] | None
    messages_key: str

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

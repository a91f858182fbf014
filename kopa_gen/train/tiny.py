"""An offline byte-level BPE tokenizer with a chat template, trained on the spot from a few texts: what the CPU
tests and the GPU check use in place of a downloaded model's tokenizer (nothing here touches the network).
Needs the `train` extra (tokenizers, transformers)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

# the first three are the pad/boundary tokens; the rest are kept whole as additional special tokens
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>")

_HEAD = (
    "{%- if tools %}<|im_start|>system\n{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n"
    "{% endif %}# Tools\n<tools>{% for t in tools %}\n{{ t | tojson }}{% endfor %}\n</tools><|im_end|>\n"
    "{%- elif messages[0].role == 'system' %}<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'user' %}<|im_start|>user\n{{ m.content }}<|im_end|>\n"
    "{%- elif m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content }}"
)
_TAIL = (
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# hermes: tool calls as JSON objects (verl's `hermes` parser)
HERMES_TEMPLATE = (
    _HEAD
    + '{%- if m.tool_calls %}{% for tc in m.tool_calls %}\n<tool_call>\n{"name": "{{ tc.function.name }}", '
    '"arguments": {% if tc.function.arguments is string %}{{ tc.function.arguments }}{% else %}'
    "{{ tc.function.arguments | tojson }}{% endif %}}\n</tool_call>{% endfor %}{% endif %}<|im_end|>\n"
    + _TAIL
)
# Qwen3.5: XML function/parameter tool calls (verl's `qwen3_coder` parser)
QWEN35_TEMPLATE = (
    _HEAD
    + "{%- if m.tool_calls %}{% for tc in m.tool_calls %}\n<tool_call>\n<function={{ tc.function.name }}>\n"
    "{%- set args = tc.function.arguments if tc.function.arguments is mapping else {} %}"
    "{%- for k, v in args.items() %}<parameter={{ k }}>\n{{ v if v is string else v | tojson }}\n</parameter>\n"
    "{%- endfor %}</function>\n</tool_call>{% endfor %}{% endif %}<|im_end|>\n" + _TAIL
)


def offline_tokenizer(
    texts: Sequence[str],
    out: Path,
    template: str = HERMES_TEMPLATE,
    vocab_size: int = 400,
    specials: Sequence[str] = SPECIALS,
) -> Any:
    """Train a byte-level BPE on `texts`, attach `template`, save it under `out` (loadable with
    AutoTokenizer.from_pretrained) and return it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(specials),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(list(texts), trainer)
    hf = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=list(specials[3:]),
    )
    hf.chat_template = template
    hf.save_pretrained(str(out))
    return hf

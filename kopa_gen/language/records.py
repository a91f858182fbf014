"""Records that cross packages, as one typed model each (their JSON Schemas are exported to generated/schemas/):
what one stage writes and another reads, validated at the reader's edge so that a renamed field fails there, with
the file and the field, instead of as a KeyError three packages away.

Now: the gold fixture (written by kopa_gen/gold/run.py, read by the scorers, the policies, EDGE and training), the
scored episode (written by kopa_gen/evaluate/runner.py into a run folder's episodes.jsonl, read by the report, the
transcripts and the training export) with its ACTION parts and token usage, and the run manifest (run.json,
written by the runner, read by the runner on resume and by the report) with the endpoint and agent settings
(kopa_gen/language/settings.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, ValidationError

from kopa_gen.language.answers import Answer
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.kopa import StrictModel
from kopa_gen.language.settings import AgentSettings, EndpointSettings


class Paging(StrictModel):
    params: list[str]
    rows: list[int] | None = None


class Alternative(StrictModel):
    tool: str
    args: dict[str, Any]
    compare: list[str]


class GoldUnit(StrictModel):
    """One executed gold call (a fan-out item and a page each count as one)."""

    id: str
    key: str
    tool: str
    args: dict[str, Any]
    compare: list[str]
    paging: Paging | None
    alternatives: list[Alternative]
    result_sha256: str
    total_count: int | None


class Evidence(StrictModel):
    """What a gold call's references read: row keys (or every page, `all`), the total, one record's key."""

    rows: list[str] | Literal["all"]
    total: bool
    record: str | None
    ignore: list[str] = Field(default_factory=list)


class CallInfo(StrictModel):
    evidence: Evidence | None
    feeds: list[str]
    answer: bool
    read: list[dict[str, Any]] | None = Field(
        default=None,
        description="The rows the references read, as values (the fields their paths name, in the order read), so "
        "that a fixture's diff shows what the chain saw; None when they read more than the evidence holds.",
    )


class Handoff(StrictModel):
    """A value handed from one call to the next (or to the answer): how many distinct values, from how many rows."""

    from_: str = Field(alias="from")
    to: str
    arg: str
    distinct: int
    rows: int
    matched: int | None = Field(
        default=None,
        description="Where the producing step filtered a downloaded bulk file client-side (DART's CORPCODE.xml): "
        "the rows its filter kept; `rows` is then the file's rows.",
    )


class Stats(StrictModel):
    steps: int
    turns: int
    calls: int
    pages: int
    parallel_calls: int
    max_calls: int
    headroom: float
    handoffs: list[Handoff]
    one_to_many: int


class Fixture(StrictModel):
    """generated/fixtures/<domain>/<id>.json: a task's gold chain as executed, its answer and statistics."""

    id: str
    domain: str
    spec: str
    world_seed: int
    reward: list[str]
    platforms: list[str]
    steps: list[list[GoldUnit]]
    answer: Answer | None
    answer_value: Any
    answer_pool: list[Any]
    state_scope: list[dict[str, Any]]
    state_hash: str
    calls: dict[str, CallInfo]
    stats: Stats


class ActionParts(StrictModel):
    """The ACTION axis of one episode (docs/evaluation.md): `action` is the paper's (Corr + Eff) / 2,
    `action_gated` (Corr + Corr x Eff) / 2; `cr` and `mpc` the call rate and the mean parallel calls."""

    corr: float
    cr: float
    mpc: float
    eff: float
    action: float
    action_gated: float


class TurnUsage(StrictModel):
    """The tokens of one model turn, as the server's `usage` said."""

    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)


class Usage(StrictModel):
    """An episode's tokens: summed over the turns whose response carried `usage`, and per model turn (null for a
    turn whose response had none)."""

    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    turns: list[TurnUsage | None]

    @classmethod
    def of(cls, turns: list[TurnUsage | None]) -> Usage | None:
        """The episode's usage from its turns; None when no turn reported any."""
        counted = [t for t in turns if t is not None]
        if not counted:
            return None
        return cls(
            prompt_tokens=sum(t.prompt_tokens for t in counted),
            completion_tokens=sum(t.completion_tokens for t in counted),
            turns=turns,
        )


class EpisodeRecord(StrictModel):
    """One scored episode, one line of episodes.jsonl."""

    key: str
    task: str
    domain: str
    query: str
    seed: int
    rollout: int
    policy: str
    answer_mode: Literal["submit", "text"]
    stop_reason: str
    error: str | None
    final_message: str
    calls: list[dict[str, Any]]
    turns: list[list[int]]
    messages: list[dict[str, Any]]
    state_hash: str
    state: Any
    response: dict[str, Any] | None
    environment: bool | None
    action: ActionParts
    reward: bool
    reason: str
    elapsed_s: float
    pattern: str | None = Field(default=None, description="The EDGE pattern of a synthesized task.")
    expected: str | None = Field(
        default=None,
        description="The gold answer and, for a task scored on its state, the gold chain's writes, as the report "
        "shows them beside the reply (null: neither).",
    )
    usage: Usage | None = Field(
        default=None, description="Tokens, when the model server returned `usage` (reference policies: null)."
    )


MANIFEST_FORMAT = 3
"""run.json's format; a folder written in another one is not resumed."""


class TaskSetRef(StrictModel):
    kind: Literal["benchmark", "task-dir"]
    path: str = Field(description="specs/tasks, or the task dir's absolute path.")
    hash: str = Field(description="SHA-256 over the id and content hash of every task the run has run.")


class JudgeRecord(StrictModel):
    """The LLM judge of a text-mode run."""

    kind: str = "openai"
    endpoint: EndpointSettings
    rubric: str = Field(description="The rubric version (kopa_gen/evaluate/prompts/judge.md).")


class RunManifest(StrictModel):
    """runs/<name>/run.json: what one run folder's episodes are. The fields from `task_set` to `judge` are the
    run's plan: resuming with any of them different is refused, naming the field."""

    format: Literal[3]
    task_set: TaskSetRef
    tasks: dict[str, str] = Field(description="Task id -> SHA-256 of its spec and gold fixture.")
    policy: str
    answer_mode: Literal["submit", "text"]
    tools_mode: Literal["all", "task", "search"] = Field(
        default="task",
        description="Which tools the model met (kopa_gen/mcp/search.py): the task's list, every tool, or "
        "entry tools with search_tools and call_tool.",
    )
    seeds: list[int] = Field(description="Sandbox seeds, sorted.")
    rollouts: int = Field(ge=1, description="Episodes per task and seed.")
    tool_result_chars: int | None = Field(
        description="The tool-result budget in characters (null: results are never cut)."
    )
    endpoint: EndpointSettings | None = Field(
        description="The model endpoint (a model policy), base URL public."
    )
    agent: AgentSettings | None = Field(description="The agent loop (a model policy).")
    live: bool
    world_seed: int
    judge: JudgeRecord | None
    code_versions: list[str]
    endpoints: list[str] = Field(description="Every base URL the model was reached at, in order.")
    server: str | None = Field(
        default=None, description="The command that served the model for the run (`--serve-vllm`)."
    )
    pool_guess: dict[str, Any] = Field(default_factory=dict)
    unvalidated: list[str] = Field(
        default_factory=list,
        description="Tasks run in a tools mode their `tools_modes` do not list (never checked in it), sorted.",
    )


M = TypeVar("M", bound=StrictModel)


class RecordError(UserError, ValueError):
    """A record that does not have the shape its reader expects; the message names the file and the field."""


def check_manifest(data: Any, where: Path | str) -> RunManifest:
    """Validate a run.json read from `where`."""
    return check_record(
        RunManifest,
        data,
        where,
        "run.json",
        "it was written by another version of kopa-gen: give another --out, or use the version that wrote it",
    )


def check_fixture(data: Any, where: Path | str) -> None:
    """Validate a fixture read from (or about to be written to) `where`."""
    check_record(Fixture, data, where, "fixture", "run `kopa-gen build` to write the fixtures again")


def check_record(model: type[M], data: Any, where: Path | str, what: str, fix: str) -> M:
    """Validate `data` as `model`; RecordError naming `where`, the field and `fix` otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise RecordError(f"{where}: {what} field {field or '(top)'}: {first['msg']}{more}; {fix}") from None

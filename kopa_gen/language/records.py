"""Records that cross packages, as one typed model each (their JSON Schemas are exported to generated/schemas/):
what one stage writes and another reads, validated at the reader's edge so that a renamed field fails there, with
the file and the field, instead of as a KeyError three packages away.

Now: the gold fixture (written by kopa_gen/gold/run.py, read by the scorers, the policies, EDGE and training), the
scored episode (written by kopa_gen/evaluate/runner.py into a run folder's episodes.jsonl, read by the report, the
transcripts and the training export) and its ACTION parts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from kopa_gen.language.answers import Answer
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.kopa import StrictModel


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


class Handoff(StrictModel):
    """A value handed from one call to the next (or to the answer): how many distinct values, from how many rows."""

    from_: str = Field(alias="from")
    to: str
    arg: str
    distinct: int
    rows: int


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


class RecordError(UserError, ValueError):
    """A record that does not have the shape its reader expects; the message names the file and the field."""


def check_fixture(data: Any, where: Path | str) -> None:
    """Validate a fixture read from (or about to be written to) `where`."""
    check_record(Fixture, data, where, "fixture", "run `kopa-gen build` to write the fixtures again")


def check_record(model: type[StrictModel], data: Any, where: Path | str, what: str, fix: str) -> None:
    """Validate `data` as `model`; RecordError naming `where`, the field and `fix` otherwise."""
    try:
        model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise RecordError(f"{where}: {what} field {field or '(top)'}: {first['msg']}{more}; {fix}") from None

"""Sandbox settings: keys, limits and seeded fault injection (off by default, for reproducible benchmarks)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kopa_gen.language.platform import Platform, generated_key


class Faults(BaseModel):
    """Seeded transient failures. `rate` is the share of requests that fail; `kinds` weighs how."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate: float = Field(default=0.0, ge=0.0, le=1.0)
    kinds: dict[str, float] = Field(
        default_factory=lambda: {
            "http_500": 1.0,
            "http_502": 1.0,
            "http_503": 1.0,
            "timeout": 1.0,
            "provider": 1.0,
        },
        description="http_5xx: gateway/server HTTP error; timeout: no answer for `timeout_s`; provider: the "
        "platform's own server-error code in its envelope.",
    )
    timeout_s: float = Field(default=30.0, gt=0)


class SandboxConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    keys: dict[str, list[str]] = Field(
        default_factory=dict, description="Accepted keys per platform; default: the platform's sandbox key."
    )
    limits: bool = Field(default=True, description="Enforce the spec's daily quota and per-second rate.")
    daily_quota: dict[str, int] = Field(
        default_factory=dict, description="Per-platform override of the quota."
    )
    faults: Faults = Field(default_factory=Faults)
    threads: bool = Field(
        default=False,
        description="Answer world reads in a thread pool (one read-only SQLite connection per thread), so that "
        "concurrent HTTP clients overlap (`kopa-gen sandbox serve --threads`); off by default: for light queries "
        "the hop and the wait for the GIL cost more than the overlap gains.",
    )

    def accepted(self, platform: Platform) -> set[str]:
        return set(self.keys.get(platform.id) or [sandbox_key(platform)])


def sandbox_key(platform: Platform) -> str:
    """The well-known key the sandbox accepts for a platform, shaped like a real one (it guards nothing): the
    spec's `x-kopa.auth.sandbox_key`, else a common shape matching its key pattern (the spec load checks one
    exists)."""
    key = platform.kopa.auth.sandbox_key or generated_key(platform.kopa)
    if key is None:  # load_platform reports this as a spec error first
        raise ValueError(
            f"{platform.id}: give x-kopa.auth.sandbox_key (no common shape matches the key pattern)"
        )
    return key

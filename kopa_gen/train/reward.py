"""The RL reward: verl's `compute_score` over what our agent loop left in `extra_info`, scored by the very function
`kopa-gen eval` scores with (kopa_gen.evaluate.episode.score_episode). verl-free.

Config: `reward.custom_reward_function.path=<this file>` and `.name=compute_score`.

The score is the eval reward (1.0 when every RESPONSE and ENVIRONMENT check of the task passes, else 0.0), in the
answer mode of the row's episode spec (submit: the trajectory's submit_answer call, graded by type). The
other entries are logged by verl as reward_extra_info; every call returns the same keys with the same types
(floats, None for an axis the task is not scored on, which verl's metrics skip, and a string `reason`),
because verl collects them per key across the batch. `solution_str` (verl's decode of the whole response, tool outputs included) is not used: the
final message comes from the agent loop. Missing or undecodable extra fields score 0 with a reason; they never
raise, so one bad trajectory cannot end a training step.
"""

from __future__ import annotations

import json
from typing import Any

from kopa_gen.evaluate.episode import score_episode
from kopa_gen.train import contract

AXES = ("response", "environment", "action", "action_gated", "corr", "cr", "mpc", "eff")


def _failed(reason: str) -> dict[str, Any]:
    out: dict[str, Any] = {"score": 0.0}
    out.update(dict.fromkeys(AXES, None))
    out["reason"] = reason
    return out


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    del data_source, solution_str, kwargs  # one scoring path for every task set; the text is not parsed
    info = extra_info or {}
    missing = [
        k
        for k in (contract.FINAL_MESSAGE, contract.STATE_HASH, contract.CALLS, contract.TURNS)
        if not isinstance(info.get(k), str)
    ]
    if missing:
        return _failed(f"extra_info lacks {', '.join(missing)} (not played by {contract.AGENT_NAME}?)")
    try:
        task, fixture = contract.load_ground_truth(
            ground_truth if isinstance(ground_truth, str) else json.dumps(ground_truth)
        )
        calls = contract.calls_from_json(info[contract.CALLS])
        turns = json.loads(info[contract.TURNS])
        episode = info.get("episode")
        spec = json.loads(episode) if isinstance(episode, str) else dict(episode or {})
    except (ValueError, KeyError, TypeError) as exc:
        return _failed(f"cannot decode the episode: {type(exc).__name__}: {exc}")
    score = score_episode(
        task,
        fixture,
        info[contract.FINAL_MESSAGE],
        info[contract.STATE_HASH],
        calls,
        turns,
        mode=contract.answer_mode(spec),
    )
    response = score.response
    out: dict[str, Any] = {
        "score": float(score.reward),
        "response": None if response is None else float(response.passed),
        "environment": None if score.environment is None else float(score.environment),
    }
    for key in ("action", "action_gated", "corr", "cr", "mpc", "eff"):
        out[key] = float(getattr(score.action, key))
    out["reason"] = score.reason
    return out

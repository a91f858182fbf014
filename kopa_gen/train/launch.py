"""Launch configs for GRPO and SFT with verl 0.9.1 on one 8×H100 node, for `kopa-gen train grpo|sft`.

A launch is a list of Hydra overrides of verl's own config (`ppo_trainer` for GRPO, `sft_trainer_engine` for
SFT), built from three layers, later ones winning on the same key:

1. the hyperparameters in configs/grpo.yaml or configs/sft.yaml (common + the engine's section),
2. what this module fills in: data files, tool config, agent loop, reward function, dataset class, the model
   preset's id, parallel sizes and micro batch sizes, the experiment name,
3. the user's extra overrides.

`compose` builds the full config with verl's own config files and `check` runs verl's own validation (the
checks verl's entry points run before they start Ray or torch.distributed) plus ours (files, batch sizes), so
`--dry-run` catches a broken launch on a laptop. verl, hydra and omegaconf are imported only inside functions:
this module imports without the training extra.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict

from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.source import load_text
from kopa_gen.train.contract import AGENT_NAME

if TYPE_CHECKING:
    from omegaconf import DictConfig

Kind = Literal["grpo", "sft"]
Engine = Literal["fsdp", "megatron"]
KINDS: tuple[Kind, ...] = get_args(Kind)
ENGINES: tuple[Engine, ...] = get_args(Engine)

CONFIG_DIR = Path(__file__).parent / "configs"

# what `kopa-gen train export` writes into the data dir (see kopa_gen/train/contract.py)
TRAIN_FILE = "train.parquet"
VAL_FILE = "val.parquet"
SFT_TRAIN_FILE = "sft_train.parquet"
SFT_VAL_FILE = "sft_val.parquet"
TOOLS_FILE = "tools.yaml"
AGENT_LOOPS_FILE = "agent_loops.yaml"

# loaded by verl with load_extern_object, which imports `pkg://` paths as modules of the installed package
REWARD_PATH = "pkg://kopa_gen.train.reward"
REWARD_NAME = "compute_score"
SFT_DATASET_PATH = "pkg://kopa_gen.train.sft_dataset"
SFT_DATASET_NAME = "JsonMultiTurnSFTDataset"
RL_DATASET_PATH = "pkg://kopa_gen.train.rl_dataset"
RL_DATASET_NAME = "KopaRLHFDataset"
# environment every Ray worker gets (verl merges ray_kwargs.ray_init.runtime_env into its own): where the world
# database was pre-built, and the project the agent loop plays
RAY_ENV = "+ray_kwargs.ray_init.runtime_env.env_vars"

VERL_GRPO_CONFIG = "ppo_trainer"
VERL_SFT_CONFIG = "sft_trainer_engine"


@dataclass(frozen=True)
class ModelPreset:
    """One model on one 8×H100 80GB node: its Hugging Face id and the sizes that depend on it."""

    hf_id: str
    rollout_tp: int
    """vLLM tensor parallel size of each rollout replica (8 / rollout_tp replicas on the node)."""
    megatron_tp: int
    """Megatron tensor parallel size of the actor/ref (and of SFT)."""
    ppo_micro_batch_per_gpu: int
    """Micro batch for actor updates where batches are not token-budgeted (Megatron)."""
    log_prob_micro_batch_per_gpu: int
    """Micro batch for old/ref log-prob passes where batches are not token-budgeted (Megatron)."""
    ppo_max_token_len_per_gpu: int
    """Token budget of a dynamic micro batch (FSDP actor/ref/rollout log-probs)."""
    sft_micro_batch_per_gpu: int
    sft_max_token_len_per_gpu: int


PRESETS: dict[str, ModelPreset] = {
    "qwen3.5-4b": ModelPreset(
        hf_id="Qwen/Qwen3.5-4B",
        rollout_tp=1,
        megatron_tp=1,
        ppo_micro_batch_per_gpu=1,
        log_prob_micro_batch_per_gpu=2,
        ppo_max_token_len_per_gpu=36864,
        sft_micro_batch_per_gpu=1,
        sft_max_token_len_per_gpu=32768,
    ),
    "qwen3.5-9b": ModelPreset(
        hf_id="Qwen/Qwen3.5-9B",
        rollout_tp=2,
        megatron_tp=2,
        ppo_micro_batch_per_gpu=1,
        log_prob_micro_batch_per_gpu=1,
        ppo_max_token_len_per_gpu=32768,
        sft_micro_batch_per_gpu=1,
        sft_max_token_len_per_gpu=32768,
    ),
}


class LaunchError(UserError):
    """A launch the user must fix: a bad override, a config verl rejects, a missing file."""


Value = str | int | float | bool | None | list[Any]


class _OverrideTable(BaseModel):
    """configs/<kind>.yaml: Hydra keys to values, shared and per engine."""

    model_config = ConfigDict(extra="forbid")

    common: dict[str, Value]
    fsdp: dict[str, Value]
    megatron: dict[str, Value]


def _table(kind: Kind) -> _OverrideTable:
    path = CONFIG_DIR / f"{kind}.yaml"
    return _OverrideTable.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


_BARE = re.compile(r"[A-Za-z0-9_.\-]+")


def format_value(value: Value) -> str:
    """A Python value as Hydra's override grammar reads it back (strings quoted unless plainly safe)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ",".join(format_value(v) for v in value) + "]"
    if _BARE.fullmatch(value) and value not in {"null", "true", "false"}:
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def override_key(override: str) -> str:
    """The config key an override sets, without Hydra's `+`, `++` or `~` prefix."""
    return override.split("=", 1)[0].lstrip("+~")


def merge(*layers: Sequence[str]) -> list[str]:
    """Overrides of several layers as one list: a later layer's override of a key replaces an earlier one in
    place (Hydra would reject `+key` twice, and one line per key reads better in a printed command)."""
    merged: dict[str, str] = {}
    for layer in layers:
        for override in layer:
            if "=" not in override and not override.startswith("~"):
                raise LaunchError(f"override {override!r} is not KEY=VALUE")
            merged[override_key(override)] = override
    return list(merged.values())


def _render(values: Mapping[str, Value]) -> list[str]:
    return [f"{key}={format_value(value)}" for key, value in values.items()]


def _preset(model: str) -> ModelPreset:
    try:
        return PRESETS[model]
    except KeyError:
        raise LaunchError(f"unknown model preset {model!r}; known: {', '.join(sorted(PRESETS))}") from None


def _check_engine(engine: str) -> Engine:
    if engine not in ENGINES:
        raise LaunchError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    return engine


def experiment_name(kind: Kind, model: str, engine: Engine) -> str:
    return f"kopa-{kind}-{model}-{engine}"


def grpo_overrides(
    model: str,
    engine: str,
    data_dir: Path,
    extra: Sequence[str] = (),
) -> list[str]:
    """Hydra overrides of verl's `ppo_trainer` for multi-turn GRPO of a model preset on one 8-GPU node.

    `data_dir` is what `kopa-gen train export` wrote: train/val parquet, tools.yaml, agent_loops.yaml.
    `extra` (the user's overrides) win over everything else."""
    preset = _preset(model)
    eng = _check_engine(engine)
    table = _table("grpo")
    data = data_dir.resolve()
    filled: dict[str, Value] = {
        "data.train_files": str(data / TRAIN_FILE),
        "data.val_files": str(data / VAL_FILE),
        "data.custom_cls.path": RL_DATASET_PATH,
        "data.custom_cls.name": RL_DATASET_NAME,
        "actor_rollout_ref.model.path": preset.hf_id,
        "actor_rollout_ref.rollout.tensor_model_parallel_size": preset.rollout_tp,
        "actor_rollout_ref.rollout.multi_turn.tool_config_path": str(data / TOOLS_FILE),
        "actor_rollout_ref.rollout.agent.agent_loop_config_path": str(data / AGENT_LOOPS_FILE),
        "actor_rollout_ref.rollout.agent.default_agent_loop": AGENT_NAME,
        "reward.custom_reward_function.path": REWARD_PATH,
        "reward.custom_reward_function.name": REWARD_NAME,
        "trainer.experiment_name": experiment_name("grpo", model, eng),
    }
    if eng == "fsdp":
        filled |= {
            "actor_rollout_ref.actor.ppo_max_token_len_per_gpu": preset.ppo_max_token_len_per_gpu,
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": preset.ppo_micro_batch_per_gpu,
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": preset.log_prob_micro_batch_per_gpu,
            "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": preset.log_prob_micro_batch_per_gpu,
        }
    else:
        filled |= {
            "actor_rollout_ref.actor.megatron.tensor_model_parallel_size": preset.megatron_tp,
            "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size": 1,
            "actor_rollout_ref.ref.megatron.tensor_model_parallel_size": preset.megatron_tp,
            "actor_rollout_ref.ref.megatron.pipeline_model_parallel_size": 1,
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": preset.ppo_micro_batch_per_gpu,
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": preset.log_prob_micro_batch_per_gpu,
            "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": preset.log_prob_micro_batch_per_gpu,
        }
    filled |= worker_env()
    engine_table = table.fsdp if eng == "fsdp" else table.megatron
    return merge(_render(table.common), _render(engine_table), _render(filled), extra)


def worker_env() -> dict[str, Value]:
    """KOPA_GEN_CACHE and KOPA_GEN_ROOT for every Ray worker: the cache holds the world database that `launch`
    builds once before verl starts, and the root is the project the agent loop loads (agent_loops.yaml names no
    machine path). Absolute on this machine; on a multi-node cluster they must be the same paths on every node."""
    from kopa_gen.cache import cache_dir

    root = os.environ.get("KOPA_GEN_ROOT") or str(Path.cwd())
    return {
        f"{RAY_ENV}.KOPA_GEN_CACHE": str(cache_dir().resolve()),
        f"{RAY_ENV}.KOPA_GEN_ROOT": str(Path(root).resolve()),
    }


def sft_overrides(
    model: str,
    engine: str,
    data_dir: Path,
    extra: Sequence[str] = (),
) -> list[str]:
    """Hydra overrides of verl's `sft_trainer_engine` for SFT on our gold trajectories (sft_*.parquet)."""
    preset = _preset(model)
    eng = _check_engine(engine)
    table = _table("sft")
    data = data_dir.resolve()
    filled: dict[str, Value] = {
        "data.train_files": str(data / SFT_TRAIN_FILE),
        "data.val_files": str(data / SFT_VAL_FILE),
        "data.custom_cls.path": SFT_DATASET_PATH,
        "data.custom_cls.name": SFT_DATASET_NAME,
        "data.micro_batch_size_per_gpu": preset.sft_micro_batch_per_gpu,
        "data.max_token_len_per_gpu": preset.sft_max_token_len_per_gpu,
        "model.path": preset.hf_id,
        "trainer.experiment_name": experiment_name("sft", model, eng),
    }
    if eng == "megatron":
        filled |= {
            "engine.tensor_model_parallel_size": preset.megatron_tp,
            "engine.pipeline_model_parallel_size": 1,
        }
    engine_table = table.fsdp if eng == "fsdp" else table.megatron
    return merge(_render(table.common), _render(engine_table), _render(filled), extra)


def verl_config_dir() -> Path:
    import verl

    return Path(verl.__file__).parent / "trainer" / "config"


def compose(kind: Kind, overrides: Sequence[str]) -> DictConfig:
    """The full config verl's entry point would see for these overrides, composed from verl's own files."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    name = VERL_GRPO_CONFIG if kind == "grpo" else VERL_SFT_CONFIG
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(verl_config_dir()), version_base=None):
            return hydra_compose(config_name=name, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as error:
        raise LaunchError(f"verl's {name} config rejects the overrides: {error}") from error


def check(kind: Kind, cfg: DictConfig) -> None:
    """Run the validation verl's entry point runs before it starts anything, then ours. Raises LaunchError."""
    if kind == "grpo":
        _verl_check_grpo(cfg)
        _check_grpo_batches(cfg)
    else:
        _verl_check_sft(cfg)
        _check_sft_batches(cfg)


def _verl_check_grpo(cfg: DictConfig) -> None:
    # main_ppo.main: auto_set_device + validate_config; RolloutConfig and AlgoConfig are instantiated by the
    # trainer and workers later, and their __post_init__ checks (e.g. async-only rollout) are cheap to run here
    from hydra.errors import HydraException
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config
    from verl.utils.device import auto_set_device

    try:
        auto_set_device(cfg)
        validate_config(
            config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg)
        )
        omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
        omega_conf_to_dataclass(cfg.algorithm)
    except (AssertionError, ValueError, TypeError, KeyError, AttributeError, HydraException) as error:
        raise LaunchError(
            f"verl's validation rejects the GRPO config: {type(error).__name__}: {error}"
        ) from error


def _verl_check_sft(cfg: DictConfig) -> None:
    # SFTTrainer._build_config: the engine/optim/checkpoint/profiler dataclasses and the profile interval.
    # model (HFModelConfig) loads the tokenizer and HF config in __post_init__, so it is checked only when the
    # model is a local directory (a hub id would be downloaded).
    from hydra.errors import HydraException
    from verl.utils.config import omega_conf_to_dataclass

    try:
        for section in ("engine", "optim", "checkpoint", "profiler"):
            omega_conf_to_dataclass(cfg[section])
        if Path(str(cfg.model.path)).expanduser().is_dir():
            omega_conf_to_dataclass(cfg.model)
        start, end = cfg.trainer.profile_interval
        assert end >= start and (start >= 0 or end < 0), f"bad trainer.profile_interval {[start, end]}"
    except (
        AssertionError,
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
        OSError,
        HydraException,
    ) as error:
        raise LaunchError(
            f"verl's validation rejects the SFT config: {type(error).__name__}: {error}"
        ) from error


def _dp_size(cfg: DictConfig, actor: Any, n_gpus: int) -> int:
    if actor.strategy != "megatron":
        return n_gpus
    mp = (
        actor.megatron.tensor_model_parallel_size
        * actor.megatron.pipeline_model_parallel_size
        * actor.megatron.context_parallel_size
    )
    return max(int(n_gpus // mp), 1)


def _check_grpo_batches(cfg: DictConfig) -> None:
    """What verl checks only without dynamic batch sizes, or only once the workers start."""
    actor = cfg.actor_rollout_ref.actor
    rollout = cfg.actor_rollout_ref.rollout
    n_gpus = cfg.trainer.n_gpus_per_node * cfg.trainer.nnodes
    train, mini, n = cfg.data.train_batch_size, actor.ppo_mini_batch_size, rollout.n
    if mini > train:
        raise LaunchError(
            f"actor_rollout_ref.actor.ppo_mini_batch_size ({mini}) is larger than data.train_batch_size ({train})"
        )
    dp = _dp_size(cfg, actor, n_gpus)
    if (mini * n) % dp:
        raise LaunchError(
            f"actor_rollout_ref.actor.ppo_mini_batch_size × rollout.n ({mini} × {n}) does not split over "
            f"{dp} data-parallel ranks"
        )
    micro = actor.ppo_micro_batch_size_per_gpu
    if micro is not None and micro > mini * n // dp:
        raise LaunchError(
            f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu ({micro}) is larger than the mini batch per "
            f"GPU (ppo_mini_batch_size {mini} × rollout.n {n} / {dp} ranks = {mini * n // dp})"
        )
    if n_gpus % rollout.tensor_model_parallel_size:
        raise LaunchError(
            f"actor_rollout_ref.rollout.tensor_model_parallel_size ({rollout.tensor_model_parallel_size}) "
            f"does not divide the {n_gpus} GPUs"
        )
    if actor.use_dynamic_bsz:
        longest = int(cfg.data.max_prompt_length) + int(cfg.data.max_response_length)
        for key, budget in (
            ("actor_rollout_ref.actor.ppo_max_token_len_per_gpu", actor.ppo_max_token_len_per_gpu),
            (
                "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu",
                rollout.log_prob_max_token_len_per_gpu,
            ),
            (
                "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu",
                cfg.actor_rollout_ref.ref.get("log_prob_max_token_len_per_gpu"),
            ),
        ):
            if budget is not None and int(budget) < longest:
                raise LaunchError(
                    f"{key} ({budget}) is below the longest trajectory (data.max_prompt_length + "
                    f"data.max_response_length = {longest}); verl's sequence balancing asserts on it"
                )
    if rollout.n < 2 and cfg.algorithm.adv_estimator == "grpo":
        raise LaunchError(
            "actor_rollout_ref.rollout.n must be at least 2 for GRPO (advantages are group-relative)"
        )


def _check_sft_batches(cfg: DictConfig) -> None:
    n_gpus = cfg.trainer.n_gpus_per_node * cfg.trainer.nnodes
    dp = n_gpus
    if "tensor_model_parallel_size" in cfg.engine:  # Megatron
        mp = cfg.engine.tensor_model_parallel_size * cfg.engine.pipeline_model_parallel_size
        mp *= cfg.engine.get("context_parallel_size", 1)
        if n_gpus % mp:
            raise LaunchError(f"engine model parallel size ({mp}) does not divide the {n_gpus} GPUs")
        dp = n_gpus // mp
    train, micro = cfg.data.train_batch_size, cfg.data.micro_batch_size_per_gpu
    if cfg.data.use_dynamic_bsz and int(cfg.data.max_token_len_per_gpu) < int(cfg.data.max_length):
        raise LaunchError(
            f"data.max_token_len_per_gpu ({cfg.data.max_token_len_per_gpu}) is below data.max_length "
            f"({cfg.data.max_length}): the longest row cannot fit one micro batch"
        )
    if train % dp:
        raise LaunchError(f"data.train_batch_size ({train}) does not split over {dp} data-parallel ranks")
    if micro > train // dp:
        raise LaunchError(
            f"data.micro_batch_size_per_gpu ({micro}) is larger than the batch per rank "
            f"(data.train_batch_size {train} / {dp} ranks = {train // dp})"
        )


def _module_problem(path: str | None, label: str) -> str | None:
    if not path:
        return None
    if path.startswith("pkg://"):
        module = path.removeprefix("pkg://").replace("/", ".")
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        return None if found else f"{label}: module {module} is not importable"
    file = path.removeprefix("file://")
    return None if Path(file).is_file() else f"{label}: file {file} does not exist"


def _file_problem(path: Any, label: str) -> str | None:
    if path is None:
        return None
    paths = list(path) if not isinstance(path, str) else [path]
    missing = [str(p) for p in paths if not Path(str(p)).expanduser().exists()]
    return f"{label}: {', '.join(missing)} does not exist" if missing else None


def preflight(kind: Kind, cfg: DictConfig) -> list[str]:
    """Files and modules the run will load, and the agent loop it will look up: what is missing, by key."""
    problems: list[str | None] = []
    if kind == "grpo":
        rollout = cfg.actor_rollout_ref.rollout
        agent_loops = rollout.agent.agent_loop_config_path
        problems += [
            _file_problem(cfg.data.train_files, "data.train_files"),
            _file_problem(cfg.data.val_files, "data.val_files"),
            _file_problem(
                rollout.multi_turn.tool_config_path, "actor_rollout_ref.rollout.multi_turn.tool_config_path"
            ),
            _file_problem(agent_loops, "actor_rollout_ref.rollout.agent.agent_loop_config_path"),
            _module_problem(cfg.reward.custom_reward_function.path, "reward.custom_reward_function.path"),
        ]
        if agent_loops and Path(str(agent_loops)).is_file():
            entries = load_text(Path(str(agent_loops)).read_text(encoding="utf-8"), str(agent_loops)) or []
            names = [e.get("name") for e in entries if isinstance(e, dict)]
            default = rollout.agent.default_agent_loop
            if default not in names and default not in {"single_turn_agent", "tool_agent"}:
                problems.append(
                    f"actor_rollout_ref.rollout.agent.default_agent_loop: {default!r} is not registered in "
                    f"{agent_loops} (names: {names})"
                )
    else:
        problems += [
            _file_problem(cfg.data.train_files, "data.train_files"),
            _file_problem(cfg.data.val_files, "data.val_files"),
            _module_problem(cfg.data.custom_cls.path, "data.custom_cls.path"),
        ]
    return [p for p in problems if p is not None]


def command(kind: Kind, overrides: Sequence[str], n_gpus: int, nnodes: int = 1) -> list[str]:
    """The process verl runs as: main_ppo (which starts Ray itself) or sft_trainer under torchrun."""
    if kind == "grpo":
        return [sys.executable, "-m", "verl.trainer.main_ppo", *overrides]
    rendezvous = ["--standalone"] if nnodes == 1 else []
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        *rendezvous,
        f"--nnodes={nnodes}",
        f"--nproc_per_node={n_gpus}",
        "-m",
        "verl.trainer.sft_trainer",
        *overrides,
    ]


def prebuild_world(data_files: Sequence[str]) -> str | None:
    """Build the world database of every sandbox seed the RL rows use, once, here, before verl starts its
    workers (they find it through KOPA_GEN_CACHE; otherwise each rollout worker builds it on first use).
    Returns a line for the terminal, or None when there is nothing to build."""
    import json as _json

    from kopa_gen.project import load_project
    from kopa_gen.world.build import ensure_world

    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - the train extra brings pyarrow
        return None
    seeds: set[int] = set()
    for path in data_files:
        if Path(path).is_file():
            for info in pq.read_table(path, columns=["extra_info"]).column("extra_info").to_pylist():
                seeds.add(int(_json.loads(info["episode"]).get("seed", 0)))
    if not seeds:
        return None
    project = load_project(Path(os.environ["KOPA_GEN_ROOT"]) if "KOPA_GEN_ROOT" in os.environ else None)
    built = [ensure_world(project.world, seed) for seed in sorted(seeds)]
    return f"world database ready for seeds {sorted(seeds)}: " + ", ".join(str(w.path) for w in built)


def launch(
    kind: Kind,
    overrides: Sequence[str],
    dry_run: bool = False,
    out: Path | None = None,
    data_check: bool = True,
) -> int:
    """Compose and check the config, then (`data_check`, once the files exist) load the data through the run's
    dataset classes with the Qwen3.5 tokenizer (kopa_gen.train.preflight); with `dry_run` print the config (or
    write it to `out`) and stop, otherwise pre-build the world and run verl with the same overrides. Returns the
    exit status: 2 when anything must be fixed first."""
    from omegaconf import OmegaConf

    try:
        cfg = compose(kind, overrides)
        check(kind, cfg)
    except LaunchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    problems = preflight(kind, cfg)
    n_gpus, nnodes = int(cfg.trainer.n_gpus_per_node), int(cfg.trainer.nnodes)
    argv = command(kind, overrides, n_gpus, nnodes)
    if dry_run:
        text = OmegaConf.to_yaml(cfg, resolve=True)
        if out is not None:
            out.write_text(text, encoding="utf-8")
            print(f"wrote the composed {kind} config to {out}")
        else:
            print(text)
        print("command: " + " ".join(_shell_quote(a) for a in argv))
    for problem in problems:
        print(f"{'warning' if dry_run else 'error'}: {problem}", file=sys.stderr)
    data_problems: list[str] = []
    if data_check and not problems:
        from kopa_gen.train.preflight import check_data

        report = check_data(kind, cfg)
        print("\n".join(report.lines))
        data_problems = report.problems
        for problem in data_problems:
            print(f"error: {problem}", file=sys.stderr)
    if dry_run:
        if data_problems:
            print(f"{kind} config: composed and passed verl's validation, but the data check failed")
            return 2
        print(
            f"{kind} config: composed and passed verl's validation" + (" (see warnings)" if problems else "")
        )
        return 0
    if problems or data_problems:
        return 2
    if kind == "grpo":
        line = prebuild_world([*_paths(cfg.data.train_files), *_paths(cfg.data.val_files)])
        if line:
            print(line)
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.call(argv, env=env)


def _paths(value: Any) -> list[str]:
    return [str(value)] if isinstance(value, str) else [str(v) for v in value]


def _shell_quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)

"""Launch configs of `kopa-gen train grpo|sft` against verl's own config files and validation (CPU only)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("verl")
pytest.importorskip("hydra")

from kopa_gen.language.settings import TOOL_RESULT_CHARS
from kopa_gen.train import launch
from kopa_gen.train.contract import AGENT_NAME

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Placeholders of what `kopa-gen train export` writes, plus two RL rows of the contract's shape."""
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    out = tmp_path_factory.mktemp("export")
    rows = [
        {
            "data_source": "kopa/bench",
            "agent_name": AGENT_NAME,
            "prompt": [
                {"role": "system", "content": "도구를 써서 답하세요."},
                {"role": "user", "content": f"서울특별시 송파구 학교 {i}곳의 이름은?"},
            ],
            "ability": "education",
            "reward_model": {"style": "rule", "ground_truth": "{}"},
            "extra_info": {
                "index": i,
                "split": "train",
                "task_id": f"t{i}",
                "tool_selection": ["a"],
                "episode": "{}",
            },
        }
        for i in range(4)
    ]
    pq.write_table(pa.Table.from_pylist(rows), out / launch.TRAIN_FILE)
    pq.write_table(pa.Table.from_pylist(rows), out / launch.VAL_FILE)
    for name in (launch.SFT_TRAIN_FILE, launch.SFT_VAL_FILE):
        (out / name).write_bytes(b"")
    (out / launch.TOOLS_FILE).write_text("tools: []\n", encoding="utf-8")
    (out / launch.AGENT_LOOPS_FILE).write_text(
        f"- name: {AGENT_NAME}\n  _target_: kopa_gen.train.agent_loop.KopaToolAgentLoop\n", encoding="utf-8"
    )
    return out


CASES = [
    (kind, model, engine) for kind in launch.KINDS for model in launch.PRESETS for engine in launch.ENGINES
]


@pytest.mark.parametrize(("kind", "model", "engine"), CASES)
def test_presets_compose_and_pass_verl_validation(
    kind: launch.Kind, model: str, engine: str, data_dir: Path
) -> None:
    build = launch.grpo_overrides if kind == "grpo" else launch.sft_overrides
    cfg = launch.compose(kind, build(model, engine, data_dir))
    launch.check(kind, cfg)
    if kind == "grpo":
        actor = cfg.actor_rollout_ref.actor
        assert actor.strategy == ("megatron" if engine == "megatron" else "fsdp")
        assert cfg.actor_rollout_ref.model.path == launch.PRESETS[model].hf_id
        assert cfg.trainer.n_gpus_per_node == 8 and cfg.trainer.nnodes == 1
    else:
        assert cfg.model.path == launch.PRESETS[model].hf_id
        assert cfg.engine._target_.endswith(
            "McoreEngineConfig" if engine == "megatron" else "FSDPEngineConfig"
        )


def test_grpo_sets_the_multi_turn_keys_we_depend_on(data_dir: Path) -> None:
    cfg = launch.compose("grpo", launch.grpo_overrides("qwen3.5-9b", "fsdp", data_dir))
    rollout = cfg.actor_rollout_ref.rollout
    assert cfg.algorithm.adv_estimator == "grpo"
    assert rollout.name == "vllm" and rollout.mode == "async" and rollout.n == 8
    assert rollout.multi_turn.enable and rollout.multi_turn.format == "qwen3_coder"
    assert rollout.multi_turn.max_parallel_calls == 4  # verl's default 1 drops every call but the first
    # the tool-result budget of eval and the SFT export (verl's default 256 would cut a page mid-row)
    assert rollout.multi_turn.max_tool_response_length == TOOL_RESULT_CHARS
    assert rollout.multi_turn.max_assistant_turns == 12
    assert rollout.multi_turn.tool_config_path == str(data_dir.resolve() / launch.TOOLS_FILE)
    assert rollout.agent.agent_loop_config_path == str(data_dir.resolve() / launch.AGENT_LOOPS_FILE)
    assert rollout.agent.default_agent_loop == AGENT_NAME
    assert cfg.data.tool_config_path == rollout.multi_turn.tool_config_path  # verl's interpolation
    assert cfg.data.apply_chat_template_kwargs.enable_thinking is False
    assert cfg.reward.custom_reward_function.path == launch.REWARD_PATH == "pkg://kopa_gen.train.reward"
    assert cfg.reward.custom_reward_function.name == "compute_score"
    actor = cfg.actor_rollout_ref.actor
    assert actor.use_kl_loss and actor.kl_loss_type == "low_var_kl" and actor.kl_loss_coef == 0.001
    assert rollout.tensor_model_parallel_size == launch.PRESETS["qwen3.5-9b"].rollout_tp
    assert launch.preflight("grpo", cfg) == []


def test_sft_uses_our_dataset_class(data_dir: Path) -> None:
    cfg = launch.compose("sft", launch.sft_overrides("qwen3.5-4b", "megatron", data_dir))
    assert cfg.data.custom_cls.path == "pkg://kopa_gen.train.sft_dataset"
    assert cfg.data.custom_cls.name == launch.SFT_DATASET_NAME
    assert (cfg.data.messages_key, cfg.data.tools_key) == ("messages", "tools")
    assert cfg.data.train_files == str(data_dir.resolve() / launch.SFT_TRAIN_FILE)
    assert cfg.engine.tensor_model_parallel_size == launch.PRESETS["qwen3.5-4b"].megatron_tp


def test_user_overrides_win_and_replace_ours(data_dir: Path) -> None:
    extra = ["actor_rollout_ref.rollout.n=16", "+data.apply_chat_template_kwargs.enable_thinking=true"]
    overrides = launch.grpo_overrides("qwen3.5-4b", "fsdp", data_dir, extra)
    assert sum(o.startswith("actor_rollout_ref.rollout.n=") for o in overrides) == 1
    cfg = launch.compose("grpo", overrides)
    assert cfg.actor_rollout_ref.rollout.n == 16
    assert cfg.data.apply_chat_template_kwargs.enable_thinking is True


def test_unknown_key_is_named(data_dir: Path) -> None:
    overrides = launch.grpo_overrides(
        "qwen3.5-4b", "fsdp", data_dir, ["actor_rollout_ref.actor.ppo_mini_batchsize=8"]
    )
    with pytest.raises(launch.LaunchError, match=r"actor_rollout_ref\.actor\.ppo_mini_batchsize"):
        launch.compose("grpo", overrides)


@pytest.mark.parametrize("engine", launch.ENGINES)
def test_mini_batch_larger_than_train_batch_is_named(engine: str, data_dir: Path) -> None:
    overrides = launch.grpo_overrides(
        "qwen3.5-4b", engine, data_dir, ["actor_rollout_ref.actor.ppo_mini_batch_size=128"]
    )
    cfg = launch.compose("grpo", overrides)
    with pytest.raises(launch.LaunchError, match=r"ppo_mini_batch_size \(128\)"):
        launch.check("grpo", cfg)


def test_micro_batch_larger_than_mini_batch_is_named(data_dir: Path) -> None:
    extra = [
        "actor_rollout_ref.actor.ppo_mini_batch_size=1",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
    ]
    cfg = launch.compose("grpo", launch.grpo_overrides("qwen3.5-4b", "fsdp", data_dir, extra))
    with pytest.raises(launch.LaunchError, match=r"ppo_micro_batch_size_per_gpu \(4\)"):
        launch.check("grpo", cfg)


def test_missing_micro_batch_is_caught_by_verl(data_dir: Path) -> None:
    extra = ["actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=null"]
    cfg = launch.compose("grpo", launch.grpo_overrides("qwen3.5-4b", "megatron", data_dir, extra))
    with pytest.raises(launch.LaunchError, match=r"log_prob_micro_batch_size"):
        launch.check("grpo", cfg)


def test_sft_batch_that_does_not_split_is_named(data_dir: Path) -> None:
    cfg = launch.compose(
        "sft", launch.sft_overrides("qwen3.5-4b", "fsdp", data_dir, ["data.train_batch_size=12"])
    )
    with pytest.raises(launch.LaunchError, match=r"data\.train_batch_size \(12\)"):
        launch.check("sft", cfg)


def test_unknown_preset_and_engine() -> None:
    with pytest.raises(launch.LaunchError, match=r"qwen3\.5-4b"):
        launch.grpo_overrides("qwen9", "fsdp", Path("."))
    with pytest.raises(launch.LaunchError, match="megatron"):
        launch.sft_overrides("qwen3.5-4b", "deepspeed", Path("."))


def test_preflight_names_missing_files(tmp_path: Path) -> None:
    cfg = launch.compose("grpo", launch.grpo_overrides("qwen3.5-4b", "fsdp", tmp_path))
    problems = "\n".join(launch.preflight("grpo", cfg))
    assert "data.train_files" in problems and "multi_turn.tool_config_path" in problems
    assert "agent.agent_loop_config_path" in problems


def test_dry_run_prints_the_config_and_the_command(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the placeholder SFT files are not data: the data check has its own tests (test_train_preflight.py)
    rc = launch.launch(
        "sft", launch.sft_overrides("qwen3.5-9b", "fsdp", data_dir), dry_run=True, data_check=False
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "custom_cls:" in out and "torch.distributed.run" in out and "verl.trainer.sft_trainer" in out
    assert "--nproc_per_node=8" in out


def test_launch_rejects_before_running(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    overrides = launch.grpo_overrides("qwen3.5-4b", "fsdp", data_dir, ["trainer.n_gpus_per_node=3"])
    assert launch.launch("grpo", overrides, dry_run=False) == 2
    assert "data-parallel ranks" in capsys.readouterr().err


def test_gpu_check_dry_run(data_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    gpu_check = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check"] = gpu_check
    spec.loader.exec_module(gpu_check)
    rc = gpu_check.main(["--data-dir", str(data_dir), "--work-dir", str(tmp_path), "--dry-run"])
    assert rc == 0
    overrides = (tmp_path / "overrides.txt").read_text(encoding="utf-8").splitlines()
    assert "trainer.total_training_steps=1" in overrides and "trainer.n_gpus_per_node=1" in overrides
    assert f"actor_rollout_ref.model.path={tmp_path / 'model'}" in overrides
    assert (tmp_path / "model" / "config.json").is_file()


@pytest.mark.parametrize("model", list(launch.PRESETS))
def test_megatron_presets_compute_padded_with_vanilla_mbridge(model: str, data_dir: Path) -> None:
    """Qwen3.5's linear-attention layers get no THD packing under Megatron (verl's own Qwen3.5 examples)."""
    grpo = launch.compose("grpo", launch.grpo_overrides(model, "megatron", data_dir))
    assert grpo.actor_rollout_ref.model.use_remove_padding is False
    assert grpo.actor_rollout_ref.actor.megatron.use_remove_padding is False
    assert grpo.actor_rollout_ref.actor.megatron.vanilla_mbridge is True
    sft = launch.compose("sft", launch.sft_overrides(model, "megatron", data_dir))
    assert sft.model.use_remove_padding is False and sft.engine.vanilla_mbridge is True
    fsdp = launch.compose("grpo", launch.grpo_overrides(model, "fsdp", data_dir))
    assert fsdp.actor_rollout_ref.model.use_remove_padding is True


@pytest.mark.parametrize("model", list(launch.PRESETS))
def test_fsdp_token_budgets_hold_the_longest_trajectory(model: str, data_dir: Path) -> None:
    cfg = launch.compose("grpo", launch.grpo_overrides(model, "fsdp", data_dir))
    longest = cfg.data.max_prompt_length + cfg.data.max_response_length
    assert cfg.actor_rollout_ref.actor.ppo_max_token_len_per_gpu >= longest
    assert cfg.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu >= longest
    assert cfg.actor_rollout_ref.rollout.prompt_length == cfg.data.max_prompt_length
    sft = launch.compose("sft", launch.sft_overrides(model, "fsdp", data_dir))
    assert sft.data.max_token_len_per_gpu >= sft.data.max_length


def test_a_budget_below_the_longest_trajectory_is_named(data_dir: Path) -> None:
    overrides = launch.grpo_overrides(
        "qwen3.5-9b", "fsdp", data_dir, ["actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24576"]
    )
    with pytest.raises(launch.LaunchError, match=r"ppo_max_token_len_per_gpu \(24576\) is below"):
        launch.check("grpo", launch.compose("grpo", overrides))
    sft = launch.sft_overrides("qwen3.5-9b", "fsdp", data_dir, ["data.max_token_len_per_gpu=8192"])
    with pytest.raises(launch.LaunchError, match=r"below data\.max_length"):
        launch.check("sft", launch.compose("sft", sft))


def test_workers_get_the_cache_and_the_project_not_a_path_in_the_data(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kopa_gen.train.agent_loop import write_agent_loop_config

    monkeypatch.setenv("KOPA_GEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KOPA_GEN_ROOT", str(tmp_path / "project"))
    cfg = launch.compose("grpo", launch.grpo_overrides("qwen3.5-4b", "fsdp", data_dir))
    env = cfg.ray_kwargs.ray_init.runtime_env.env_vars
    expected = {"KOPA_GEN_CACHE": str(tmp_path / "cache"), "KOPA_GEN_ROOT": str(tmp_path / "project")}
    assert {key: env[key] for key in expected} == expected
    text = write_agent_loop_config(tmp_path / "agent_loops.yaml").read_text(encoding="utf-8")
    assert "project_root" not in text and str(ROOT) not in text

"""One GRPO step on one GPU, end to end, in a few minutes: the check to run when a GPU machine is lent.

It plays a handful of our exported tasks through verl's real path (Ray, vLLM async rollout, our agent loop and
tools, our reward function, the FSDP actor and reference, one policy update) with a tiny randomly initialised
Qwen3-architecture model and a tokenizer trained here on the tasks' own text, so nothing is downloaded. The
model is a test fixture: its rewards mean nothing; the check passes when verl finishes step 1 and exits 0.

    python scripts/gpu_check.py --data-dir DIR     # DIR: what `kopa-gen train export` wrote
    python scripts/gpu_check.py --data-dir DIR --dry-run   # CPU: build model/tokenizer/data, compose, validate

The config comes from kopa_gen.train.launch.grpo_overrides (the same one `kopa-gen train grpo` uses) with
small sizes on top, and goes through the same compose + verl validation before anything is launched. Missing
packages are reported with the version to install, and the script exits 1.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kopa_gen.train import launch, tiny

TASKS = 4
ROLLOUT_N = 4
MAX_PROMPT = 16384
MAX_RESPONSE = 512
VOCAB = 8192
STEP_TIMEOUT_S = 420
INSTALL_VERL = 'pip install "verl[vllm]==0.9.1"   # vllm 0.24.0, torch 2.11.0, TransferQueue, ray'


@dataclass(frozen=True)
class Requirement:
    module: str
    dist: str
    minimum: str | None
    install: str
    needed: bool = True
    runtime_only: bool = False
    """Needed to run the step, not to compose and validate it (--dry-run skips it)."""


REQUIREMENTS = [
    Requirement("torch", "torch", "2.6", INSTALL_VERL),
    Requirement("verl", "verl", "0.9.1", INSTALL_VERL),
    Requirement(
        "vllm", "vllm", "0.18", INSTALL_VERL + "   (verl's vLLM rollout needs vllm>=0.18)", runtime_only=True
    ),
    Requirement("ray", "ray", "2.41", INSTALL_VERL),
    Requirement(
        "transfer_queue", "TransferQueue", "0.1.10", 'pip install "TransferQueue>=0.1.10"', runtime_only=True
    ),
    Requirement("transformers", "transformers", "5.5.3", INSTALL_VERL),
    Requirement("tokenizers", "tokenizers", None, INSTALL_VERL),
    Requirement("pyarrow", "pyarrow", "19", 'pip install "pyarrow>=19"'),
    Requirement(
        "flash_attn",
        "flash-attn",
        None,
        'pip install "verl[fsdp]==0.9.1"   (flash-attn 2.8.3; real runs need it)',
        needed=False,
    ),
]


def _version_tuple(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.split("+")[0].split("."):
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def missing_packages(gpu: bool) -> tuple[list[str], list[str]]:
    """(errors, warnings): what is absent or too old, each with the command that installs it."""
    errors: list[str] = []
    warnings: list[str] = []
    for req in REQUIREMENTS:
        if req.runtime_only and not gpu:
            continue
        sink = errors if req.needed else warnings
        if importlib.util.find_spec(req.module) is None:
            sink.append(f"missing {req.dist}{'>=' + req.minimum if req.minimum else ''}: {req.install}")
            continue
        try:
            have = importlib.metadata.version(req.dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        if req.minimum and _version_tuple(have) < _version_tuple(req.minimum):
            sink.append(f"{req.dist} {have} is older than {req.minimum}: {req.install}")
    if gpu and not errors:
        import torch

        if not torch.cuda.is_available():
            errors.append(
                f"torch {torch.__version__} sees no CUDA device (a CPU-only build?): {INSTALL_VERL}"
            )
    return errors, warnings


def subset(data_dir: Path, out: Path, tasks: int) -> list[dict[str, Any]]:
    """The first `tasks` RL rows of train.parquet (also used as val), with tools.yaml and agent_loops.yaml."""
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    for name in (launch.TOOLS_FILE, launch.AGENT_LOOPS_FILE):
        if not (data_dir / name).is_file():
            raise SystemExit(
                f"error: {data_dir / name} is missing; run `kopa-gen train export` into {data_dir}"
            )
        shutil.copy(data_dir / name, out / name)
    source = data_dir / launch.TRAIN_FILE
    if not source.is_file():
        raise SystemExit(f"error: {source} is missing; run `kopa-gen train export` into {data_dir}")
    table = pq.read_table(source)
    if table.num_rows < tasks:
        raise SystemExit(f"error: {source} has {table.num_rows} rows, the check needs {tasks}")
    small = table.slice(0, tasks)
    pq.write_table(small, out / launch.TRAIN_FILE)
    pq.write_table(small, out / launch.VAL_FILE)
    rows: list[dict[str, Any]] = small.to_pylist()
    return rows


# Qwen3.5's tool-call format (verl's `qwen3_coder` parser), tools listed as JSON in the system turn
SPECIALS = (*tiny.SPECIALS, "<tool_response>", "</tool_response>", "<think>", "</think>")


def corpus(rows: list[dict[str, Any]], tools_yaml: Path) -> list[str]:
    texts = [tools_yaml.read_text(encoding="utf-8")]
    for row in rows:
        texts += [str(m.get("content", "")) for m in row["prompt"]]
        texts.append(json.dumps(row.get("extra_info", {}), ensure_ascii=False))
    return texts * 4


def build_tokenizer(texts: list[str], out: Path) -> Any:
    """A byte-level BPE trained on the tasks' own text, so Korean prompts and JSON schemas stay short."""
    return tiny.offline_tokenizer(texts, out, tiny.QWEN35_TEMPLATE, VOCAB, SPECIALS)


def build_model(tokenizer: Any, out: Path) -> None:
    """A 2-layer Qwen3 with random weights, saved next to the tokenizer."""
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    vocab = (len(tokenizer) + 63) // 64 * 64
    eos, pad = tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen3Config(
        vocab_size=vocab,
        hidden_size=128,
        intermediate_size=384,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=MAX_PROMPT + MAX_RESPONSE + 1024,
        tie_word_embeddings=True,
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=pad,
    )
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(str(out))
    GenerationConfig(eos_token_id=eos, pad_token_id=pad, bos_token_id=eos).save_pretrained(str(out))


def check_overrides(model_dir: Path, data_dir: Path, work: Path, flash_attn: bool) -> list[str]:
    """`kopa-gen train grpo`'s FSDP overrides, shrunk to one GPU, one step, a tiny model and short responses."""
    small: list[str] = [
        f"actor_rollout_ref.model.path={model_dir}",
        f"data.train_batch_size={TASKS}",
        f"data.max_prompt_length={MAX_PROMPT}",
        f"data.max_response_length={MAX_RESPONSE}",
        "data.dataloader_num_workers=0",
        f"actor_rollout_ref.rollout.n={ROLLOUT_N}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={TASKS}",
        f"actor_rollout_ref.actor.ppo_max_token_len_per_gpu={MAX_PROMPT + MAX_RESPONSE}",
        "actor_rollout_ref.actor.fsdp_config.use_torch_compile=false",
        "actor_rollout_ref.ref.fsdp_config.param_offload=false",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
        "actor_rollout_ref.rollout.gpu_memory_utilization=0.3",
        "actor_rollout_ref.rollout.enforce_eager=true",
        "actor_rollout_ref.rollout.max_num_seqs=32",
        f"actor_rollout_ref.rollout.max_num_batched_tokens={MAX_PROMPT + MAX_RESPONSE}",
        "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=2",
        "actor_rollout_ref.rollout.agent.num_workers=1",
        "reward.num_workers=1",
        "trainer.n_gpus_per_node=1",
        "trainer.nnodes=1",
        "trainer.total_training_steps=1",
        "trainer.total_epochs=1",
        "trainer.val_before_train=false",
        "trainer.test_freq=-1",
        "trainer.save_freq=-1",
        "trainer.resume_mode=disable",
        f"trainer.default_local_dir={work / 'checkpoints'}",
        "trainer.experiment_name=kopa-gpu-check",
        "trainer.logger=[console]",
    ]
    if not flash_attn:
        small += [
            "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
            "actor_rollout_ref.model.use_remove_padding=false",
        ]
    return launch.grpo_overrides("qwen3.5-4b", "fsdp", data_dir, extra=small)


def compose_and_check(overrides: list[str]) -> Any:
    from verl.utils.config import omega_conf_to_dataclass

    cfg = launch.compose("grpo", overrides)
    launch.check("grpo", cfg)
    problems = launch.preflight("grpo", cfg)
    if problems:
        raise launch.LaunchError("; ".join(problems))
    # the tiny model is local, so its HFModelConfig (tokenizer, HF config, chat template) loads here too
    omega_conf_to_dataclass(cfg.actor_rollout_ref.model)
    return cfg


def run_step(overrides: list[str], log: Path, timeout: int) -> int:
    argv = launch.command("grpo", overrides, n_gpus=1)
    print("running: " + " ".join(argv[:3]) + f" ... ({len(overrides)} overrides), log: {log}", flush=True)
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert process.stdout is not None
        try:
            deadline = started + timeout
            for line in process.stdout:
                sink.write(line)
                if "step:" in line or "Error" in line or "Traceback" in line:
                    print(line.rstrip()[:400], flush=True)
                if time.perf_counter() > deadline:
                    raise subprocess.TimeoutExpired(argv, timeout)
            rc = process.wait(timeout=max(deadline - time.perf_counter(), 1))
        except subprocess.TimeoutExpired:
            process.kill()
            print(f"error: the GRPO step did not finish within {timeout} s (log: {log})", file=sys.stderr)
            return 124
    text = log.read_text(encoding="utf-8", errors="replace")
    print(f"verl exited {rc} after {time.perf_counter() - started:.0f} s")
    if rc == 0 and "step:1" not in text:
        print("error: verl exited 0 but never logged step:1", file=sys.stderr)
        return 1
    if rc != 0:
        print("--- last 60 lines of the log ---\n" + "\n".join(text.splitlines()[-60:]), file=sys.stderr)
    return rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, required=True, help="output of `kopa-gen train export`")
    parser.add_argument(
        "--work-dir", type=Path, help="where to build model/tokenizer/data (default: a temp dir)"
    )
    parser.add_argument("--tasks", type=int, default=TASKS, help=f"RL rows to play (default {TASKS})")
    parser.add_argument("--timeout", type=int, default=STEP_TIMEOUT_S, help="seconds for the verl step")
    parser.add_argument("--dry-run", action="store_true", help="build and validate on CPU, do not launch")
    args = parser.parse_args(argv)

    errors, warnings = missing_packages(gpu=not args.dry_run)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if errors:
        return 1
    flash_attn = importlib.util.find_spec("flash_attn") is not None

    work = args.work_dir or Path(tempfile.mkdtemp(prefix="kopa-gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    data = work / "data"
    rows = subset(args.data_dir.resolve(), data, args.tasks)
    tokenizer = build_tokenizer(corpus(rows, data / launch.TOOLS_FILE), work / "model")
    build_model(tokenizer, work / "model")
    overrides = check_overrides(work / "model", data, work, flash_attn)
    overrides = launch.merge(overrides, [f"data.train_batch_size={args.tasks}"])
    overrides = launch.merge(overrides, [f"actor_rollout_ref.actor.ppo_mini_batch_size={args.tasks}"])
    try:
        compose_and_check(overrides)
    except launch.LaunchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"built and validated in {time.perf_counter() - started:.1f} s under {work}")
    (work / "overrides.txt").write_text("\n".join(overrides) + "\n", encoding="utf-8")
    if args.dry_run:
        print("dry run: config composed and passed verl's validation; not launching")
        return 0
    return run_step(overrides, work / "verl.log", args.timeout)


if __name__ == "__main__":
    sys.exit(main())

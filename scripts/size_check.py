"""Memory and speed of one training micro batch of a Qwen3.5-shaped model with random weights, on one GPU: the
sizing check for the presets' token budgets (kopa_gen/train/launch.py PRESETS), to run when a GPU is lent.

It builds `Qwen3_5ForCausalLM` from transformers' own Qwen3.5 text config (the default is the 9B shape: hidden
4096, 32 layers, 3 of 4 layers Gated DeltaNet, 248,320-row vocabulary; `--hidden/--layers/--intermediate` give
others), in bf16 with gradient checkpointing, and runs forward + backward of one packed micro batch of `--tokens`
tokens (default: the 9B preset's ppo_max_token_len_per_gpu) `--steps` times, printing peak memory and tokens/s.

What it proves: whether one micro batch of that many tokens, with full logits over Qwen3.5's vocabulary, fits
next to an unsharded copy of the weights and gradients, and how fast the kernels installed on the node run.
What it does not: FSDP sharding over 8 GPUs (the weights, gradients and optimizer state there are 1/8 each, and
there is no optimizer step here), verl's chunked entropy (entropy_from_logits_with_chunking), vLLM's memory
(rollout.gpu_memory_utilization), Megatron. Random weights: the loss means nothing.

    python scripts/size_check.py                       # one GPU
    python scripts/size_check.py --dry-run             # CPU: a tiny shape, to check the script itself

UNTESTED ON A GPU so far (only --dry-run has run, on CPU).
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    from kopa_gen.train.launch import PRESETS

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=int, default=PRESETS["qwen3.5-9b"].ppo_max_token_len_per_gpu)
    parser.add_argument("--hidden", type=int)
    parser.add_argument("--intermediate", type=int)
    parser.add_argument("--layers", type=int)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--dry-run", action="store_true", help="CPU, a tiny shape, 256 tokens")
    args = parser.parse_args(argv)

    import torch
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig

    config = Qwen3_5TextConfig()
    if args.dry_run:
        args.hidden, args.intermediate, args.layers, args.tokens, args.steps = 64, 128, 4, 256, 1
    if args.hidden:
        config.hidden_size = args.hidden
        config.num_attention_heads = (
            max(1, args.hidden // config.head_dim) if args.hidden >= config.head_dim else 1
        )
        config.num_key_value_heads = 1
    if args.intermediate:
        config.intermediate_size = args.intermediate
    if args.layers:
        config.num_hidden_layers = args.layers
        config.layer_types = [config.layer_types[i % len(config.layer_types)] for i in range(args.layers)]
    device = "cpu" if args.dry_run else "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        print("error: no CUDA device; run with --dry-run on a CPU", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    model = Qwen3_5ForCausalLM(config).to(device=device, dtype=torch.bfloat16)
    model.gradient_checkpointing_enable()
    model.train()
    params = sum(p.numel() for p in model.parameters())
    print(
        f"Qwen3.5-shaped model: {params / 1e9:.2f} B parameters, hidden {config.hidden_size}, "
        f"{config.num_hidden_layers} layers, vocabulary {config.vocab_size}; micro batch {args.tokens} tokens"
    )
    ids = torch.randint(0, config.vocab_size, (1, args.tokens), device=device)
    for step in range(args.steps):
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
            torch.cuda.synchronize()
        start = time.perf_counter()
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        model.zero_grad(set_to_none=True)
        if device == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        peak = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else float("nan")
        print(
            f"step {step}: {seconds:.2f} s, {args.tokens / seconds:,.0f} tokens/s (forward + backward), "
            f"peak {peak:.1f} GiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

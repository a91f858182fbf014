"""EDGE's trajectory patterns, one module each, registered by name. A pattern is a recipe: from the looked-up
entity it moves the focus with the chain's operators (kopa_gen/edge/builder.py) and asks the question
(kopa_gen/edge/asks.py). A chain's type is read from what it did, not from the recipe's name: Seq when no
junction is a fan-out or a reduction and no step pairs or branches; one feature (fan, drv, sem, cmp, cond) gives
its name; two or more give Mixed (the paper's types)."""

from __future__ import annotations

import random
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, cast, get_args

from kopa_gen.edge.asks import Ask
from kopa_gen.edge.builder import Chain, Focus
from kopa_gen.language.synthesis import TaskType
from kopa_gen.plugins import Registry

Build = Callable[[Chain, Focus, random.Random], Coroutine[Any, Any, Ask]]


@dataclass(frozen=True)
class Pattern:
    name: str
    build: Build
    description: str


PATTERNS: Registry[Pattern] = Registry(
    "EDGE pattern", "kopa_gen.edge.patterns", hint="add a module to kopa_gen/edge/patterns/"
)


def pattern(name: str, description: str) -> Callable[[Build], Build]:
    """Register `build` as the recipe of pattern `name`."""

    def wrap(build: Build) -> Build:
        PATTERNS.add(name, Pattern(name, build, description), f"{build.__module__}.{build.__qualname__}")
        return build

    return wrap


def chain_type(features: set[str]) -> TaskType:
    """The paper's type of a built chain from its features."""
    if not features:
        return "seq"
    if len(features) == 1:
        only = next(iter(features))
        assert only in get_args(TaskType), only
        return cast(TaskType, only)
    return "mixed"

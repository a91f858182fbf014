from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from kopa_gen.project import Project, load_project
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.build import BuiltWorld, ensure_world

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def repository_project() -> Project:
    """The repository's project, loaded once: tests read platforms, tools and tasks from it (no lists of their
    own), so a new spec-only platform is tested with no test edit."""
    return load_project(ROOT)


@pytest.fixture(scope="session")
def project() -> Project:
    return repository_project()


@pytest.fixture(scope="session")
def world(project: Project) -> BuiltWorld:
    return ensure_world(project.world)


@pytest.fixture
def sandbox(project: Project, world: BuiltWorld) -> Iterator[Sandbox]:
    yield open_sandbox(project)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kopa_gen.project import Project, load_project
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.build import BuiltWorld, ensure_world
from kopa_gen.world.lazy import open_world

ROOT = Path(os.environ.get("KOPA_GEN_TEST_ROOT") or Path(__file__).resolve().parent.parent)
"""The project under test: this repository, or a platform author's own project folder (`KOPA_GEN_TEST_ROOT=DIR
python -m pytest tests/test_every_tool.py ...` runs the platform tests on its platforms, after `kopa-gen build`)."""


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


@pytest.fixture(scope="session")
def world_db(world: BuiltWorld) -> Iterator[sqlite3.Connection]:
    """The built world, read-only, for tests that walk its tables."""
    conn = open_world(world.path)
    yield conn
    conn.close()


@pytest.fixture
def sandbox(project: Project, world: BuiltWorld) -> Iterator[Sandbox]:
    yield open_sandbox(project)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def declared_tools(project: Project, pid: str) -> tuple[str, ...]:
    """The platform's tools served from the declared world: its hand-written operations, without the catalog's
    synthesised ones (hundreds on fsc), which a small phase A would spend its iterations on."""
    return tuple(
        op.tool
        for op in project.platform(pid).operations
        if op.kopa.source is not None and not op.kopa.source.table.startswith("auto_")
    )

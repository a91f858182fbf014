"""A clean project load is remembered under the digest of the files it was made from: the next load reads it back,
and any edit to a spec (or to this package) loads afresh. A broken load is never remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from kopa_gen.cache import cache_dir
from kopa_gen.language.diagnostics import SpecError
from kopa_gen.project import load_project, project_key
from tests.toyspec import spec_copy, write_project

SPEC = "specs/platforms/toy/openapi.yaml"


def summary(root: Path) -> str:
    op = load_project(root).platforms[0].operations[0]
    return op.summary


def test_an_edited_spec_is_loaded_afresh_and_the_same_files_are_read_back(tmp_path: Path) -> None:
    write_project(tmp_path)
    first = summary(tmp_path)
    remembered = cache_dir() / "projects" / f"{project_key(tmp_path.resolve(), None)}.pickle"
    assert remembered.is_file()
    assert summary(tmp_path) == first
    path = tmp_path / SPEC
    path.write_text(path.read_text(encoding="utf-8").replace(first, "과일 목록 (고침)", 1), encoding="utf-8")
    assert project_key(tmp_path.resolve(), None) != remembered.stem
    assert summary(tmp_path) == "과일 목록 (고침)"


def test_a_damaged_cache_file_is_ignored(tmp_path: Path) -> None:
    write_project(tmp_path)
    remembered = cache_dir() / "projects" / f"{project_key(tmp_path.resolve(), None)}.pickle"
    remembered.parent.mkdir(parents=True, exist_ok=True)
    remembered.write_bytes(b"not a pickle")
    assert summary(tmp_path) == "과일 목록"
    assert remembered.read_bytes() != b"not a pickle"  # rewritten by the clean load


def test_a_broken_project_is_not_remembered(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["paths"] = {"/fruits": {"get": {"summary": "과일 목록"}}}  # no operationId, no responses
    write_project(tmp_path, spec)
    for _ in range(2):
        with pytest.raises(SpecError):
            load_project(tmp_path)
    assert not (cache_dir() / "projects" / f"{project_key(tmp_path.resolve(), None)}.pickle").exists()


def test_a_cached_load_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    """The cached project is read with cyclic collection paused and then frozen out of its reach: the collector
    must come back on (or stay off, for a caller who turned it off) either way."""
    import gc

    write_project(tmp_path)
    load_project(tmp_path)  # parsed and remembered
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    load_project(tmp_path)  # read back
    assert gc.isenabled()
    assert gc.get_freeze_count() > frozen  # the project read back is out of the collector's walks
    gc.disable()
    try:
        load_project(tmp_path)
        assert not gc.isenabled()
    finally:
        gc.enable()

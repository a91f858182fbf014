"""Request parameters are read as the real services read them: integers in ASCII digits only (Python's int() would
take "1_0", " 5" and Arabic-Indic digits), and string lengths checked at both ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from kopa_gen.project import load_project
from kopa_gen.sandbox.emulator import check_params
from tests.toyspec import spec_copy, write_project


@pytest.fixture
def toy(tmp_path: Path):  # type: ignore[no-untyped-def]
    spec = spec_copy()
    params = spec["paths"]["/fruits"]["get"]["parameters"]
    params[0]["schema"] = {"type": "string", "minLength": 2, "maxLength": 5}
    spec["x-kopa"]["answers"]["bad_value"] = "10"
    project = load_project(write_project(tmp_path, spec))
    platform = project.platform("toy")
    return platform, platform.operations[0]


@pytest.mark.parametrize("value", ["1_0", " 5", "5 ", "١٢", "+3", "0x10", "1e2", "٣"])
def test_integers_in_ascii_digits_only(toy, value: str) -> None:  # type: ignore[no-untyped-def]
    platform, op = toy
    assert check_params(platform, op, {"pageNo": value}) == "invalid_param"


@pytest.mark.parametrize("value", ["1", "10", "007"])
def test_plain_integers_pass(toy, value: str) -> None:  # type: ignore[no-untyped-def]
    platform, op = toy
    assert check_params(platform, op, {"pageNo": value}) is None


def test_string_lengths_at_both_ends(toy) -> None:  # type: ignore[no-untyped-def]
    platform, op = toy
    assert check_params(platform, op, {"name": "사"}) == "bad_value"
    assert check_params(platform, op, {"name": "사과"}) is None
    assert check_params(platform, op, {"name": "사과사과사과"}) == "bad_value"


def test_one_data_go_kr_key_serves_every_data_go_kr_service() -> None:
    from kopa_gen.sandbox.config import sandbox_key
    from tests.conftest import repository_project

    gateway = [
        p
        for p in repository_project().platforms
        if p.kopa.gateway == "datagokr" and not p.kopa.auth.sandbox_key
    ]
    assert len(gateway) >= 2
    assert len({sandbox_key(p) for p in gateway}) == 1
    others = [p for p in repository_project().platforms if p.kopa.gateway != "datagokr"]
    assert all(sandbox_key(p) != sandbox_key(gateway[0]) for p in others)

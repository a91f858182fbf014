"""`kopa-gen new platform ID --family F`: for every registered envelope family, the scaffolded platform loads,
builds, and answers its sample call through the real client in JSON and XML with rows from its declared world;
bad ids, families and domains are one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import yaml

from kopa_gen.compile.build import build
from kopa_gen.compose import sandbox_client
from kopa_gen.envelopes import family_names
from kopa_gen.project import load_project
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.scaffold import ScaffoldError, new_platform
from tests.test_declared import REGIONS, world_with
from tests.toyspec import write_project


def toy(tmp_path: Path) -> Path:
    return write_project(tmp_path, world=world_with(REGIONS))


@pytest.mark.parametrize("family_name", family_names())
def test_a_scaffolded_platform_answers_at_once(tmp_path: Path, family_name: str) -> None:
    root = toy(tmp_path)
    written = new_platform(root, "newp", family_name)
    assert [p.relative_to(root).as_posix() for p in written] == [
        "specs/platforms/newp/openapi.yaml",
        "specs/world/newp.yaml",
        "specs/world/world.yaml",
    ]
    assert yaml.safe_load((root / "specs/world/world.yaml").read_text("utf-8"))["files"] == [
        "toy.yaml",
        "newp.yaml",
    ]
    project = load_project(root)
    build(project)
    platform = project.platform("newp")
    assert platform.kopa.envelope == family_name and [op.tool for op in platform.operations] == [
        "newp_list_items"
    ]

    async def call(wire: str) -> list[dict[str, object]]:
        async with sandbox_client(open_sandbox(project), "newp", wire=wire) as client:  # type: ignore[arg-type]
            result = await client.call("newp_list_items", {"item_nm": "관측 항목 1"})
            assert result.total == 111  # 1, 10-19, 100-199
            return result.rows

    for wire in ("json", "xml"):
        rows = anyio.run(call, wire)
        assert rows and all("관측 항목 1" in str(r["item_nm"]) for r in rows)
        assert all(str(r["addr"]) and len(str(r["region_cd"])) == 10 for r in rows)


def test_bad_input_is_one_line_that_says_what_to_do(tmp_path: Path) -> None:
    root = toy(tmp_path)
    cases = [
        (
            ("Bad-Id", "hub"),
            "platform id 'Bad-Id': write 2-24 lower-case letters or digits, starting with a letter",
        ),
        (("newp", "nope"), "unknown envelope family 'nope'; known: " + ", ".join(family_names())),
        (("toy", "hub"), "specs/platforms/toy/openapi.yaml exists; choose another id or remove it"),
    ]
    for (pid, fam), message in cases:
        with pytest.raises(ScaffoldError) as info:
            new_platform(root, pid, fam)
        assert str(info.value) == message
    with pytest.raises(ScaffoldError) as info:
        new_platform(root, "newp", "hub", domain="sports")
    assert str(info.value) == "unknown domain 'sports'; declared in specs/domains.yaml: finance"


def test_the_cli_prints_the_next_steps(tmp_path: Path) -> None:
    root = toy(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kopa_gen",
            "--root",
            str(root),
            "new",
            "platform",
            "newp",
            "--family",
            "datagokr",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "specs/platforms/newp/openapi.yaml" in done.stdout and "kopa-gen build" in done.stdout
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "kopa_gen",
            "--root",
            str(root),
            "new",
            "platform",
            "newp",
            "--family",
            "datagokr",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert (
        again.stderr.strip()
        == "kopa-gen new platform: error: specs/platforms/newp/openapi.yaml exists; choose another id or remove it"
    )

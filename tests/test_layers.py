"""The floors hold: an import graph drawn from the code has no circle and no arrow to a higher floor; the
checker itself finds both when they are planted; a fixture's freshness covers every module its gold run imports."""

from __future__ import annotations

from pathlib import Path

from kopa_gen.gold.freshness import gold_code
from kopa_gen.layers import FLOORS, cycles, floor_of, import_graph, upward

PACKAGE = Path(__file__).resolve().parent.parent / "kopa_gen"


def test_every_package_has_a_floor() -> None:
    graph = import_graph(PACKAGE)
    unplaced = sorted({m.split(".")[1] for m in graph if "." in m} - set(FLOORS))
    assert not unplaced, f"give these a floor in kopa_gen/layers.py: {unplaced}"


def test_no_circle_and_no_upward_arrow() -> None:
    graph = import_graph(PACKAGE)
    assert cycles(graph) == []
    assert upward(graph) == []
    assert upward(import_graph(PACKAGE, plugins=True)) == []  # no registry loads plug-ins from a higher floor


def test_a_registry_loads_its_package(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "policies/__init__.py": "",
            "policies/base.py": 'POLICIES = Registry("policy", "kopa_gen.policies")\n',
            "policies/oracle.py": "from kopa_gen.policies.base import POLICIES\n",
        },
    )
    assert import_graph(root)["kopa_gen.policies.base"] == set()
    assert import_graph(root, plugins=True)["kopa_gen.policies.base"] == {"kopa_gen.policies.oracle"}


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "kopa_gen"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checker_finds_a_planted_upward_arrow_and_circle(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "language/__init__.py": "",
            "language/a.py": "def f():\n    from kopa_gen.evaluate import b  # hidden in a function\n",
            "evaluate/__init__.py": "",
            "evaluate/b.py": "from ..language import a\n",
        },
    )
    graph = import_graph(root)
    assert graph["kopa_gen.language.a"] == {"kopa_gen.evaluate.b"}
    assert graph["kopa_gen.evaluate.b"] == {"kopa_gen.language.a"}  # the relative import resolved
    assert upward(graph) == [("kopa_gen.language.a", "kopa_gen.evaluate.b")]
    assert cycles(graph) == [["kopa_gen.evaluate.b", "kopa_gen.language.a"]]
    assert floor_of("kopa_gen.language.a") < floor_of("kopa_gen.evaluate.b")


def test_fixture_freshness_follows_the_gold_runs_imports() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in gold_code()}
    # what the gold run reaches through the session: the emulator, an envelope family, the client, the world
    for expected in (
        "gold/run.py",
        "gold/lint.py",
        "sandbox/emulator.py",
        "envelopes/base.py",
        "client/client.py",
        "compose.py",
        "runtime/session.py",
        "world/build.py",
        "envelopes/drf.py",  # loaded by the envelope registry, named by no import
        "world/generators/fsc.py",
    ):
        assert expected in names, expected
    assert not any(n.startswith(("evaluate/", "compile/", "edge/", "train/")) for n in names), names

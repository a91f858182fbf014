"""Every extension point is one kopa_gen.plugins.Registry: a name taken twice is refused, an unknown name lists the
known ones, and each registry finds its plug-ins without a central list."""

from __future__ import annotations

import pytest

from kopa_gen.edge.scorer import SCORERS
from kopa_gen.edge.writer import WRITERS
from kopa_gen.envelopes import FAMILIES
from kopa_gen.evaluate.judge import JUDGES
from kopa_gen.plugins import DuplicateName, Registry, UnknownName
from kopa_gen.policies.base import POLICIES, register
from kopa_gen.policies.openai import TOOL_PROTOCOLS
from kopa_gen.world.registry import GENERATORS


def test_a_name_registered_twice_is_refused_naming_both() -> None:
    reg: Registry[int] = Registry("thing")
    reg.add("a", 1, "first.place")
    with pytest.raises(DuplicateName, match=r"thing 'a' registered twice \(first.place and second.place\)"):
        reg.add("a", 2, "second.place")
    assert reg.get("a") == 1


def test_an_unknown_name_lists_the_known_ones_and_the_hint() -> None:
    reg: Registry[int] = Registry("thing", hint="add one in x.py")
    reg.add("b", 1)
    reg.add("a", 2)
    with pytest.raises(UnknownName) as caught:
        reg.get("c")
    assert str(caught.value) == "unknown thing 'c'; known: a, b (add one in x.py)"
    assert isinstance(caught.value, KeyError)


def test_a_policy_name_cannot_be_taken_twice() -> None:
    assert "oracle" in POLICIES  # the plug-ins are loaded
    with pytest.raises(DuplicateName, match="policy 'oracle' registered twice"):
        register("oracle")(lambda **_: None)  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize(
    ("registry", "expected"),
    [
        (POLICIES, {"oracle", "do-nothing"}),
        (FAMILIES, {"hub", "drf"}),
        (GENERATORS, {"static"}),
        (SCORERS, {"offline", "llm"}),
        (WRITERS, {"composed", "llm"}),
        (JUDGES, {"openai"}),
        (TOOL_PROTOCOLS, {"native", "prompt"}),
    ],
    ids=lambda x: x.kind if isinstance(x, Registry) else "",
)
def test_each_extension_point_finds_its_plug_ins(registry: Registry[object], expected: set[str]) -> None:
    assert expected <= set(registry.names())
    with pytest.raises(UnknownName, match=f"unknown {registry.kind} 'no-such'"):
        registry.get("no-such")

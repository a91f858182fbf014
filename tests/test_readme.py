"""The README's platform table says what the specs hold: one row per platform, its tool count as generated."""

from __future__ import annotations

import json
import re

from tests.conftest import ROOT


def test_readme_platform_table_matches_the_generated_servers() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {m[1]: int(m[2]) for m in re.finditer(r"^\| `([a-z0-9]+)` \|.*\| (\d+) \| [^|]+ \|$", text, re.M)}
    generated = {
        folder.name: len(json.loads((folder / "tools.json").read_text(encoding="utf-8"))["tools"])
        for folder in sorted((ROOT / "generated" / "servers").iterdir())
        if (folder / "tools.json").exists()
    }
    assert rows == generated
    assert f"({sum(generated.values())} tools)" in text


def test_readme_chain_entry_is_the_platforms_first_entry_tool() -> None:
    """The table's last column names where chains start: the first of the spec's `x-kopa.entry` (what search mode
    pins), so the README cannot name a tool the spec does not pin."""
    from tests.conftest import repository_project

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    said = {
        m[1]: m[2] for m in re.finditer(r"^\| `([a-z0-9]+)` \|.*\| \d+ \| `([a-z0-9_]+)` \|$", text, re.M)
    }
    assert said == {p.id: p.kopa.entry[0] for p in repository_project().platforms}

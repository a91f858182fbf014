"""A platform's generated tools, loaded per tool so that start-up does not grow with their number.

The listing is tools.json as the build froze it, read once and handed to the SDK as wire data: no pydantic model
is built and no `Tool` constructed for it. A tool's argument, row and result models live in their own module,
generated/servers/<platform>/tools/<tool>.py, imported at the tool's first call (`Bindings`); listing, or calling
another tool, never imports it.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from kopa_gen.mcp.toolbox import ToolBinding


class Catalog:
    """One platform's tools: names (from the generated server), the frozen listing (read at first use) and the
    per-tool modules under `<package>.tools`; `entry`: the tools chains start from (x-kopa.entry)."""

    def __init__(self, package: str, listing: Path, names: Iterable[str], entry: Iterable[str] = ()) -> None:
        self.package = package
        self.listing = listing
        self.names = tuple(names)
        self.entry = tuple(entry)

    @functools.cached_property
    def tools(self) -> list[dict[str, Any]]:
        """The MCP tools in their wire form (camelCase keys), exactly as tools.json holds them."""
        tools: list[dict[str, Any]] = json.loads(self.listing.read_bytes())["tools"]
        return tools

    def bindings(self) -> Bindings:
        return Bindings(self.package, self.names)


class Bindings(Mapping[str, ToolBinding]):
    """Tool name → binding, importing a tool's module at its first lookup. Membership, iteration and length use
    the names alone and import nothing."""

    def __init__(self, package: str, names: Iterable[str]) -> None:
        self.package = package
        self._names = dict.fromkeys(names)
        self._loaded: dict[str, ToolBinding] = {}

    def __getitem__(self, name: str) -> ToolBinding:
        if name not in self._names:
            raise KeyError(name)
        binding = self._loaded.get(name)
        if binding is None:
            binding = importlib.import_module(f"{self.package}.tools.{name}").BINDING
            if not isinstance(binding, ToolBinding):
                raise TypeError(
                    f"{self.package}.tools.{name}.BINDING is not a ToolBinding; run `kopa-gen build`"
                )
            self._loaded[name] = binding
        return binding

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    @property
    def loaded(self) -> frozenset[str]:
        """The tools whose module this mapping has imported so far."""
        return frozenset(self._loaded)

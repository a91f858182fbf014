"""One registry for every extension point (envelope families, world generators, policies, EDGE scorers, query
writers, judges): a plug-in registers itself by name when its module is imported, and a registry that names a
package imports that package whole, once, the first time it is read, instead of a central file listing them.

    POLICIES: Registry[PolicyFactory] = Registry("policy", "kopa_gen.policies")

    @POLICIES.register("oracle")
    class Oracle: ...

    POLICIES.get("oracle")   # UnknownName (a KeyError) listing the known names otherwise

A name registered twice is refused at import, naming both places."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from kopa_gen.language.diagnostics import NotFound

T = TypeVar("T")


@functools.cache
def import_all(package: str) -> None:
    """Import every module of `package` once."""
    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(module.__path__):
        importlib.import_module(f"{package}.{info.name}")


class UnknownName(NotFound):
    """A name no plug-in registered (the user's: a flag or a spec named it); the message lists the known ones."""


class DuplicateName(ValueError):
    """A name registered twice (two plug-ins would answer to it)."""


class Registry(Generic[T]):
    """Named plug-ins of one kind. `package`: the package whose modules register them (imported on first read);
    `hint`: where a new one goes, for the unknown-name error."""

    def __init__(self, kind: str, package: str | None = None, hint: str = "") -> None:
        self.kind = kind
        self.package = package
        self.hint = hint
        self._items: dict[str, T] = {}
        self._origin: dict[str, str] = {}

    def add(self, name: str, item: T, origin: str = "") -> T:
        if name in self._items:
            raise DuplicateName(
                f"{self.kind} {name!r} registered twice ({self._origin[name] or '?'} and {origin or '?'}); "
                "give one of them another name"
            )
        self._items[name] = item
        self._origin[name] = origin
        return item

    def register(self, *names: str) -> Callable[[T], T]:
        """Decorator: register the decorated object under each of `names`."""

        def wrap(item: T) -> T:
            origin = f"{getattr(item, '__module__', '')}.{getattr(item, '__qualname__', '')}".strip(".")
            for name in names:
                self.add(name, item, origin)
            return item

        return wrap

    def _load(self) -> dict[str, T]:
        if self.package is not None:
            import_all(self.package)
        return self._items

    def get(self, name: str) -> T:
        items = self._load()
        if name not in items:
            hint = f" ({self.hint})" if self.hint else ""
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {', '.join(sorted(items))}{hint}")
        return items[name]

    def names(self) -> list[str]:
        return sorted(self._load())

    def items(self) -> dict[str, T]:
        """Every registered name and plug-in (after importing the package)."""
        return dict(self._load())

    def __contains__(self, name: object) -> bool:
        return name in self._load()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

"""Plug-ins register themselves when their module is imported: a package of plug-ins (policies, envelope
families, world generators) is imported whole, once, instead of a central file listing them."""

from __future__ import annotations

import functools
import importlib
import pkgutil


@functools.cache
def import_all(package: str) -> None:
    """Import every module of `package` once."""
    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(module.__path__):
        importlib.import_module(f"{package}.{info.name}")

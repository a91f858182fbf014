"""The interpreter's cyclic garbage collector around work that makes a large tree of objects at once."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collection_paused(freeze: bool = False) -> Iterator[None]:
    """No cyclic collection while a large tree is made (a cached project's ~200,000 objects, a bulk file's
    110,000 rows): none of it is garbage yet, and the collector would walk the growing heap again and again.
    `freeze`: afterwards move everything alive out of the collector's walks for good, for a tree the process keeps
    to its end (the project). The collector comes back as the caller had it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()

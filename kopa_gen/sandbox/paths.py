"""Path arguments (`format: path` in a parameter's schema, e.g. the workspace's file paths): one file has one name.

`reports/../x`, `./x` and `x` are the same file, as in any file system, and a path that climbs above the root
(`../../etc/passwd`) is refused with a message that says why, instead of being stored as a literal name.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from kopa_gen.language.platform import Operation

PATH_FORMAT = "path"


class WorkspacePathError(ValueError):
    """A path argument the workspace refuses; the message names the argument and the reason."""


def normalize_path(name: str, value: str, prefix: bool = False) -> str:
    """`value` with `.`, `..` and repeated slashes resolved. A prefix (a folder to list) keeps its final slash and
    may be empty (the whole workspace); a file path may not."""
    if value.startswith("/"):
        raise WorkspacePathError(
            f"{name}: {value!r} starts with '/'; paths are relative to the workspace root"
        )
    resolved = posixpath.normpath(value) if value else "."
    if resolved == ".." or resolved.startswith("../"):
        raise WorkspacePathError(f"{name}: {value!r} leads outside the workspace (above its root)")
    if resolved == ".":
        if prefix:
            return ""
        raise WorkspacePathError(f"{name}: {value!r} names the workspace root, not a file")
    if prefix and value.endswith("/"):
        resolved += "/"
    return resolved


def normalize_params(op: Operation, params: Mapping[str, str]) -> dict[str, str]:
    """The request parameters with every `format: path` value normalised; WorkspacePathError for one that escapes. A
    parameter that filters by prefix is a folder, the others are files."""
    out = dict(params)
    filters = op.kopa.source.filters if op.kopa.source is not None else []
    prefixes = {f.param for f in filters if f.match == "prefix"}
    for p in op.params:
        value = params.get(p.name)
        if p.schema.get("format") == PATH_FORMAT and value is not None:
            out[p.name] = normalize_path(p.name, value, prefix=p.name in prefixes)
    return out

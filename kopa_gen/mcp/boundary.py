"""The edge where a tool call from a model or an MCP client comes in, and its limits.

Whatever a model sends is checked here once, before anything parses, validates, sends or stores it: text that is
not text (a lone surrogate, which no encoder accepts), control characters (a NUL ends a C string and a SQLite
`length()`), nesting and size that would take the process's stack or memory, integers too long for Python to turn
into text, numbers JSON cannot carry (NaN, Infinity). Each is a tool error naming the argument and the limit, so
the model can fix its call; nothing raises. The walk is iterative: no argument is deep enough to reach Python's
recursion limit here.

`ToolBox.call` (every platform tool, for a Session, `kopa-gen call` and the MCP servers) and the Session's answer
channel call `check_arguments`; an unknown tool's name is echoed through `echo_name`, cut and announced.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    """What one tool call may hold. Far above any valid call of any tool (a request URL holds at most 8,000
    characters, kopa_gen/client/client.py), far below what would hurt the process."""

    depth: int = 32
    """Nesting of lists and objects in the arguments (a tool's own schema nests at most a few levels)."""
    values: int = 10_000
    """Values in the arguments, every string, number, list and object counted."""
    chars: int = 1_000_000
    """Characters of text in the arguments, keys included."""
    int_digits: int = 100
    """Digits of one integer (Python refuses to write an integer of more than 4,300 digits as text)."""
    name_echo: int = 80
    """Characters of an unknown tool's name repeated in the error that answers it."""


LIMITS = Limits()

# C0 controls except tab, line feed and carriage return; DEL; C1 controls; UTF-16 surrogates (alone in a str they
# are not text: UTF-8 cannot encode them)
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def _what(char: str) -> str:
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        return f"an unpaired surrogate (U+{code:04X}), which is not text"
    if code == 0:
        return "a NUL (U+0000)"
    return f"a control character (U+{code:04X})"


def _place(path: str) -> str:
    return path or "(arguments)"


def check_text(text: str, path: str) -> str | None:
    """The tool error for text that holds no-text characters, naming the argument; None when it is clean."""
    bad = _NOT_TEXT.search(text)
    if bad is None:
        return None
    return (
        f"{_place(path)}: character {bad.start() + 1} is {_what(bad.group())}; send plain text (tabs and line "
        "breaks are fine, other control characters and unpaired surrogates are not)"
    )


def check_arguments(arguments: Any, limits: Limits = LIMITS) -> str | None:
    """The tool error for arguments past a limit or holding something that is not JSON text, naming the argument
    (`items[3].name`) and the limit; None when the arguments may go on to the tool's schema."""
    big = 10**limits.int_digits
    stack: list[tuple[str, Any, int]] = [("", arguments, 0)]
    values = 1  # counted as they are put on the stack, so a list of millions is refused before it is walked
    chars = 0
    while stack:
        path, value, depth = stack.pop()
        if isinstance(value, str):
            chars += len(value)
            if chars > limits.chars:
                return (
                    f"{_place(path)}: the arguments hold more than {limits.chars:,} characters of text; send less "
                    "(split the call)"
                )
            problem = check_text(value, path)
            if problem is not None:
                return problem
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            if -big < value < big:
                continue
            return (
                f"{_place(path)}: an integer of more than {limits.int_digits} digits; no parameter takes one "
                "that long"
            )
        elif isinstance(value, float):
            if not math.isfinite(value):
                return f"{_place(path)}: {value!r} is not a number JSON can carry; send a finite number"
        elif isinstance(value, Mapping | list | tuple):
            if depth >= limits.depth:
                return (
                    f"{_place(path)}: nested more than {limits.depth} levels deep; no tool takes arguments "
                    "nested that far"
                )
            values += len(value)
            if values > limits.values:
                return (
                    f"{_place(path)}: more than {limits.values:,} values in one call's arguments; send fewer "
                    "(split the call)"
                )
            if isinstance(value, Mapping):
                for key, item in value.items():
                    name = key if isinstance(key, str) else str(key)
                    chars += len(name)
                    inner = f"{path}.{name}" if path else name
                    problem = check_text(name, f"{path}.(key)" if path else "(key)")
                    if problem is not None:
                        return problem
                    stack.append((inner, item, depth + 1))
            else:
                stack.extend((f"{path}[{i}]", item, depth + 1) for i, item in enumerate(value))
    return None


def echo_name(name: str, limits: Limits = LIMITS) -> str:
    """A tool name as an error repeats it: quoted with its control characters and surrogates escaped, cut after
    `limits.name_echo` characters with the cut said."""
    if len(name) <= limits.name_echo:
        return repr(name)
    return f"{name[: limits.name_echo]!r}… (a name of {len(name):,} characters, cut here)"


_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """`text` with each unpaired surrogate replaced by U+FFFD, as a UTF-8 decoder replaces what it cannot read:
    for a model's own words (its reply, the name of a tool it called), which go back to it and into the run
    folder and must encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def escaped_surrogates(json_text: str) -> str:
    """JSON text with each unpaired surrogate written as its escape (`\\ud800`): the same JSON value, now text
    that encodes. The value still holds the surrogate, so the call it belongs to is answered by
    `check_arguments`, naming the argument."""
    try:
        json_text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)
    return json_text

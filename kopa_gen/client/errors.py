"""Errors sorted by who handles them.

- `PlatformError`: the platform answered with a non-success result code, or could not be reached. The MCP layer
  returns it to the model as a tool error with the platform's code and message.
- `ToolArgumentError`: the model called a tool with missing or mistyped arguments; returned as a tool error.
- `MissingKeyError`: the user asked for live mode without the key; the command line says so in one line.
- Anything else is a bug in kopa-gen and propagates.
"""

from __future__ import annotations

from kopa_gen.client.redaction import redact
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.kopa import Category

__all__ = ["MissingKeyError", "PlatformError", "ToolArgumentError", "redact"]


class PlatformError(Exception):
    def __init__(self, platform: str, operation: str, code: str, message: str, category: Category) -> None:
        self.platform = platform
        self.operation = operation
        self.code = code
        self.message = message
        self.category = category
        super().__init__(f"{platform}.{operation}: [{code}] {message} ({category.value})")

    @property
    def environmental(self) -> bool:
        """True when the same call may succeed later (quota, rate, server, transport)."""
        return self.category.environmental


class ToolArgumentError(Exception):
    """A tool call's arguments do not fit the tool's schema; the message names each argument."""


class MissingKeyError(UserError):
    """The user asked for live mode without the key in the environment (the user's mistake: one line, exit 2)."""

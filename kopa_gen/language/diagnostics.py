"""Compile and load problems as values: collected with a place, printed together, never raised one by one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum


class Level(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem: where it is (file, field path, line) and what to do about it."""

    file: str
    path: str
    message: str
    level: Level = Level.ERROR
    line: int | None = None

    def render(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        at = f" {self.path}:" if self.path else ""
        return f"{where}:{at} {self.level.value}: {self.message}"


@dataclass
class Diagnostics:
    """An append-only bag of diagnostics for one build."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, file: str, path: str, message: str, line: int | None = None) -> None:
        self.items.append(Diagnostic(file, path, message, Level.ERROR, line))

    def warning(self, file: str, path: str, message: str, line: int | None = None) -> None:
        self.items.append(Diagnostic(file, path, message, Level.WARNING, line))

    def extend(self, other: Iterable[Diagnostic]) -> None:
        self.items.extend(other)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.level is Level.ERROR]

    def render(self) -> str:
        return "\n".join(d.render() for d in self.items)


class UserError(Exception):
    """The user's mistake (a flag, a file, a missing key or package), not a bug: the command line prints it as one
    line, `kopa-gen <cmd>: error: <message>`, then `hint` when there is one, and exits with status 2."""

    hint: str = ""

    def __init__(self, *args: object, hint: str | None = None) -> None:
        super().__init__(*args)
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        # A KeyError subclass would print its message quoted.
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class InfrastructureError(Exception):
    """The environment failed, not the policy and not the user: a world that cannot be opened, a sandbox that
    fails, a platform that answers 5xx or nothing past every retry. An eval records the episode as
    failed-infrastructure (left out of the scores, run again on resume); a single tool call says it as a tool
    error."""


class NotFound(UserError, KeyError):
    """A name the user gave (a platform, tool, task, pattern, fixture) that the project lacks; still a KeyError for
    the callers that catch one."""


class SpecError(UserError):
    """Raised once, at the end of a load or build, carrying every error found."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))

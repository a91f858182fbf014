"""Query writers: how a built chain's question is worded. The question is composed first, from the meaning files
(entity names, the topics of the results, literal arguments as people say them, reduction and question phrases;
kopa_gen/edge/builder.py and asks.py), so the offline default changes nothing. A writer may rewrite it; the answer
never comes from a writer.

- `composed` (default, offline): keeps the question composed from meanings.
- `llm`: an OpenAI-compatible endpoint rewrites it with a versioned prompt (prompts/writer.md). A rewrite is
  rejected, and the composed question kept, when it drops a value the chain depends on (an entity name, a literal
  argument as said, a threshold), adds Latin-letter words (API vocabulary) or is empty; a request that fails after
  retries keeps it too. Both are counted and printed in the summary, so a failing endpoint is never silent.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kopa_gen.edge.chat import ChatClient
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.task import Task
from kopa_gen.plugins import Registry
from kopa_gen.policies.openai import EndpointError

_LATIN = re.compile(r"[A-Za-z]{3,}")


@dataclass(frozen=True)
class Prompt:
    version: str
    template: str


@functools.cache
def prompt(name: str) -> Prompt:
    """A versioned prompt file of kopa_gen/edge/prompts/: a `prompt: <version>` line, `---`, the template."""
    text = (Path(__file__).parent / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    head, _, body = text.partition("\n---\n")
    version = head.split(":", 1)[1].strip()
    return Prompt(version, body.strip() + "\n")


class QueryWriter(Protocol):
    name: str

    async def write(self, task: Task, keep: Sequence[str], rng: random.Random) -> str | None:
        """A rewording of the task's query, or None to keep it."""
        ...


WriterFactory = Callable[..., "QueryWriter"]
WRITERS: Registry[WriterFactory] = Registry(
    "query writer", hint="register a writer class in kopa_gen/edge/writer.py"
)


@WRITERS.register("composed")
class ComposedWriter:
    name = "composed"

    async def write(self, task: Task, keep: Sequence[str], rng: random.Random) -> str | None:
        return None


@WRITERS.register("llm")
class LLMWriter:
    name = "llm"

    def __init__(self, endpoint: EndpointSettings) -> None:
        self.endpoint = endpoint
        self.chat = ChatClient(endpoint)
        self.rejected = 0  # rewrites that dropped a value or added API vocabulary: the composed question kept
        self.failed = 0  # requests the endpoint failed after retries: the composed question kept
        self.accepted = 0
        self.last_error = ""

    @property
    def version(self) -> str:
        return prompt("writer").version

    async def aclose(self) -> None:
        await self.chat.aclose()

    async def write(self, task: Task, keep: Sequence[str], rng: random.Random) -> str | None:
        values = sorted(set(keep))
        text = prompt("writer").template.format(keep=", ".join(f"'{v}'" for v in values), query=task.query)
        try:
            reply = (await self.chat.ask(text, seed=rng.randrange(2**31))).strip()
        except EndpointError as exc:
            self.failed += 1
            self.last_error = str(exc)
            return None
        if (
            not reply
            or any(v not in reply for v in values)
            or set(_LATIN.findall(reply)) - set(_LATIN.findall(task.query))
        ):
            self.rejected += 1
            return None
        self.accepted += 1
        return reply

    def summary(self) -> str:
        line = f"llm writer ({self.version}): {self.accepted} rewrites kept, {self.rejected} rejected, {self.failed} failed"
        return line + (f"; last error: {self.last_error}" if self.last_error else "")

"""The LLM static filter of EDGE (the paper's two judges): two OpenAI-compatible endpoints read each synthesized
question with its answer and exposed tools (prompts/static_judge.md, versioned) and say whether it is natural,
unambiguous, answerable and free of leaks. A task is kept only when both say so; a judge that cannot be reached
or answers out of format rejects it with the reason (counted), never silently."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from kopa_gen.edge.chat import ChatClient
from kopa_gen.edge.writer import prompt
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.task import Task
from kopa_gen.policies.openai import EndpointError


async def verdict(judge: EndpointSettings, task: Task) -> str | None:
    """None when this judge keeps the task, else why it does not."""
    chat = ChatClient(judge)
    text = prompt("static_judge").template.format(
        query=task.query,
        answer=task.answer.model_dump_json() if task.answer else "null",
        tools=", ".join(task.tools or []),
    )
    try:
        reply = await chat.ask(text, seed=0)
    except EndpointError as exc:
        return f"judge {judge.model} unreachable: {str(exc)[:80]}"
    finally:
        await chat.aclose()
    match = re.search(r"\{.*\}", reply, re.S)
    try:
        data = json.loads(match.group(0) if match else reply)
        checks = (
            bool(data["natural"]),
            bool(data["unambiguous"]),
            bool(data["answerable"]),
            not bool(data["leaks"]),
        )
    except (ValueError, KeyError, TypeError):
        return f"judge {judge.model} answered out of format"
    names = ("not natural", "ambiguous", "not answerable", "leaks")
    failed = [n for n, ok in zip(names, checks, strict=True) if not ok]
    return f"judge {judge.model}: {', '.join(failed)}" if failed else None


async def both_agree(judges: Sequence[EndpointSettings], task: Task) -> str | None:
    """None when every judge keeps the task; the first objection otherwise."""
    for judge in judges:
        why = await verdict(judge, task)
        if why is not None:
            return why
    return None

"""Query writers: word an executed trajectory as a Korean request. The answer never comes from a writer; it was
derived from the executed results before any wording happens.

- `template` (default, offline): fills the pattern's template from specs/templates/ (compiled by `kopa-gen
  build`), choosing the wording variant by seed.
- `llm`: an OpenAI-compatible endpoint rewrites the template's query into natural Korean; a rewrite that drops a
  value the task depends on (a name, a code, a year, a pivot) is rejected and the template query kept, as it is
  when the endpoint fails after retries (counted apart).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol, cast

from kopa_gen.edge.chat import ChatClient
from kopa_gen.edge.synth import AskKind, Draft
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.templates import Reduction, Template, render
from kopa_gen.plugins import Registry
from kopa_gen.policies.openai import EndpointError


class QueryWriter(Protocol):
    name: str

    async def write(self, draft: Draft, template: Template, rng: random.Random) -> str: ...


def template_query(draft: Draft, template: Template, rng: random.Random) -> str:
    s = draft.slots
    ask_slots = {
        "tool": s["tool"],
        "field": s.get("field", draft.ask.what) or "결과",
        "count": s.get("count", ""),
        "labels": ", ".join(draft.ask.labels),
    }
    slots: dict[str, str] = {"subject": s["subject"], "tool": s["tool"], "args": s.get("args", "")}
    if draft.pattern in ("sem", "cond"):
        kind = cast(AskKind, s.get("ask_kind", draft.ask.kind))
        slots["ask"] = render(template.asks[kind], **dict(ask_slots, field=s.get("field") or "결과"))
    else:
        slots["ask"] = render(template.asks[draft.ask.kind], **ask_slots)
    if draft.pattern == "fan":
        slots.update(count=s["count"], key=s["key"])
    elif draft.pattern == "drv":
        reduction = render(
            template.reductions[cast(Reduction, s["reduction_kind"])], key=s["pivot_key"], pivot=s["pivot"]
        )
        slots.update(reduction=reduction, key=s["key"])
    elif draft.pattern == "sem":
        kind2 = cast(AskKind, s.get("ask2_kind", "count"))
        slots.update(
            tool2=s["tool2"],
            args2=s.get("args2", ""),
            ask2=render(
                template.asks[kind2], **dict(ask_slots, tool=s["tool2"], field=s.get("field2") or "결과")
            ),
        )
    elif draft.pattern == "cmp":
        slots.update(vary=s["vary"], values=s["values"], labels=s.get("labels", ""))
    elif draft.pattern == "cond":
        # the executed branch gets the real question, the other one a count question about its tool
        condition = render(template.conditions["gt"], subject=s["subject"], what=s["what"], pivot=s["pivot"])
        taken = slots["ask"]
        other_then = render(template.asks["count"], **ask_slots)
        other_else = render(template.asks["count"], **dict(ask_slots, tool=s["tool2"]))
        if s.get("branch") == "else":
            taken = render(template.asks[draft.ask.kind], **dict(ask_slots, tool=s["tool2"]))
            slots["ask"] = other_then
        slots.update(
            condition=condition,
            tool2=s["tool2"],
            args2=s.get("args2", ""),
            ask2=taken if s.get("branch") == "else" else other_else,
        )
    return render(rng.choice(template.queries), **slots)


WriterFactory = Callable[..., "QueryWriter"]
WRITERS: Registry[WriterFactory] = Registry(
    "query writer", hint="register a writer class in kopa_gen/edge/writer.py"
)
"""Query writers by name: `template` (offline, the task template's own wording) and `llm` (an OpenAI-compatible
endpoint rewrites it, keeping every value)."""


@WRITERS.register("template")
class TemplateWriter:
    name = "template"

    async def write(self, draft: Draft, template: Template, rng: random.Random) -> str:
        return template_query(draft, template, rng)


@WRITERS.register("llm")
class LLMWriter:
    name = "llm"

    def __init__(self, endpoint: EndpointSettings) -> None:
        self.chat = ChatClient(endpoint)
        self.rejected = 0  # rewrites that dropped a value: the template query was kept
        self.failed = 0  # requests the endpoint failed after retries: the template query was kept
        self.last_error = ""

    async def aclose(self) -> None:
        await self.chat.aclose()

    async def write(self, draft: Draft, template: Template, rng: random.Random) -> str:
        base = template_query(draft, template, rng)
        prompt = (
            "다음 요청문을 공공기관 담당자가 쓸 법한 자연스러운 한국어 한두 문장으로 다시 써 주세요. "
            "따옴표 안의 이름, 숫자, 연도, 코드는 하나도 빠뜨리거나 바꾸지 마세요. 다시 쓴 문장만 답하세요.\n\n"
            + base
        )
        try:
            text = (await self.chat.ask(prompt, seed=rng.randrange(2**31))).strip()
        except EndpointError as exc:
            self.failed += 1
            self.last_error = str(exc)
            return base
        if not text or any(v not in text for v in required_values(draft)):
            self.rejected += 1
            return base
        return text


def required_values(draft: Draft) -> list[str]:
    """Literal values a query must keep: the starting arguments, literal arguments and pivots."""
    values = [str(v) for c in draft.steps[0].calls for v in c.args.values()]
    for step in draft.steps[1:]:
        for call in step.calls:
            values += [
                str(v) for k, v in call.args.items() if isinstance(v, str | int) and k not in draft.page_args
            ]
    if draft.slots.get("pivot"):
        values.append(draft.slots["pivot"])
    return sorted(set(values))

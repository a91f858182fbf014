"""The Policy interface and what a policy hands back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from kopa_gen.language.records import TurnUsage
from kopa_gen.language.task import AnswerMode, Task
from kopa_gen.plugins import Registry
from kopa_gen.runtime.session import Session

# "infrastructure": the model endpoint was down (see openai.EndpointDown); the runner retries such episodes
StopReason = Literal["answered", "budget", "timeout", "error", "max_turns", "infrastructure"]


@dataclass
class Episode:
    """What a policy did: the OpenAI-style transcript, the final message, which session calls each model turn
    issued together (for parallel-call scoring) and, for a model, each turn's tokens (None where the server sent
    no `usage`)."""

    final_message: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    turns: list[list[int]] = field(default_factory=list)
    stop_reason: StopReason = "answered"
    error: str | None = None
    usage: list[TurnUsage | None] = field(default_factory=list)


@dataclass(frozen=True)
class TaskContext:
    """Everything a policy may know about the task: the task itself (query, system state), how it must answer
    (`mode`: through the session's `submit_answer` tool, or in prose ending with a `최종 답:` line) and, for
    reference policies only, the gold fixture."""

    task: Task
    fixture: dict[str, Any]
    seed: int = 0
    rollout: int = 0
    mode: AnswerMode = "submit"


class Policy(Protocol):
    name: str

    async def run(self, ctx: TaskContext, session: Session) -> Episode: ...


PolicyFactory = Callable[..., Policy]
POLICIES: Registry[PolicyFactory] = Registry(
    "policy", "kopa_gen.policies", "a new policy is a module in kopa_gen/policies/ with @register"
)


def register(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Register a policy factory under `name` (refused if the name is taken)."""
    return POLICIES.register(name)


def registered() -> list[str]:
    """Every policy name, sorted (imports the policy plug-ins)."""
    return POLICIES.names()


def policy(name: str, **options: Any) -> Policy:
    """A policy by name (`oracle`, `no-lookup`, `first-page`, `list-all`, `dump`, `do-nothing`; `openai` and
    `closed-book` with an endpoint)."""
    return POLICIES.get(name)(**options)


ANSWER_INSTRUCTIONS: dict[AnswerMode, str] = {
    "submit": "답을 확정하면 submit_answer 도구를 한 번만 호출해 답 하나를 제출하세요 (수는 answer에 숫자만, "
    "unit에 단위). 설명과 근거는 메시지에 자유롭게 써도 됩니다.",
    "text": "답변의 마지막 줄에 '최종 답: <답>' 형식으로 답 하나만 적으세요 (여러 값을 묻는 질문이면 그 값들을 "
    "쉼표로, 값 안에 쉼표가 있으면 세미콜론으로 구분해 그 한 줄에). 설명과 근거는 그 앞에 써도 됩니다.",
}


def system_prompt(task: Task, mode: AnswerMode = "submit") -> str:
    """The system prompt every policy gets: the fixed date, the keys held, how to answer, any preset context."""
    lines = [
        "당신은 한국 공공 오픈 API 도구를 호출해 사용자의 질문에 답하는 에이전트입니다.",
        f"오늘 날짜: {task.system.today.isoformat()}",
        f"인증키가 준비된 플랫폼: {', '.join(task.system.keys)} (키는 자동으로 들어갑니다)",
        "필요한 코드(고유번호, 지역코드, 학교코드 등)는 먼저 조회 도구로 찾고, 결과가 여러 페이지이면 필요한 만큼 페이지를 넘기세요.",
        ANSWER_INSTRUCTIONS[mode],
    ]
    if task.system.context:
        lines.append(task.system.context)
    return "\n".join(lines)

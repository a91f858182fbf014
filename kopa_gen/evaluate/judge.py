"""The optional LLM-as-judge fallback for RESPONSE: when the rules find no match, a model behind an
OpenAI-compatible endpoint is asked whether the response states the gold answer. Off unless configured
(`kopa-gen eval --judge-base-url URL --judge-model M`); its verdicts are recorded as such in the episode."""

from __future__ import annotations

import httpx

from kopa_gen.evaluate.answers import Answer
from kopa_gen.policies.openai import EndpointDown, EndpointError, bearer, parse_turn, post_chat

PROMPT = (
    "You grade answers to questions about Korean public data. Gold answer (JSON): {gold}\n"
    "Question: {query}\nResponse: {message}\n"
    "Does the response state the gold answer (same value; units, formatting and wording may differ)? "
    "Reply with exactly YES or NO."
)

VERIFY_PROMPT = (
    "You check answers to questions about Korean public data against the API results they came from.\n"
    "Question: {query}\nAPI results (JSON, call id -> result): {evidence}\nProposed answer: {candidate}\n"
    "Is the proposed answer the correct answer to the question according to these results? "
    "Reply with exactly YES or NO."
)


class OpenAIJudge:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60,
        retries: int = 3,
        backoff_s: float = 1.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s

    async def judge(self, query: str, gold: Answer, message: str) -> bool | None:
        """Does `message` state the gold answer? True/False from the model's YES/NO; None (abstain) on any other
        reply. Raises `EndpointDown` when the judge cannot be reached after its retries: the episode cannot be
        graded, and grading it by the rules alone would count the judge's outage as the model's failure."""
        prompt = PROMPT.format(gold=gold.model_dump_json(), query=query, message=message)
        return await self._ask(prompt, down_raises=True)

    async def verify(self, query: str, evidence: str, candidate: Answer) -> bool | None:
        """Is `candidate` the correct answer to `query` given the executed results `evidence`? (EDGE's re-solve
        stage asks this before an answer a re-solver found replaces the stored one.)"""
        return await self._ask(
            VERIFY_PROMPT.format(query=query, evidence=evidence, candidate=candidate.model_dump_json())
        )

    async def _ask(self, content: str, down_raises: bool = False) -> bool | None:
        key, headers = bearer(self.api_key_env)
        body = {"model": self.model, "temperature": 0, "messages": [{"role": "user", "content": content}]}
        try:
            async with httpx.AsyncClient(headers=headers, timeout=self.timeout_s) as http:
                data = await post_chat(
                    http,
                    self.base_url,
                    body,
                    key=key,
                    retries=self.retries,
                    backoff_s=self.backoff_s,
                    call_timeout_s=self.timeout_s,
                )
            text = parse_turn(data, 0).content
        except EndpointDown as exc:
            if down_raises:
                raise
            self.last_error = str(exc)
            return None
        except EndpointError as exc:
            self.last_error = str(exc)
            return None
        word = text.strip().upper()
        if word.startswith("YES"):
            return True
        if word.startswith("NO"):
            return False
        return None

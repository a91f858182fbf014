"""The OpenAI-compatible endpoint behind EDGE's LLM scorer and LLM query writer: one user message in, the reply's
text out, over the same request, retry and redaction code as the `openai` policy (kopa_gen.policies.openai:
429, 5xx, time-outs and transport errors retried with doubling back-off; what still fails raises
EndpointError naming the endpoint and the status, never the key)."""

from __future__ import annotations

import httpx

from kopa_gen.policies.openai import bearer, parse_turn, post_chat


class ChatClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60.0,
        backoff_s: float = 1.0,
        retries: int = 2,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self.retries = retries
        self._key, headers = bearer(api_key_env)
        self._http = httpx.AsyncClient(headers=headers, timeout=timeout_s)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def ask(self, prompt: str, seed: int) -> str:
        """The reply's text (temperature 0); raises EndpointError when the endpoint gives no completion."""
        body = {
            "model": self.model,
            "temperature": 0,
            "seed": seed,
            "messages": [{"role": "user", "content": prompt}],
        }
        data = await post_chat(
            self._http,
            self.base_url,
            body,
            key=self._key,
            retries=self.retries,
            backoff_s=self.backoff_s,
            call_timeout_s=self.timeout_s,
        )
        return parse_turn(data, 0).content

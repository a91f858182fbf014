"""The OpenAI-compatible endpoint behind EDGE's LLM scorer and LLM query writer: one user message in, the reply's
text out, over the same request, retry and redaction code as the `openai` policy (kopa_gen.policies.openai:
429, 5xx, time-outs and transport errors retried with doubling back-off; what still fails raises
EndpointError naming the endpoint and the status, never the key)."""

from __future__ import annotations

import httpx

from kopa_gen.language.settings import EndpointSettings
from kopa_gen.policies.openai import bearer, parse_turn, post_chat


class ChatClient:
    """One endpoint (`EndpointSettings`: its URL, model, key variable, time-out, retries and generation
    settings) asked one message at a time."""

    def __init__(self, endpoint: EndpointSettings) -> None:
        self.endpoint = endpoint
        self.base_url = endpoint.base_url
        self.model = endpoint.model
        self._key, headers = bearer(endpoint.api_key_env)
        self._http = httpx.AsyncClient(headers=headers, timeout=endpoint.timeout_s)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def ask(self, prompt: str, seed: int) -> str:
        """The reply's text (the endpoint's generation settings, `seed` added to their seed); raises EndpointError
        when the endpoint gives no completion."""
        e = self.endpoint
        body = {
            "model": e.model,
            "messages": [{"role": "user", "content": prompt}],
            **e.generation.body(seed),
        }
        data = await post_chat(
            self._http,
            e.base_url,
            body,
            key=self._key,
            retries=e.retries,
            backoff_s=e.backoff_s,
            call_timeout_s=e.timeout_s,
        )
        return parse_turn(data, 0).content

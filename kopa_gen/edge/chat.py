"""One chat completion from an OpenAI-compatible endpoint, for EDGE's LLM scorer and LLM query writer:
429, 5xx and transport errors are retried with a doubling back-off; what still fails is a ChatFailure that names
the endpoint and the status (never the key), which the caller turns into a reported outcome, not a crash."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx

from kopa_gen.client.errors import redact


class ChatFailure(RuntimeError):
    """The endpoint gave no usable completion."""


async def complete(http: httpx.AsyncClient, url: str, body: Mapping[str, Any], backoff_s: float) -> str:
    """One chat completion's text; 429, 5xx and transport errors are retried (3 attempts, doubling back-off);
    what still fails raises ChatFailure naming the endpoint and the status (never the key)."""
    problem = ""
    for attempt in range(3):
        if attempt:
            await asyncio.sleep(backoff_s * 2 ** (attempt - 1))
        try:
            response = await http.post(url, json=dict(body))
        except httpx.HTTPError as exc:
            problem = f"{type(exc).__name__}"
            continue
        if response.status_code == 429 or response.status_code >= 500:
            problem = f"HTTP {response.status_code}"
            continue
        if response.status_code >= 400:
            key = http.headers.get("Authorization", "").removeprefix("Bearer ")
            detail = redact(response.text[:160], [key])
            raise ChatFailure(f"endpoint {url} answered HTTP {response.status_code}: {detail}")
        try:
            return str(response.json()["choices"][0]["message"].get("content") or "")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ChatFailure(
                f"endpoint {url} sent no chat completion ({type(exc).__name__}: {exc})"
            ) from exc
    raise ChatFailure(f"endpoint {url} failed 3 times ({problem})")

"""The endpoint check `kopa-gen eval` makes before the first episode (and before a run folder exists): one chat
completion with the run's model name and, in native tool mode, one small tool, answered at once or refused.

Without it a wrong base URL, a misspelt model or a vLLM started without a tool-call parser fails every episode,
each after its retries (about 7 s each at the default back-off), and fills the run folder with failed episodes.
A refusal is one `EndpointCheckError` line saying what is wrong and what to do; only then is `/models` asked, to
name the models the server does serve."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx

from kopa_gen.client.errors import redact
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.policies.openai import EndpointError, bearer, parse_turn

PROBE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "Repeat the text.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
}
CONNECT_S = 10.0


class EndpointCheckError(UserError):
    """The model endpoint cannot serve the run (unreachable, another path, an unknown model, no tool support, a
    refused key): one line, exit status 2, and no run folder is made."""


@dataclass(frozen=True)
class Checked:
    """A passed check: how long the request took, and whether the model called the probe tool."""

    seconds: float
    called_tool: bool


async def check_endpoint(endpoint: EndpointSettings, tools: bool) -> Checked:
    """One request as the run will make them; EndpointCheckError naming the fix when it is refused."""
    key, headers = bearer(endpoint.api_key_env)
    body: dict[str, Any] = {
        "model": endpoint.model,
        "messages": [{"role": "user", "content": "Say OK."}],
        **endpoint.generation.body(),
        "max_tokens": 1,
    }
    if tools:
        body |= {"tools": [PROBE_TOOL], "tool_choice": "auto"}
    url = f"{endpoint.base_url}/chat/completions"
    where = f"the model endpoint {endpoint.base_url}"
    start = time.perf_counter()
    timeout = httpx.Timeout(endpoint.timeout_s, connect=min(CONNECT_S, endpoint.timeout_s))
    async with httpx.AsyncClient(headers=headers, timeout=timeout) as http:
        try:
            response = await http.post(url, json=body)
        except httpx.TimeoutException:
            raise EndpointCheckError(
                f"{where} did not answer within {endpoint.timeout_s:g}s; is the server up and the model loaded?"
            ) from None
        except httpx.TransportError as exc:
            reason = redact(f"{type(exc).__name__}: {exc}", [key or ""])
            raise EndpointCheckError(
                f"cannot reach {where} ({reason}); start the server (e.g. `vllm serve MODEL --port 8000`, or "
                "--serve-vllm) and give its API root, which ends in /v1"
            ) from None
        seconds = time.perf_counter() - start
        if response.status_code == 200:
            try:
                turn = parse_turn(response.json(), 0)
            except (ValueError, EndpointError) as exc:
                raise EndpointCheckError(
                    f"{url} answered 200 but not with a chat completion ({exc}); is it an OpenAI-compatible "
                    "server, and does the base URL end in /v1?"
                ) from None
            return Checked(seconds, bool(turn.calls))
        text = redact(response.text, [key or ""])[:300]  # redacted, then cut
        raise EndpointCheckError(
            await _refusal(http, endpoint, response.status_code, text, tools, url)
        ) from None


async def _refusal(
    http: httpx.AsyncClient, endpoint: EndpointSettings, status: int, text: str, tools: bool, url: str
) -> str:
    """What a refused check says, by the status and the server's own message."""
    lowered = text.lower()
    said = " ".join(text.split()) or "(an empty body)"
    if status in (401, 403):
        return (
            f"{url} refused the key (HTTP {status}: {said}); put the endpoint's key in "
            f"${endpoint.api_key_env} (--api-key-env names another variable)"
        )
    if "model" in lowered and (status == 404 or "not exist" in lowered or "not found" in lowered):
        served = await _served_models(http, endpoint)
        listed = f"; it serves: {', '.join(served)}" if served else ""
        return f"{endpoint.base_url} does not serve model {endpoint.model!r} (HTTP {status}){listed}; give --model"
    if status == 404:
        hint = "" if endpoint.base_url.endswith("/v1") else " (it usually ends in /v1)"
        return f"{url}: HTTP 404 {said}; check the base URL{hint}, e.g. http://127.0.0.1:8000/v1"
    if tools and status == 400 and "tool" in lowered:
        return (
            f"the server refuses tool calls (HTTP 400: {said}); start vLLM with --enable-auto-tool-choice "
            "--tool-call-parser PARSER for the model family (docs/evaluation.md), or run with --tool-mode prompt"
        )
    if status == 429 or status >= 500:
        return f"{url} answered HTTP {status} ({said}); is the model still loading? Try again in a moment"
    return f"{url} refused the request (HTTP {status}: {said})"


async def _served_models(http: httpx.AsyncClient, endpoint: EndpointSettings) -> list[str]:
    try:
        response = await http.get(f"{endpoint.base_url}/models")
        data = response.json().get("data") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return []
    return [str(m.get("id")) for m in data or [] if isinstance(m, dict) and m.get("id")][:10]

"""A protocol double of an OpenAI-compatible chat-completions server. It is NOT a model.

`ChatDouble` serves `POST /v1/chat/completions` on a loopback port and answers each request with the next entry
of a fixed script: an assistant message (`Reply`, with tool calls or text), an HTTP failure (`Fail`, e.g. 500 or
429), or an arbitrary body (`Raw`, for servers that bend the format). Any entry may be delayed to exercise
time-outs. It records every request it received, so tests can check what our policy sent (messages, tools, tool
results, headers). It exists to test *our* handling of the protocol over real HTTP; it knows nothing of tasks.

    with ChatDouble([Reply(tool_calls=[ToolCall("dart_corp_code", {"corp_name": "삼성전자"})]),
                     Reply(content="정답: ...")]) as double:
        policy = OpenAIPolicy(base_url=double.base_url, model="double")
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass(frozen=True)
class ToolCall:
    """A scripted tool call. `arguments` as a mapping is JSON-encoded; as a string it is sent verbatim (so it can
    be malformed JSON). Without an id the double makes one up (`call_<request>_<index>`)."""

    name: str
    arguments: str | Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """A 200 chat completion with one assistant message. `content` None is sent as JSON null; the `tool_calls`
    key is left out when there are none; `finish_reason` defaults to "tool_calls" or "stop"; `usage` gives the
    token counts the body reports (scripted numbers, not measured ones)."""

    content: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    finish_reason: str | None = None
    delay_s: float = 0.0
    usage: tuple[int, int] | None = (0, 0)  # (prompt, completion) tokens; None leaves `usage` out


@dataclass(frozen=True)
class Fail:
    """An HTTP error with an OpenAI-style error body."""

    status: int
    message: str = "scripted failure"
    delay_s: float = 0.0


@dataclass(frozen=True)
class Raw:
    """Any JSON body with any status, for responses that bend the format."""

    body: Any
    status: int = 200
    delay_s: float = 0.0


Step = Reply | Fail | Raw


@dataclass(frozen=True)
class Received:
    """One request as the double received it (header names lower-cased)."""

    path: str
    headers: dict[str, str]
    body: Any


def _completion(step: Reply, n: int, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.content}
    if step.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{n}_{i}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(dict(call.arguments), ensure_ascii=False),
                },
            }
            for i, call in enumerate(step.tool_calls)
        ]
    finish = step.finish_reason or ("tool_calls" if step.tool_calls else "stop")
    body: dict[str, Any] = {
        "id": f"chatcmpl-double-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if step.usage is not None:
        prompt, completion = step.usage
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return body


class ChatDouble:
    """The scripted server; use as a context manager or call start() and stop()."""

    def __init__(self, script: Iterable[Step]) -> None:
        self._script: deque[Step] = deque(script)
        self.requests: list[Received] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._base_url: str | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    @property
    def bodies(self) -> list[Any]:
        """The request bodies received so far, in order."""
        return [r.body for r in self.requests]

    @property
    def remaining(self) -> int:
        """Script entries not yet served."""
        return len(self._script)

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError("the chat double is not started")
        return self._base_url

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "double", "object": "model"}]})

    async def _chat(self, request: Request) -> Response:
        try:
            body: Any = await request.json()
        except ValueError:
            body = (await request.body()).decode("utf-8", "replace")
        self.requests.append(Received(request.url.path, dict(request.headers), body))
        n = len(self.requests)
        if not self._script:
            return JSONResponse(
                {"error": {"message": f"chat double: script exhausted at request {n}", "type": "double"}},
                status_code=400,
            )
        step = self._script.popleft()
        if step.delay_s and await _sleep_unless_disconnected(request, step.delay_s):
            return Response(status_code=499)
        model = body.get("model", "double") if isinstance(body, dict) else "double"
        match step:
            case Reply():
                # ASCII JSON, as many servers write it: text that is not UTF-8 (an unpaired surrogate a model
                # produced) travels as its escape, as it would from them
                return Response(json.dumps(_completion(step, n, str(model))), media_type="application/json")
            case Fail():
                error = {"message": step.message, "type": "double", "code": step.status}
                return JSONResponse({"error": error}, status_code=step.status)
            case Raw():
                return JSONResponse(step.body, status_code=step.status)
            case _:
                assert_never(step)

    def start(self) -> ChatDouble:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="chat-double", daemon=True
        )
        self._socket, self._server, self._thread = sock, server, thread
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the chat double did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server, self._thread, self._socket = None, None, None

    def __enter__(self) -> ChatDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def _sleep_unless_disconnected(request: Request, seconds: float) -> bool:
    """Wait, but give up as soon as the client hangs up (a timed-out policy), so that stop() is quick."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if await request.is_disconnected():
            return True
        await asyncio.sleep(min(left, 0.05))
    return False

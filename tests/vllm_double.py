"""A protocol double of `vllm serve` for the launcher's tests. It is NOT vLLM and loads no model.

Run as `python tests/vllm_double.py serve MODEL --host H --port P --served-model-name NAME [flags...]` (what
`kopa-gen eval --serve-vllm` runs when $KOPA_GEN_VLLM names this script): it writes the command line it was given
to $KOPA_TEST_VLLM_ARGV (one JSON list), waits $KOPA_TEST_VLLM_DELAY seconds as a loading model would (503 on
/health meanwhile), then serves `/health`, `/v1/models` (the served name) and `/v1/chat/completions`, answering
every request with one fixed reply and counting them in $KOPA_TEST_VLLM_ARGV + ".requests". With
$KOPA_TEST_VLLM_FAIL set it prints that text and exits with status 3 instead, as a server that cannot load."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def main(argv: list[str]) -> int:
    record = os.environ.get("KOPA_TEST_VLLM_ARGV")
    if record:
        Path(record).write_text(json.dumps(argv), encoding="utf-8")
    failure = os.environ.get("KOPA_TEST_VLLM_FAIL")
    if failure:
        print(failure, flush=True)
        return 3
    port = int(argv[argv.index("--port") + 1])
    name = argv[argv.index("--served-model-name") + 1]
    ready_at = time.monotonic() + float(os.environ.get("KOPA_TEST_VLLM_DELAY", "0"))
    counter = Path(record + ".requests") if record else None

    async def health(request: Request) -> Response:
        return Response(status_code=200 if time.monotonic() >= ready_at else 503)

    async def models(request: Request) -> Response:
        if time.monotonic() < ready_at:
            return JSONResponse({"error": {"message": "loading"}}, status_code=503)
        return JSONResponse({"object": "list", "data": [{"id": name, "object": "model"}]})

    async def chat(request: Request) -> Response:
        body = await request.json()
        if counter is not None:
            with counter.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"model": body.get("model"), "tools": bool(body.get("tools"))}) + "\n")
        message = {"role": "assistant", "content": "정답: 모르겠습니다"}
        return JSONResponse(
            {
                "id": "chatcmpl-vllm-double",
                "object": "chat.completion",
                "model": name,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            }
        )

    app = Starlette(
        routes=[
            Route("/health", health),
            Route("/v1/models", models),
            Route("/v1/chat/completions", chat, methods=["POST"]),
        ]
    )
    print(f"vllm double serving {name} on 127.0.0.1:{port}", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

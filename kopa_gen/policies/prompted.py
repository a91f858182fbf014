"""Prompt-mode tool calling, for servers without a tool-call parser (a vLLM started without
`--enable-auto-tool-choice`, a plain completion server behind a chat template): the tools are described in the
system prompt, the model writes each call as a `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` block
in its reply (the Hermes layout most open models were trained on), and the results come back in the next user
message as `<tool_response name="...">` blocks. A block that is not JSON reaches the session as `Unparsed`, so the
model reads which character the parser stopped at, exactly as in native mode.

Registered as tool mode `prompt` (kopa_gen.policies.openai.TOOL_PROTOCOLS)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from kopa_gen.mcp.toolbox import Unparsed, parse_arguments
from kopa_gen.policies.openai import TOOL_PROTOCOLS, Call, Turn, parse_turn

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')


@dataclass(frozen=True)
class PromptTurn(Turn):
    """A prompt-mode turn: `text` is the reply as the model wrote it, call blocks included (what goes back into
    the transcript); `content` is the text around the blocks."""

    text: str = ""


def describe_tools(tools: list[dict[str, Any]], parallel: bool) -> str:
    """The system prompt's tool section: how to call, then one JSON line per tool (name, description, schema),
    from the session's tools (MCP format)."""
    lines = [
        "",
        "",
        "# 도구",
        "도구를 부르려면 답변에 다음 형식의 블록을 쓰세요. 인자는 JSON 객체 하나입니다.",
        "<tool_call>",
        '{"name": "<도구 이름>", "arguments": {"<인자>": "<값>"}}',
        "</tool_call>",
        "한 답변에 블록을 여러 개 쓰면 함께 실행됩니다." if parallel else "한 답변에는 블록을 하나만 쓰세요.",
        '결과는 다음 사용자 메시지에 <tool_response name="<도구 이름>"> 블록으로 옵니다. '
        "블록이 없는 답변은 최종 답변입니다.",
        "<tools>",
    ]
    for tool in tools:  # MCP format, as the session lists them
        lines.append(
            json.dumps(
                {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": tool["inputSchema"],
                },
                ensure_ascii=False,
            )
        )
    lines.append("</tools>")
    return "\n".join(lines)


def read_calls(text: str, turn: int) -> tuple[str, list[Call]]:
    """The calls written in `text` (in order) and the text around them. A block that is not a JSON object with a
    `name` still becomes a call, with `Unparsed` arguments saying where the parser stopped."""
    calls: list[Call] = []
    for i, match in enumerate(_BLOCK.finditer(text)):
        body = match.group(1).strip()
        value = parse_arguments(body)
        call_id = f"call_{turn}_{i}"
        if isinstance(value, Unparsed):
            named = _NAME.search(body)
            calls.append(Call(call_id, named.group(1) if named else "", body, value))
        elif not isinstance(value, dict) or not isinstance(value.get("name"), str):
            problem = Unparsed(body, 'expected {"name": "<tool>", "arguments": {...}}')
            calls.append(Call(call_id, "", body, problem))
        else:
            arguments = value.get("arguments")
            if isinstance(
                arguments, str
            ):  # arguments written as a JSON string, as the native protocol has them
                arguments = parse_arguments(arguments) if arguments.strip() else {}
            calls.append(Call(call_id, value["name"], body, {} if arguments is None else arguments))
    return _BLOCK.sub("", text).strip(), calls


@TOOL_PROTOCOLS.register("prompt")
class PromptTools:
    name = "prompt"

    def system_suffix(self, tools: list[dict[str, Any]], parallel: bool) -> str:
        return describe_tools(tools, parallel) if tools else ""

    def request_fields(self, tools: list[dict[str, Any]], parallel: bool) -> dict[str, Any]:
        return {}  # the tools are in the system prompt

    def turn(self, body: Any, turn: int) -> Turn:
        native = parse_turn(body, turn)  # checks the body; a server that parsed calls anyway keeps them
        content, calls = read_calls(native.content, turn)
        text = native.content
        for call in native.calls:
            text += "\n<tool_call>\n" + json.dumps(
                {"name": call.tool, "arguments": call.arguments}, ensure_ascii=False
            )
            text += "\n</tool_call>"
        return PromptTurn(content, [*calls, *native.calls], native.finish_reason, native.usage, text)

    def message(self, turn: Turn) -> dict[str, Any]:
        text = turn.text if isinstance(turn, PromptTurn) else turn.content
        return {"role": "assistant", "content": text}

    def results(self, calls: list[Call], texts: list[str]) -> list[dict[str, Any]]:
        blocks = [
            f'<tool_response name="{call.tool}">\n{text}\n</tool_response>'
            for call, text in zip(calls, texts, strict=True)
        ]
        return [{"role": "user", "content": "\n".join(blocks)}]

"""How an agent meets a catalog too large to list: the exposure modes, and search mode's two tools.

    all     every tool of the platforms opened, listed
    task    the task's own list: its gold tools and decoys of the same platforms (`Task.tools`; every tool of the
            task's platforms where it gives none)
    search  each platform's entry tools (`x-kopa.entry`: the code lookups chains start from) and two more:
            `search_tools` finds tools by what they do, `call_tool` calls any tool by name. What FastMCP's
            search transforms and client-side deferred tool loading give a model facing thousands of tools.

`search_tools` ranks with Okapi BM25 (k1 1.2, b 0.75) over each tool's name, Korean title and description and its
parameters' names and descriptions. Korean has no spaces inside compounds (법정동코드, 학사일정), so a Hangul run
is indexed as itself and as its character bigrams; Latin text as lower-case words, names split at `_`. A result
names the tool, says what it does and gives its input schema, so the next step is a `call_tool`."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kopa_gen.mcp.toolbox import ToolOutcome, result_text

SEARCH_TOOL = "search_tools"
CALL_TOOL = "call_tool"
LIMIT = 10  # results of a search unless the model asks for another number
MAX_LIMIT = 25
K1, B = 1.2, 0.75

_HANGUL = re.compile(r"[가-힣]+")
_LATIN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Index terms: each Hangul run and its character bigrams; lower-case Latin words and numbers (`_` splits)."""
    text = unicodedata.normalize("NFC", text).lower()
    out: list[str] = []
    for run in _HANGUL.findall(text):
        out.append(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    out.extend(_LATIN.findall(text.replace("_", " ")))
    return out


def tool_text(tool: Mapping[str, Any]) -> str:
    """What a tool is found by: its name and title twice (they name it), its description, its parameters."""
    head = f"{tool['name']} {tool.get('title') or ''}"
    parts = [head, head, str(tool.get("description") or "")]
    props = (tool.get("inputSchema") or {}).get("properties") or {}
    for name, schema in props.items():
        parts.append(str(name))
        if isinstance(schema, Mapping):
            parts.append(str(schema.get("description") or ""))
    return "\n".join(parts)


@dataclass(frozen=True)
class ToolIndex:
    """BM25 over a set of MCP tools (wire form, as tools.json freezes them)."""

    tools: tuple[Mapping[str, Any], ...]
    postings: Mapping[str, tuple[tuple[int, int], ...]]  # term -> (tool index, term frequency)
    lengths: tuple[int, ...]
    average: float

    @classmethod
    def of(cls, tools: Sequence[Mapping[str, Any]]) -> ToolIndex:
        postings: dict[str, list[tuple[int, int]]] = {}
        lengths: list[int] = []
        for i, tool in enumerate(tools):
            counts = Counter(tokens(tool_text(tool)))
            lengths.append(sum(counts.values()))
            for term, n in counts.items():
                postings.setdefault(term, []).append((i, n))
        average = sum(lengths) / len(lengths) if lengths else 1.0
        frozen = {term: tuple(hits) for term, hits in postings.items()}
        return cls(tuple(tools), frozen, tuple(lengths), average or 1.0)

    def search(self, query: str, limit: int = LIMIT) -> list[tuple[Mapping[str, Any], float]]:
        """The best `limit` tools for `query`, best first (ties by name); tools sharing no term are not returned."""
        n = len(self.tools)
        scores: dict[int, float] = {}
        for term in set(tokens(query)):
            hits = self.postings.get(term)
            if not hits:
                continue
            idf = math.log(1 + (n - len(hits) + 0.5) / (len(hits) + 0.5))
            for i, tf in hits:
                norm = tf + K1 * (1 - B + B * self.lengths[i] / self.average)
                scores[i] = scores.get(i, 0.0) + idf * tf * (K1 + 1) / norm
        best = sorted(scores.items(), key=lambda kv: (-kv[1], str(self.tools[kv[0]]["name"])))[:limit]
        return [(self.tools[i], score) for i, score in best]


def search_tool(universe: int) -> dict[str, Any]:
    """`search_tools` in MCP wire form."""
    return {
        "name": SEARCH_TOOL,
        "title": "도구 찾기",
        "description": (
            f"이 서버의 도구 {universe:,}개 가운데 할 일에 맞는 도구를 찾습니다. 찾을 내용을 한국어나 영어 낱말로 "
            "쓰세요 (예: '학교 급식 식단', '법정동 코드', 'corp_code 공시 목록'). 각 결과는 도구 이름, 설명, 입력 "
            f"스키마입니다. 찾은 도구는 {CALL_TOOL}로 부릅니다. 검색은 도구 호출 횟수에 세지 않습니다."
        ),
        "inputSchema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["query"],
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "찾을 내용 (낱말 몇 개)"},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": f"결과 수 (기본 {LIMIT}, 최대 {MAX_LIMIT})",
                },
            },
        },
        "annotations": {"readOnlyHint": True},
    }


def call_tool() -> dict[str, Any]:
    """`call_tool` in MCP wire form."""
    return {
        "name": CALL_TOOL,
        "title": "도구 부르기",
        "description": (
            f"{SEARCH_TOOL}로 찾은 도구를 이름과 인자로 부릅니다. 결과와 오류는 그 도구를 직접 부른 것과 같습니다."
        ),
        "inputSchema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name"],
            "properties": {
                "name": {
                    "type": "string",
                    "minLength": 1,
                    "description": "도구 이름 (search_tools 결과의 name)",
                },
                "arguments": {"type": "object", "description": "그 도구의 인자 (입력 스키마대로)"},
            },
        },
    }


def found(index: ToolIndex, arguments: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The answer of a `search_tools` call: ({"tools": [...]}, None), or (None, what is wrong with the call)."""
    if not isinstance(arguments, Mapping):
        return None, f'arguments for {SEARCH_TOOL} must be a JSON object such as {{"query": "법정동 코드"}}'
    unknown = sorted(set(arguments) - {"query", "limit"})
    query, limit = arguments.get("query"), arguments.get("limit", LIMIT)
    if unknown:
        return None, f"invalid arguments for {SEARCH_TOOL}: {', '.join(unknown)}: unknown argument"
    if not isinstance(query, str) or not query.strip():
        return None, f"invalid arguments for {SEARCH_TOOL}: query: give a few words to search for"
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return None, f"invalid arguments for {SEARCH_TOOL}: limit: an integer from 1 to {MAX_LIMIT}"
    hits = index.search(query, limit)
    tools = [
        {
            "name": tool["name"],
            "title": tool.get("title") or "",
            "description": tool.get("description") or "",
            "inputSchema": tool.get("inputSchema") or {},
        }
        for tool, _ in hits
    ]
    return {"query": query, "tools": tools}, None


def unwrapped(arguments: Any) -> tuple[str, Any] | str:
    """(tool name, its arguments) of a `call_tool` call, or what is wrong with the call."""
    if not isinstance(arguments, Mapping):
        return (
            f'arguments for {CALL_TOOL} must be a JSON object such as {{"name": "...", "arguments": {{...}}}}'
        )
    unknown = sorted(set(arguments) - {"name", "arguments"})
    if unknown:
        return f"invalid arguments for {CALL_TOOL}: {', '.join(unknown)}: unknown argument"
    name = arguments.get("name")
    if not isinstance(name, str) or not name:
        return f"invalid arguments for {CALL_TOOL}: name: the tool's name, as {SEARCH_TOOL} gives it"
    inner = arguments.get("arguments")
    return name, ({} if inner is None else inner)


@dataclass(frozen=True)
class Routed:
    """Where a search-mode call goes: `answer` where it ends at once (a search's result, or what is wrong with a
    `search_tools` or `call_tool` call: a tool error), else the platform `tool` with its `arguments`, `through`
    `call_tool` or called by name."""

    tool: str
    arguments: Any
    answer: ToolOutcome | None = None
    through: bool = False


def malformed(problem: str) -> ToolOutcome:
    """The tool error for a `search_tools` or `call_tool` call whose arguments are wrong: what is wrong and how."""
    return ToolOutcome(True, problem, None, "bad_arguments", "bad_param")


def route(index: ToolIndex, tool: str, arguments: Any) -> Routed:
    """A call in search mode, as the MCP server and the session both take it."""
    if tool == SEARCH_TOOL:
        data, problem = found(index, arguments)
        if data is None:
            return Routed(tool, arguments, malformed(str(problem)))
        return Routed(tool, arguments, ToolOutcome(False, result_text(data), data))
    if tool == CALL_TOOL:
        inner = unwrapped(arguments)
        if isinstance(inner, str):
            return Routed(tool, arguments, malformed(inner))
        return Routed(*inner, through=True)
    return Routed(tool, arguments)

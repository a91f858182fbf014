"""EDGE's two LLM-backed components over real loopback HTTP, against the chat-completions protocol double
(kopa_gen/policies/double.py: it replays a script and records requests; it is not a model):

- the edge scorer `LLMScorer` (and `parse_proposal`) on real tool signatures: what it sends, how it turns a reply
  into a Proposal (bindings checked against the real arguments and fields, score clamped, defaults filtered), and
  what an HTTP failure does;
- the query writer `LLMWriter` on a composed question: a rewrite that keeps every value the chain depends on is
  used; one that drops a value, adds API vocabulary or is empty keeps the composed question, and so does a
  failing endpoint, each counted in the writer's summary;
- Phase A end to end with `LLMScorer` replaying the offline scorer's verdicts: the same G* as the offline run.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from kopa_gen.edge.graph import GraphConfig, PhaseA, problems, run_phase_a, to_json
from kopa_gen.edge.links import kind_table
from kopa_gen.edge.retriever import RetrieverConfig
from kopa_gen.edge.scorer import (
    Binding,
    Examples,
    Kinds,
    LLMScorer,
    OfflineScorer,
    Proposal,
    Samples,
    parse_proposal,
)
from kopa_gen.edge.signatures import ToolSig, load_signatures
from kopa_gen.edge.writer import LLMWriter
from kopa_gen.edge.writer import prompt as prompt_version_of
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.task import Task
from kopa_gen.policies.double import ChatDouble, Fail, Raw, Reply, Step
from kopa_gen.project import Project, load_project
from tests.conftest import declared_tools, repository_project

KEY_ENV = "KOPA_TEST_EDGE_LLM_KEY"
FAKE_KEY = "sk-edge-double-7f3a91c2"
MODEL = "double-edge-model"


def at(base_url: str) -> EndpointSettings:
    return EndpointSettings(base_url=base_url, model=MODEL, api_key_env=KEY_ENV, retries=2, backoff_s=0.01)


PRODUCER, CONSUMER = "dart_corp_code", "dart_dividends"
SAMPLES = Samples(
    {
        PRODUCER: {
            "corp_code": ("00126380", "00164779", "00164742", "00401731"),
            "corp_name": ("삼성전자", "SK하이닉스"),
        }
    }
)
CORP_CODE = {"param": "corp_code", "field": "corp_code"}
WRITER_SEED = 7
KINDS = kind_table(load_project())


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


@pytest.fixture(scope="module")
def sigs(project: Project) -> dict[str, ToolSig]:
    return {s.name: s for s in load_signatures(project, ["dart"])}


@pytest.fixture(scope="module")
def examples(project: Project) -> Examples:
    return project.platform("dart").kopa.examples


def answer(**data: Any) -> Reply:
    """A reply whose content is the JSON object the scorer asks for."""
    return Reply(content=json.dumps(data, ensure_ascii=False))


def prompt_of(double: ChatDouble, i: int = 0) -> str:
    messages = double.bodies[i]["messages"]
    assert [m["role"] for m in messages] == ["user"]
    content: str = messages[0]["content"]
    return content


async def score_with(
    double: ChatDouble, producer: ToolSig, consumer: ToolSig, examples: Examples
) -> Proposal | None:
    scorer = LLMScorer(at(double.base_url))
    try:
        return await scorer.score(producer, consumer, SAMPLES, examples, KINDS)
    finally:
        await scorer.aclose()


# --- the edge scorer ---------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_scorer_request_names_both_sides_and_carries_the_key(
    monkeypatch: pytest.MonkeyPatch, sigs: dict[str, ToolSig], examples: Examples
) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    producer, consumer = sigs[PRODUCER], sigs[CONSUMER]
    reply = answer(score=0.9, bindings=[CORP_CODE, {"param": "company_id", "field": "corp_code"}])
    with ChatDouble([reply]) as double:
        proposal = await score_with(double, producer, consumer, examples)

    assert len(double.requests) == 1 and double.remaining == 0
    request = double.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"
    body = request.body
    assert (body["model"], body["temperature"], body["seed"]) == (MODEL, 0, 0)
    prompt = prompt_of(double)
    assert f"Producer tool {PRODUCER} ({producer.title})" in prompt
    assert f"Consumer tool {CONSUMER} ({consumer.title})" in prompt
    for out in producer.outputs:
        assert f"- {out.name}: " in prompt, out.name
    assert (
        "- corp_code: " in prompt and "(e.g. 00126380, 00164779, 00164742)" in prompt
    )  # three samples at most
    assert "00401731" not in prompt
    for param in consumer.bindable:
        assert f"- {param.name} (required): " in prompt, param.name
    assert "pattern ^[0-9]{8}$" in prompt and "one of 11013, 11012, 11014, 11011" in prompt
    assert proposal is not None and proposal.reason  # the dropped binding is named
    assert FAKE_KEY not in proposal.reason and FAKE_KEY not in json.dumps(body, ensure_ascii=False)


@pytest.mark.anyio
async def test_scorer_sends_no_authorization_without_a_key(
    sigs: dict[str, ToolSig], examples: Examples
) -> None:
    with ChatDouble([answer(score=0.5, bindings=[CORP_CODE])]) as double:
        await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples)
    assert "authorization" not in double.requests[0].headers


@pytest.mark.anyio
async def test_scorer_asks_nothing_for_a_tool_paired_with_itself(
    sigs: dict[str, ToolSig], examples: Examples
) -> None:
    with ChatDouble([]) as double:
        assert await score_with(double, sigs[CONSUMER], sigs[CONSUMER], examples) is None
    assert double.requests == []


def test_prompt_leaves_paging_arguments_out(sigs: dict[str, ToolSig]) -> None:
    scorer = LLMScorer(at("http://127.0.0.1:9/v1"))
    consumer = sigs["dart_list_disclosures"]
    assert {"page_no", "page_count"} <= {p.name for p in consumer.params}
    prompt = scorer.prompt(sigs[PRODUCER], consumer, SAMPLES)
    assert "- page_no" not in prompt and "- page_count" not in prompt
    assert "- corp_code: " in prompt and "- corp_code (required)" not in prompt  # optional there
    asyncio.run(scorer.aclose())


@pytest.mark.anyio
@pytest.mark.parametrize(("score", "clamped"), [(0.42, 0.42), (1.7, 1.0), (-0.4, 0.0), ("0.8", 0.8)])
async def test_a_real_binding_becomes_the_proposal(
    sigs: dict[str, ToolSig], examples: Examples, score: Any, clamped: float
) -> None:
    reply = answer(
        score=score,
        bindings=[CORP_CODE],
        defaults={
            "bsns_year": ["2025", 2024],  # a known argument: kept, ints stay ints
            "reprt_code": ["11011"],
            "fs_div": ["CFS"],  # an argument of another tool: dropped
            "dividend_year": ["2025"],  # no such argument: dropped
            "stock_knd": [],  # no values: dropped
        },
    )
    with ChatDouble([reply]) as double:
        proposal = await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples)
    assert proposal is not None
    assert (proposal.producer, proposal.consumer, proposal.score, proposal.reason) == (
        PRODUCER,
        CONSUMER,
        clamped,
        "",
    )
    assert proposal.bindings == (Binding("corp_code", "corp_code", clamped),)
    # the scorer's values first, then the documented literal values of the argument (completed, not replaced)
    assert set(proposal.defaults) == {"bsns_year", "reprt_code"}
    assert proposal.defaults["bsns_year"][:2] == ("2025", 2024)
    assert proposal.defaults["reprt_code"][0] == "11011" and len(proposal.defaults["reprt_code"]) > 1


@pytest.mark.anyio
async def test_unknown_bindings_are_dropped_and_named(sigs: dict[str, ToolSig], examples: Examples) -> None:
    bindings = [
        {"param": "company_id", "field": "corp_code"},  # no such consumer argument
        CORP_CODE,
        {"param": "bsns_year", "field": "fiscal_year"},  # no such producer field
        {"param": "corp_name", "field": "corp_name"},  # a producer field, not a consumer argument
    ]
    with ChatDouble([answer(score=0.7, bindings=bindings)]) as double:
        proposal = await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples)
    assert proposal is not None
    assert proposal.bindings == (Binding("corp_code", "corp_code", 0.7),)
    assert proposal.score == 0.7
    assert proposal.reason.startswith("dropped unknown bindings")
    for name in ("company_id", "fiscal_year", "corp_name"):
        assert name in proposal.reason


@pytest.mark.anyio
@pytest.mark.parametrize(
    "data",
    [
        {"score": 0.8, "bindings": []},
        {"score": 0.8},
        {"score": 0.8, "bindings": [{"param": "company_id", "field": "corp_code"}]},
        {"score": 0.8, "bindings": {"corp_code": "corp_code"}},  # not a list
    ],
    ids=["empty", "missing", "unknown-only", "not-a-list"],
)
async def test_a_reply_binding_nothing_is_none(
    sigs: dict[str, ToolSig], examples: Examples, data: dict[str, Any]
) -> None:
    with ChatDouble([answer(**data)]) as double:
        assert await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples) is None
    assert len(double.requests) == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    "content",
    [
        "corp_code feeds corp_code, I am fairly sure.",
        '{"bindings": [{"param": "corp_code", "field": "corp_code"}]}',  # no score
        '{"score": "high", "bindings": []}',
        '{"score": 0.9, "bindings": [',  # truncated
        None,
    ],
    ids=["prose", "no-score", "score-not-a-number", "truncated", "null-content"],
)
async def test_an_unparsable_reply_scores_zero(
    sigs: dict[str, ToolSig], examples: Examples, content: str | None
) -> None:
    with ChatDouble([Reply(content=content)]) as double:
        proposal = await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples)
    assert proposal is not None
    assert (proposal.producer, proposal.consumer) == (PRODUCER, CONSUMER)
    assert (proposal.score, proposal.bindings, proposal.defaults) == (0.0, (), {})
    assert proposal.reason.startswith("unparsable scorer reply")


def test_json_inside_prose_or_a_code_fence_is_read(sigs: dict[str, ToolSig]) -> None:
    text = 'Here it is:\n```json\n{"score": 0.6, "bindings": [{"param": "corp_code", "field": "corp_code"}]}\n```'
    proposal = parse_proposal(text, sigs[PRODUCER], sigs[CONSUMER])
    assert proposal is not None and proposal.bindings == (Binding("corp_code", "corp_code", 0.6),)


@pytest.mark.anyio
@pytest.mark.parametrize("status", [500, 429])
async def test_a_transient_failure_is_retried(
    monkeypatch: pytest.MonkeyPatch, sigs: dict[str, ToolSig], examples: Examples, status: int
) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    script = [Fail(status), answer(score=0.9, bindings=[CORP_CODE])]
    with ChatDouble(script) as double:
        proposal = await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples)
    assert len(double.requests) == 2 and double.remaining == 0
    assert proposal is not None and proposal.bindings == (Binding("corp_code", "corp_code", 0.9),)


@pytest.mark.anyio
async def test_an_endpoint_that_keeps_failing_rejects_the_pair_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, sigs: dict[str, ToolSig], examples: Examples
) -> None:
    """Three 503s: the pair becomes a zero-score proposal without bindings (Phase A lists it under `rejected`
    and reports an empty skeleton with the endpoint's failure), never a traceback; the key is not in it."""
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    with ChatDouble([Fail(503)] * 3) as double:
        proposal = await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples)
    assert len(double.requests) == 3
    assert proposal is not None and proposal.bindings == () and proposal.score == 0.0
    assert "failed after 3 attempts: HTTP 503" in proposal.reason and double.base_url in proposal.reason
    assert FAKE_KEY not in proposal.reason


@pytest.mark.anyio
async def test_a_client_error_echoing_the_key_is_redacted(
    monkeypatch: pytest.MonkeyPatch, sigs: dict[str, ToolSig], examples: Examples
) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    with ChatDouble([Fail(401, message=f"bad key {FAKE_KEY}")]) as double:
        proposal = await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples)
    assert len(double.requests) == 1  # a 4xx is not retried
    assert proposal is not None and "HTTP 401" in proposal.reason and FAKE_KEY not in proposal.reason


@pytest.mark.anyio
async def test_a_body_that_is_not_a_chat_completion_is_a_reported_failure(
    sigs: dict[str, ToolSig], examples: Examples
) -> None:
    body = Raw({"object": "error", "detail": "model not loaded"})
    with ChatDouble([body]) as double:
        proposal = await score_with(double, sigs[PRODUCER], sigs[CONSUMER], examples)
    assert proposal is not None and proposal.bindings == ()
    assert "malformed chat completion: choices" in proposal.reason


# Malformed replies: dropped or ignored, never an exception out of the scorer.


def test_a_binding_that_is_not_an_object_is_dropped(sigs: dict[str, ToolSig]) -> None:
    text = json.dumps({"score": 0.9, "bindings": [CORP_CODE, "bsns_year"]})
    proposal = parse_proposal(text, sigs[PRODUCER], sigs[CONSUMER])
    assert proposal is not None and proposal.bindings == (Binding("corp_code", "corp_code", 0.9),)
    assert "bsns_year" in proposal.reason


def test_defaults_that_are_not_an_object_are_ignored(sigs: dict[str, ToolSig]) -> None:
    text = json.dumps({"score": 0.9, "bindings": [CORP_CODE], "defaults": ["2025"]})
    proposal = parse_proposal(text, sigs[PRODUCER], sigs[CONSUMER])
    assert proposal is not None and proposal.defaults == {}


def test_defaults_for_a_bound_argument_are_dropped(sigs: dict[str, ToolSig]) -> None:
    text = json.dumps({"score": 0.9, "bindings": [CORP_CODE], "defaults": {"corp_code": ["00126380"]}})
    proposal = parse_proposal(text, sigs[PRODUCER], sigs[CONSUMER])
    assert proposal is not None and "corp_code" not in proposal.defaults


def test_a_nan_score_is_not_a_score(sigs: dict[str, ToolSig]) -> None:
    text = '{"score": NaN, "bindings": [{"param": "corp_code", "field": "corp_code"}]}'
    proposal = parse_proposal(text, sigs[PRODUCER], sigs[CONSUMER])
    assert proposal is not None and 0.0 <= proposal.score <= 1.0


# --- the query writer --------------------------------------------------------------------------------------

COMPOSED = "2025년 사업보고서 기준 삼성전자의 배당 현황 중 주당 현금배당금은 얼마인가요?"
KEEP = ["삼성전자", "2025년 사업보고서"]


@pytest.fixture(scope="module")
def task() -> Task:
    """A composed question as Phase B hands it to the writer (the writer reads only the query)."""
    return Task.model_construct(id="seq-0001", domain="finance", query=COMPOSED)


async def write_with(
    double: ChatDouble, task: Task, writer: LLMWriter | None = None
) -> tuple[str | None, LLMWriter]:
    writer = writer or LLMWriter(at(double.base_url))
    try:
        return await writer.write(task, KEEP, random.Random(WRITER_SEED)), writer
    finally:
        await writer.aclose()


@pytest.mark.anyio
async def test_a_rewrite_keeping_every_value_is_used(monkeypatch: pytest.MonkeyPatch, task: Task) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    rewrite = "삼성전자가 2025년 사업보고서에 밝힌 주당 현금배당금은 얼마였나요?"
    with ChatDouble([Reply(content=f"  {rewrite}\n")]) as double:
        text, writer = await write_with(double, task)
    assert text == rewrite and (writer.accepted, writer.rejected, writer.failed) == (1, 0, 0)
    request = double.requests[0]
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert (request.body["model"], request.body["temperature"]) == (MODEL, 0)
    assert request.body["seed"] == random.Random(WRITER_SEED).randrange(2**31)
    prompt = prompt_of(double)
    assert prompt.endswith(f"질문: {COMPOSED}\n") and "'2025년 사업보고서', '삼성전자'" in prompt
    assert writer.summary().startswith(f"llm writer ({prompt_version_of('writer').version}): 1 rewrites kept")


@pytest.mark.anyio
@pytest.mark.parametrize(
    "reply",
    [
        "삼성전자의 주당 현금배당금은 얼마인가요?",  # drops the report
        "2025년 사업보고서 기준 삼성의 주당 배당금은?",  # shortens the name
        "삼성전자 2025년 사업보고서의 DPS(alotMatter)는 얼마인가요?",  # API vocabulary
        "",
        "  \n ",
    ],
)
async def test_a_rewrite_that_drops_a_value_or_adds_api_words_keeps_the_composed_question(
    task: Task, reply: str
) -> None:
    with ChatDouble([Reply(content=reply)]) as double:
        text, writer = await write_with(double, task)
    assert text is None and writer.rejected == 1 and writer.accepted == 0


@pytest.mark.anyio
async def test_a_failing_endpoint_keeps_the_composed_question_and_says_so(task: Task) -> None:
    with ChatDouble([Fail(503)] * 3) as double:
        text, writer = await write_with(double, task)
    assert len(double.requests) == 3
    assert text is None and writer.failed == 1 and writer.rejected == 0
    assert "HTTP 503" in writer.last_error and "1 failed; last error: " in writer.summary()


# --- Phase A end to end ------------------------------------------------------------------------------------


def small_fsc() -> GraphConfig:
    return GraphConfig(
        platforms=("fsc",),
        tools=declared_tools(repository_project(), "fsc"),
        retriever=RetrieverConfig(model="none"),
        max_iterations=3,
        min_iterations=3,
        paths_per_iteration=16,
        audit_trials=1,
    )


class RecordingOffline:
    """The offline scorer, recording each pair it was asked about (in order) and its verdict."""

    name = "offline"

    def __init__(self) -> None:
        self.inner = OfflineScorer()
        self.asked: list[tuple[str, str, Proposal | None]] = []

    async def score(
        self, producer: ToolSig, consumer: ToolSig, samples: Samples, examples: Examples, kinds: Kinds
    ) -> Proposal | None:
        proposal = await self.inner.score(producer, consumer, samples, examples, kinds)
        self.asked.append((producer.name, consumer.name, proposal))
        return proposal


def verdict(proposal: Proposal | None) -> dict[str, Any]:
    """The offline verdict as the JSON the LLM scorer asks for."""
    if proposal is None:
        return {"score": 0.0, "bindings": []}
    return {
        "score": proposal.score,
        "bindings": [{"param": b.param, "field": b.field} for b in proposal.bindings],
        "defaults": {k: list(v) for k, v in proposal.defaults.items()},
    }


def comparable(doc: Mapping[str, Any]) -> dict[str, Any]:
    """G* without what legitimately differs between scorers: per-binding scores (the LLM scorer gives every
    binding the pair's score) and the reason text."""
    edges = [
        dict(e, bindings=[{"param": b["param"], "field": b["field"]} for b in e["bindings"]], reason=None)
        for e in doc["edges"]
    ]
    return {k: doc[k] for k in ("roots", "starts", "analysis", "iterations")} | {"edges": edges}


def test_phase_a_with_the_llm_scorer_replaying_offline_verdicts(project: Project) -> None:
    config = small_fsc()
    recorder = RecordingOffline()
    offline = asyncio.run(run_phase_a(project, recorder, config))
    assert recorder.asked and offline.edges

    replies: list[Step] = [answer(**verdict(p)) for _, _, p in recorder.asked]
    # one unparsable reply where the offline scorer saw nothing, one extra made-up binding on a kept edge
    nothing = next(i for i, (_, _, p) in enumerate(recorder.asked) if p is None)
    replies[nothing] = Reply(content="These two tools do not connect.")
    kept = next(i for i, (_, _, p) in enumerate(recorder.asked) if p is not None)
    extra = verdict(recorder.asked[kept][2])
    extra["bindings"].append({"param": "made_up_arg", "field": "crno"})
    replies[kept] = answer(**extra)

    async def llm_run() -> tuple[PhaseA, ChatDouble]:
        with ChatDouble(replies) as double:
            scorer = LLMScorer(at(double.base_url))
            try:
                return await run_phase_a(project, scorer, config), double
            finally:
                await scorer.aclose()

    phase, double = asyncio.run(llm_run())

    assert double.remaining == 0 and len(double.requests) == len(recorder.asked)
    for i, (producer, consumer, _) in enumerate(recorder.asked):
        prompt = prompt_of(double, i)
        assert f"Producer tool {producer} (" in prompt and f"Consumer tool {consumer} (" in prompt
    assert not problems(phase)
    doc, want = json.loads(to_json(phase)), json.loads(to_json(offline))
    assert doc["scorer"] == "llm"
    producer, consumer, _ = recorder.asked[nothing]
    assert [r["edge"] for r in doc["rejected"]] == [f"{producer}->{consumer}"] and want["rejected"] == []
    assert doc["rejected"][0]["why"].startswith("unparsable scorer reply")
    producer, consumer, _ = recorder.asked[kept]
    edge = next(e for e in doc["edges"] if e["id"] == f"{producer}->{consumer}")
    assert "made_up_arg" in edge["reason"]
    assert comparable(doc) == comparable(want)

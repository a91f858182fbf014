"""`kopa-gen edge synth`: drafts from G* (kopa_gen/edge/synth.py), worded by a query writer, filtered in three
stages, written as KOPA-Bench tasks with their gold fixtures and the dataset statistics.

Filters, each counted:
1. rules — the gold chain re-executed in a fresh session must give the same answer without errors (not
   reproducible / error), no call repeated with the same arguments (redundant), no anomalous answer (empty,
   placeholder, over-long text, a zero count); drafts with a gold result longer than a model context can hold
   (SynthConfig.max_result_chars) are not instantiated in the first place;
2. static — the answer must be scorable (its own rendering passes the evaluator, "알 수 없습니다" fails), must
   not appear in the query (leaked), and must depend on the chain: replacing a handed-over value by another
   observed value must change the answer (otherwise the chain is decorative);
3. re-solve — an independent policy (default: the oracle; `openai` for a model) solves the task in a fresh
   session through the normal evaluator. A task it solves is kept. Where it fails but its answer is verified
   correct and differs, that answer replaces the stored one: the re-solver made the gold calls (ACTION), its
   reply states exactly one value found in the chain's executed results that differs from the stored answer,
   and an independent judge behind an OpenAI-compatible endpoint confirms that value answers the query given
   those results. The replacement is written as a path to where the value sits (`answer_from`), so the build
   re-derives it like any answer; answers still come from execution, never from a model's own text. Without a
   judge nothing is replaced; every other failure removes the task.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kopa_gen.edge.probe import coerce, rows_of
from kopa_gen.edge.signatures import ToolSig, load_signatures
from kopa_gen.edge.synth import PATTERNS, Builder, Draft, NotInstantiable, Pattern, kept_edges
from kopa_gen.edge.writer import QueryWriter, TemplateWriter
from kopa_gen.evaluate.judge import OpenAIJudge
from kopa_gen.evaluate.response import score_response
from kopa_gen.evaluate.runner import EvalConfig, run_episode
from kopa_gen.gold.run import run_gold
from kopa_gen.language.answers import Answer, ListAnswer, NumberAnswer, TextAnswer
from kopa_gen.language.diagnostics import Diagnostics
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.task import From, SystemState, Task
from kopa_gen.language.yamlout import dump_yaml
from kopa_gen.policies.reference import UNKNOWN, render_answer
from kopa_gen.project import Project
from kopa_gen.runtime.answer import derive_answer
from kopa_gen.runtime.paths import PathError
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig

EVIDENCE_CHARS = 6000  # executed results shown to the re-solve stage's judge

PLACEHOLDERS = {"-", "n/a", "없음", "해당없음", "해당사항없음", "null", "none"}


@dataclass(frozen=True)
class SynthConfig:
    seed: int = 0
    per_pattern: int = 10  # tasks kept per pattern after filtering
    patterns: tuple[Pattern, ...] = PATTERNS
    max_starts: int = 8  # argument combinations tried per root tool
    resolver: str = "oracle"  # the re-solve stage's policy
    resolver_endpoint: EndpointSettings | None = None  # its model, for the openai policy
    verifier: EndpointSettings | None = None  # the OpenAIJudge that confirms a re-solver's answer
    # a gold call whose result is longer than this (characters of JSON) makes a task no model context can hold
    # (a 10,000-row page is megabytes); such drafts are not instantiated
    max_result_chars: int = 16000  # under verl's max_tool_response_length in configs/grpo.yaml


@dataclass
class Report:
    drafts: Counter[str] = field(default_factory=Counter)
    not_instantiable: Counter[str] = field(default_factory=Counter)
    removed: dict[str, Counter[str]] = field(
        default_factory=lambda: {"rules": Counter(), "static": Counter(), "resolve": Counter()}
    )
    kept: Counter[str] = field(default_factory=Counter)
    replaced: Counter[str] = field(default_factory=Counter)


@dataclass
class Candidate:
    draft: Draft
    task: Task
    fixture: dict[str, Any] | None = None
    replaced: dict[str, Any] | None = None  # the stored answer the re-solve stage replaced, and by whom


def starts(sig: ToolSig, examples: Mapping[str, Sequence[Any]], limit: int) -> list[dict[str, Any]]:
    """Starting-argument combinations of a root tool from the platform's examples, in a fixed order."""
    required = [p.name for p in sig.bindable if p.required]
    if required:
        if any(not examples.get(n) for n in required):
            return []
        combos = itertools.product(*(examples[n] for n in required))
        return [{**sig.start, **dict(zip(required, c, strict=True))} for c in itertools.islice(combos, limit)]
    out: list[dict[str, Any]] = []
    for p in sig.bindable:
        out += [{**sig.start, p.name: v} for v in examples.get(p.name, ())]
    return out[:limit]


def to_task(project: Project, draft: Draft, query: str, task_id: str, sigs: Mapping[str, ToolSig]) -> Task:
    calls = sum(len(s.calls) for s in draft.steps)
    domain = sigs[draft.root].domain
    keys = sorted(p for p in draft.platforms if not project.platform(p).kopa.local)
    return Task(
        id=task_id,
        domain=domain,
        query=query,
        system=SystemState(today=project.world.today, keys=keys),
        max_calls=calls * 2 + 2,
        reward=["RESPONSE"],
        gold=draft.steps,
        answer=draft.answer,
        answer_from=draft.ask.answer_from,
    )


def task_yaml(task: Task) -> str:
    data = task.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=False)
    head = "# yaml-language-server: $schema=../../../../generated/schemas/task.schema.json\n"
    return head + dump_yaml(data, width=100)


def anomalous(draft: Draft) -> str | None:
    values = draft.answer_value if isinstance(draft.answer_value, list) else [draft.answer_value]
    for v in values:
        text = str(v).strip()
        if not text or text.lower() in PLACEHOLDERS:
            return "anomalous answer (empty or placeholder)"
        if len(text) > 40:
            return "anomalous answer (over-long text)"
    if draft.ask.kind in ("count", "sum") and str(draft.answer_value) == "0":
        return "anomalous answer (zero count)"
    return None


def leaked(task: Task) -> bool:
    answer = task.answer
    items = answer.items if isinstance(answer, ListAnswer) else [answer]
    for item in items:
        if isinstance(item, TextAnswer) and item.value in task.query:
            return True
        if isinstance(item, NumberAnswer):
            plain = str(item.value)
            tokens = task.query.replace(",", "").replace("(", " ").replace(")", " ").split()
            if plain in tokens or f"{item.value:,}" in task.query:
                return True
    return False


async def execute(
    project: Project,
    task: Task,
    platforms: Sequence[str],
    override: Mapping[tuple[str, str], Any] | None = None,
) -> dict[str, dict[str, Any]] | None:
    """Run a gold chain (with some handed-over values replaced); None when a call fails."""
    results: dict[str, dict[str, Any]] = {}
    async with Session.open(project, platforms, sandbox=SandboxConfig(limits=False)) as session:
        for step in task.gold:
            planned = []
            for call in step.calls:
                args: dict[str, Any] = {}
                for name, value in call.args.items():
                    if override and (call.id, name) in override:
                        args[name] = override[(call.id, name)]
                    elif isinstance(value, From):
                        try:
                            args[name] = derive_answer(results, value)
                        except PathError:
                            return None
                    else:
                        args[name] = value
                planned.append((call, args))
            outcomes = await asyncio.gather(*(session.call(c.tool, a) for c, a in planned))
            for (call, _), outcome in zip(planned, outcomes, strict=True):
                if outcome.is_error or outcome.structured is None:
                    return None
                results[call.id] = outcome.structured
    return results


async def decorative(
    project: Project, cand: Candidate, sigs: Mapping[str, ToolSig], examples: Mapping[str, Sequence[Any]]
) -> bool:
    """True when the answer survives every perturbation of a handed-over value: the value replaced by another
    one the producer returned, or else by the argument's example values. A chain that breaks without the right
    value is not decorative; a hand-off with no alternative value at all cannot be judged and counts as used."""
    task, draft = cand.task, cand.draft
    assert task.answer_from is not None
    resolved = {c["id"]: c["args"] for step in (cand.fixture or {}).get("steps", []) for c in step}
    for call_id, arg, producer in draft.handoffs:
        call = next(c for s in task.gold for c in s.calls if c.id == call_id)
        ref = call.args[arg]
        assert isinstance(ref, From)
        fld = ref.path.rsplit(".", 1)[-1].rstrip(")")
        current = str(resolved.get(call_id, {}).get(arg))
        pool = [str(r.get(fld)) for r in rows_of(draft.results[producer])] + [
            str(v) for v in examples.get(arg, ())
        ]
        others = [v for v in dict.fromkeys(pool) if v not in (current, "None", "")][:2]
        if not others:
            return False
        for value in others:
            results = await execute(
                project, task, draft.platforms, {(call_id, arg): coerce(value, sigs[call.tool], arg)}
            )
            if results is None:
                return False  # the chain breaks without the right value: it matters
            try:
                if derive_answer(results, task.answer_from) != draft.answer_value:
                    return False
            except PathError:
                return False
    return True


def located_values(results: Mapping[str, Any]) -> list[tuple[From, Any]]:
    """Every scalar in the executed results with the path that selects it (rows[i].field, record.field, field)."""
    out: list[tuple[From, Any]] = []
    for call_id, result in sorted(results.items()):
        for key, value in (result or {}).items():
            where = {"from": call_id}
            if isinstance(value, list):
                for i, row in enumerate(value):
                    if isinstance(row, dict):
                        for name, v in row.items():
                            if isinstance(v, str | int | float) and not isinstance(v, bool):
                                out.append((From.model_validate(where | {"path": f"{key}[{i}].{name}"}), v))
            elif isinstance(value, dict):
                for name, v in value.items():
                    if isinstance(v, str | int | float) and not isinstance(v, bool):
                        out.append((From.model_validate(where | {"path": f"{key}.{name}"}), v))
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                out.append((From.model_validate(where | {"path": key}), value))
    return out


def _as_answer(stored: Answer, value: Any) -> Answer | None:
    """`value` as an answer of the stored answer's kind (number or text), or None."""
    if isinstance(stored, NumberAnswer):
        try:
            number = float(str(value).replace(",", ""))
        except ValueError:
            return None
        plain: int | float = int(number) if number.is_integer() else number
        return stored.model_copy(update={"value": plain})
    if isinstance(stored, TextAnswer):
        text = str(value).strip()
        if not text or len(text) > 40 or text.replace(",", "").replace(".", "").lstrip("-").isdigit():
            return None
        return TextAnswer(value=text)
    return None


async def verified_alternative(
    task: Task, draft: Draft, record: Mapping[str, Any], verifier: OpenAIJudge | None
) -> tuple[Answer, From, Any] | None:
    """The re-solver's different answer, when it is verified correct (module docstring, stage 3); else None."""
    message = str(record.get("final_message") or "")
    stored = task.answer
    made_gold_calls = (record.get("action") or {}).get(
        "corr"
    ) == 1.0  # every gold call, matched (ACTION Corr)
    if verifier is None or not made_gold_calls or not message or stored is None:
        return None
    year = task.system.today.year
    stated: dict[str, tuple[Answer, From, Any]] = {}
    for where, value in located_values(draft.results):
        answer = _as_answer(stored, value)
        if answer is None or not score_response(message, answer, year).passed:
            continue
        if score_response(render_answer(draft.answer_value), answer, year).passed:
            continue  # the stored answer itself
        stated.setdefault(answer.model_dump_json(), (answer, where, value))
    if len(stated) != 1:
        return None  # nothing, or several values: not verifiable
    answer, where, value = next(iter(stated.values()))
    evidence = json.dumps(draft.results, ensure_ascii=False)
    if len(evidence) > EVIDENCE_CHARS:  # the judge's prompt budget; said so in the prompt, not cut silently
        evidence = (
            evidence[:EVIDENCE_CHARS] + f" …(truncated: {len(evidence) - EVIDENCE_CHARS} more characters)"
        )
    return (answer, where, value) if await verifier.verify(task.query, evidence, answer) else None


async def run_filters(
    project: Project, cands: list[Candidate], sigs: Mapping[str, ToolSig], config: SynthConfig, report: Report
) -> list[Candidate]:
    kept: list[Candidate] = []
    verifier = OpenAIJudge(config.verifier) if config.verifier else None
    for cand in cands:
        task, draft = cand.task, cand.draft
        # 1. rules
        diags = Diagnostics()
        fixture = await run_gold(project, f"edge:{task.id}", task, project.world.seed, diags)
        why = None
        if fixture is None:
            why = (
                "not reproducible"
                if any("disagrees" in d.message for d in diags.errors)
                else "error on re-execution"
            )
        else:
            seen = Counter(
                (c["tool"], json.dumps(c["args"], sort_keys=True, ensure_ascii=False))
                for s in fixture["steps"]
                for c in s
            )
            why = "redundant calls" if any(n > 1 for n in seen.values()) else anomalous(draft)
        if why:
            report.removed["rules"][why] += 1
            continue
        cand.fixture = fixture
        # 2. static
        assert task.answer is not None
        if (
            not score_response(render_answer(draft.answer_value), task.answer, task.system.today.year).passed
            or score_response(UNKNOWN, task.answer, task.system.today.year).passed
        ):
            report.removed["static"]["unscorable"] += 1
            continue
        if leaked(task):
            report.removed["static"]["answer leaked in the query"] += 1
            continue
        root_platform = sigs[draft.root].platform  # its examples win on a shared argument name
        order = sorted(draft.platforms, key=lambda p: p == root_platform)
        merged = {k: v for p in order for k, v in project.platform(p).kopa.examples.items()}
        if await decorative(project, cand, sigs, merged):
            report.removed["static"]["decorative chain"] += 1
            continue
        # 3. re-solve
        eval_config = EvalConfig(policy=config.resolver, out=Path("."), endpoint=config.resolver_endpoint)
        record = await run_episode(project, eval_config, task, fixture or {}, config.seed, 0)
        if not record["reward"]:
            found = await verified_alternative(task, draft, record, verifier)
            if found is None:
                report.removed["resolve"][f"{config.resolver} did not solve it"] += 1
                continue
            answer, where, value = found
            cand.replaced = {"answer": task.answer.model_dump(mode="json"), "by": config.resolver}
            cand.task = task.model_copy(update={"answer": answer, "answer_from": where})
            cand.fixture = dict(fixture or {}, answer=answer.model_dump(mode="json"), answer_value=value)
            report.replaced[f"{config.resolver}: answer replaced after verification"] += 1
        kept.append(cand)
    return kept


async def synthesize(
    project: Project, doc: Mapping[str, Any], config: SynthConfig, writer: QueryWriter | None = None
) -> tuple[list[Candidate], Report]:
    writer = writer or TemplateWriter()
    report = Report()
    platforms = doc["config"]["platforms"]
    sigs = {s.name: s for s in load_signatures(project, platforms)}
    edges = kept_edges(doc)
    if not edges:
        raise ValueError(
            "G* has no kept edge; nothing to synthesize (see the graph's analysis and rejected edges)"
        )
    examples = {p.id: p.kopa.examples for p in project.platforms if p.id in platforms}
    roots = sorted({e.producer for e in edges} & set(doc["roots"]))
    plan = [
        (root, args)
        for root in roots
        for args in starts(sigs[root], examples[sigs[root].platform], config.max_starts)
    ]
    degree = Counter(e.producer for e in edges)
    result: list[Candidate] = []
    for pattern in config.patterns:
        template = project.template(pattern)
        rng = random.Random(f"{config.seed}:{pattern}")
        # per domain, a weighted random order (Efraimidis-Spirakis keys u^(1/w)), w = the root's kept out-edges:
        # lookup hubs such as dart_corp_code, whose codes feed many tools, start most chains without starting
        # all of them; the domains then take turns, so one platform's many edges do not crowd out the others
        keys = [rng.random() ** (1.0 / degree[root]) for root, _ in plan]
        ranked = [item for _, item in sorted(zip(keys, plan, strict=True), key=lambda kv: -kv[0])]
        by_domain: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for item in ranked:
            by_domain.setdefault(sigs[item[0]].domain, []).append(item)
        turns = itertools.zip_longest(*(by_domain[d] for d in sorted(by_domain)))
        order = [item for turn in turns for item in turn if item is not None]
        pool: list[Candidate] = []
        for root, args in order:
            if len(pool) >= max(6, config.per_pattern * 2):
                break
            seed = rng.randrange(2**31)
            tools = sorted({sigs[root].platform} | {sigs[e.consumer].platform for e in edges})
            async with Session.open(project, tools, sandbox=SandboxConfig(limits=False)) as session:
                builder = Builder(session, sigs, edges, examples, random.Random(seed))
                try:
                    draft = await builder.build(pattern, root, dict(args))
                except NotInstantiable as exc:
                    report.not_instantiable[f"{pattern}: {exc}"[:160]] += 1
                    continue
            longest = max((len(json.dumps(r, ensure_ascii=False)) for r in draft.results.values()), default=0)
            if longest > config.max_result_chars:
                report.not_instantiable[
                    f"{pattern}: a tool result over {config.max_result_chars} characters"
                ] += 1
                continue
            if any(_same_chain(draft, c.draft) for c in pool):
                report.not_instantiable[f"{pattern}: duplicate of an earlier draft"] += 1
                continue
            report.drafts[pattern] += 1
            query = await writer.write(draft, template, random.Random(seed))
            task_id = f"{pattern}-{len(pool) + 1:03d}"
            pool.append(Candidate(draft, to_task(project, draft, query, task_id, sigs)))
        kept = await run_filters(project, pool, sigs, config, report)
        kept = kept[: config.per_pattern]
        for i, cand in enumerate(kept, 1):  # dense ids after filtering
            cand.task = cand.task.model_copy(update={"id": f"{pattern}-{i:03d}"})
        report.kept[pattern] = len(kept)
        result += kept
    return result, report


def _same_chain(a: Draft, b: Draft) -> bool:
    def sig(d: Draft) -> str:
        return json.dumps(
            [
                [
                    (c.tool, sorted((k, str(v)) for k, v in c.args.items() if k not in d.page_args))
                    for c in s.calls
                ]
                for s in d.steps
            ],
            ensure_ascii=False,
        )

    return sig(a) == sig(b)


def dataset_stats(cands: Sequence[Candidate]) -> dict[str, Any]:
    """The paper's dataset table: type distribution, calls per task, steps, sequential vs parallel calls."""
    types = Counter(c.draft.pattern for c in cands)
    mixed = sum(1 for c in cands if len({j["kind"] for j in c.draft.junctions}) > 1)
    calls = [sum(len(s.calls) for s in c.task.gold) for c in cands]
    steps = [len(c.task.gold) for c in cands]
    parallel = sum(len(s.calls) for c in cands for s in c.task.gold if len(s.calls) > 1)
    total = sum(calls)
    junctions = Counter(j["kind"] for c in cands for j in c.draft.junctions)
    reductions = Counter(j["reduction"] for c in cands for j in c.draft.junctions if "reduction" in j)
    return {
        "tasks": len(cands),
        "types": {p: types.get(p, 0) for p in PATTERNS} | {"mixed": mixed},
        "domains": dict(sorted(Counter(c.task.domain for c in cands).items())),
        "calls": {
            "mean": round(statistics.mean(calls), 3) if calls else 0,
            "median": statistics.median(calls) if calls else 0,
            "max": max(calls, default=0),
        },
        "steps": {"mean": round(statistics.mean(steps), 3) if steps else 0, "max": max(steps, default=0)},
        "sequential_calls": total - parallel,
        "parallel_calls": parallel,
        "parallel_share": round(parallel / total, 3) if total else 0,
        "junctions": dict(sorted(junctions.items())),
        "reductions": dict(sorted(reductions.items())),
        "cross_platform": sum(1 for c in cands if len(c.draft.platforms) > 1),
    }


def stats_markdown(stats: Mapping[str, Any], report: Report) -> str:
    t = stats["types"]
    lines = [
        "| tasks | Seq | Fan | Drv | Sem | Cmp | Cond | Mixed | calls mean | median | max | steps mean | sequential | parallel |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {stats['tasks']} | {t['seq']} | {t['fan']} | {t['drv']} | {t['sem']} | {t['cmp']} | {t['cond']} | {t['mixed']} "
        f"| {stats['calls']['mean']} | {stats['calls']['median']} | {stats['calls']['max']} | {stats['steps']['mean']} "
        f"| {stats['sequential_calls']} | {stats['parallel_calls']} |",
        "",
        "| filter stage | removed | why |",
        "|---|---|---|",
    ]
    for stage, counts in report.removed.items():
        lines.append(
            f"| {stage} | {sum(counts.values())} | {'; '.join(f'{k}: {v}' for k, v in sorted(counts.items())) or '-'} |"
        )
    lines += [
        "",
        f"drafts per pattern: {dict(sorted(report.drafts.items()))}",
        f"kept per pattern: {dict(sorted(report.kept.items()))}",
        f"answers replaced by the re-solve stage: {sum(report.replaced.values())}",
    ]
    if report.not_instantiable:
        lines += ["", "not instantiable (pattern: reason → count):"]
        lines += [f"- {k}: {v}" for k, v in sorted(report.not_instantiable.items())]
    return "\n".join(lines) + "\n"


def write_dataset(project: Project, out: Path, cands: Sequence[Candidate], report: Report) -> dict[str, Any]:
    """OUT/tasks/<domain>/<id>.yaml, OUT/fixtures/<domain>/<id>.json, OUT/synth.json, OUT/stats.{json,md}.
    The folder is replaced as a whole, so a rerun never leaves stale tasks behind."""
    for sub in ("tasks", "fixtures"):
        folder = out / sub
        if folder.exists():
            for old in sorted(folder.glob("*/*")):
                old.unlink()
    meta: dict[str, dict[str, Any]] = {}
    for cand in cands:
        task = cand.task
        path = out / "tasks" / task.domain / f"{task.id}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(task_yaml(task), encoding="utf-8")
        fixture = dict(cand.fixture or {}, id=task.id, spec=str(path.relative_to(out)))
        fpath = out / "fixtures" / task.domain / f"{task.id}.json"
        fpath.parent.mkdir(parents=True, exist_ok=True)
        fpath.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        meta[task.id] = {
            "pattern": cand.draft.pattern,
            "root": cand.draft.root,
            "junctions": cand.draft.junctions,
            "platforms": cand.draft.platforms,
            "ask": cand.draft.ask.kind,
        }
        if cand.replaced:
            meta[task.id]["replaced"] = cand.replaced
    stats = dataset_stats(cands)
    (out / "synth.json").write_text(
        json.dumps(meta, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    (out / "stats.json").write_text(
        json.dumps(
            {
                "dataset": stats,
                "filters": {k: dict(sorted(v.items())) for k, v in report.removed.items()},
                "drafts": dict(sorted(report.drafts.items())),
                "replaced": dict(sorted(report.replaced.items())),
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    (out / "stats.md").write_text(stats_markdown(stats, report), encoding="utf-8")
    return stats

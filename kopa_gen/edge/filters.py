"""What a synthesized task must survive before it is kept, each stage counted (kopa_gen/edge/dataset.py):

1. rules — the gold chain re-executed and linted by the build's own gold run (`kopa_gen.gold.run`): it gives the
   same answer, every call succeeds, no literal hand-off, no call repeated with the same arguments, no anomalous
   answer (empty, a placeholder, a zero count);
2. static — the query names no tool, field or code; every value handed from one call to the next is absent from
   the query (else the first call is decorative) and so is the answer; the answer is scorable (its own statement
   passes, "알 수 없습니다" fails); replacing any handed-over value by another one the producer returned changes
   the answer or breaks the chain (decorative-chain perturbation); the LLM static filter when two judges are
   configured (both must agree that the query is natural, unambiguous and answerable);
3. shortcuts — the task is dropped when `no-lookup`, `first-page`, `list-all` or `dump` passes it, or when
   guessing is expected to pass it more than `max_guess` of the time: one value of the answer pool drawn at
   random, after one of the distinct values at each Drv junction drawn at random (the reduction guessed, not
   made);
4. re-solve (with a model endpoint) — an independent model solves the task in a fresh session through the
   normal evaluator (text mode). A task it solves is kept. Where it fails but its answer is verified correct and
   differs, that answer replaces the stored one: the re-solver made the gold calls (ACTION Corr 1), its reply
   states exactly one value found in the chain's executed results that differs from the stored answer, and an
   independent judge confirms that value answers the query given those results. The replacement is a path to
   where the value sits, so the build re-derives it like any answer; answers still come from execution, never
   from a model's text. Every other failure removes the task.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from kopa_gen.edge.korean import written_numbers
from kopa_gen.edge.probe import rows_of
from kopa_gen.edge.signatures import ToolSig
from kopa_gen.evaluate.guess import guess_task
from kopa_gen.evaluate.judge import OpenAIJudge
from kopa_gen.evaluate.response import score_response
from kopa_gen.evaluate.runner import EvalConfig, run_episode
from kopa_gen.gold.run import run_gold
from kopa_gen.language.answers import Answer, ListAnswer, NumberAnswer, TextAnswer
from kopa_gen.language.diagnostics import Diagnostics
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.task import ANSWER_MODES, From, Task, Template
from kopa_gen.policies.reference import UNKNOWN, render_answer
from kopa_gen.project import Project
from kopa_gen.runtime.answer import derive_answer
from kopa_gen.runtime.paths import PathError
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig

PLACEHOLDERS = {"-", "n/a", "없음", "해당없음", "해당사항없음", "null", "none", "0"}
FIRST_PAGE = "first-page"
SHORTCUT_POLICIES = ("no-lookup", FIRST_PAGE, "list-all", "dump")
_ASCII_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


@dataclass
class Counts:
    """Removals by stage and reason."""

    removed: dict[str, Counter[str]] = field(
        default_factory=lambda: {
            "rules": Counter(),
            "static": Counter(),
            "shortcuts": Counter(),
            "judges": Counter(),
            "resolve": Counter(),
        }
    )

    def drop(self, stage: str, why: str) -> None:
        self.removed[stage][why] += 1


@dataclass
class Filtering:
    project: Project
    sigs: Mapping[str, ToolSig]
    counts: Counts
    max_guess: float = 0.2
    policies: tuple[str, ...] = SHORTCUT_POLICIES


def query_problems(
    query: str, task: Task, sigs: Mapping[str, ToolSig], results: Mapping[str, Any]
) -> list[str]:
    """What makes a query read like an API call: a tool or field name, or a code from the results."""
    out: list[str] = []
    tools = {c.tool for s in task.gold for c in s.calls}
    names: set[str] = set(tools)
    for tool in tools:
        sig = sigs[tool]
        names |= {o.name for o in sig.outputs} | {p.name for p in sig.params}
    for word in _ASCII_WORD.findall(query):
        if word in names:
            out.append(f"names {word!r}")
    for name in sorted(n for n in names if not n.isascii() and len(n) >= 3):
        if name in query and not any(
            o.meaning is not None and o.meaning.ask and name in o.meaning.ask
            for t in tools
            for o in sigs[t].outputs
        ):
            out.append(f"names the field {name!r}")
    for code in _codes(task, sigs, results):
        if len(code) >= 4 and code in query:
            out.append(f"carries the code {code!r}")
            break
    return out


def _codes(task: Task, sigs: Mapping[str, ToolSig], results: Mapping[str, Any]) -> Iterable[str]:
    for step in task.gold:
        for call in step.calls:
            sig = sigs[call.tool]
            idish = {
                o.name for o in sig.outputs if o.meaning is not None and o.meaning.role in ("id", "code")
            }
            result = results.get(call.id)
            items = [r.get("result") for r in result] if isinstance(result, list) else [result]
            for item in items:
                for row in rows_of(item):
                    for name in idish:
                        value = str(row.get(name) or "").strip()
                        if value:
                            yield value


def handed_in_query(query: str, task: Task, fixture: Mapping[str, Any]) -> str | None:
    """A value handed from one call to the next that the query already says (the first call is decorative)."""
    refs = {
        (c.id, name)
        for step in task.gold
        for c in step.calls
        for name, v in c.args.items()
        if isinstance(v, From | Template)
    }
    for step in fixture.get("steps", []):
        for unit in step:
            for name, value in unit.get("args", {}).items():
                text = str(value).strip()
                if (unit.get("id"), name) in refs and len(text) >= 2 and text in query:
                    return text
    return None


def leaked(task: Task) -> bool:
    answer = task.answer
    items = answer.items if isinstance(answer, ListAnswer) else [answer]
    for item in items:
        if isinstance(item, TextAnswer) and item.value in task.query:
            return True
        if isinstance(item, NumberAnswer) and (  # '2' inside '제22대' is not written there; 22 is
            format(Decimal(str(item.value)).normalize(), "f") in written_numbers(task.query)
        ):
            return True
    return False


def anomalous(value: Any) -> str | None:
    values = value if isinstance(value, list) else [value]
    for v in values:
        text = str(v).strip()
        if not text or text.lower() in PLACEHOLDERS:
            return "anomalous answer (empty, zero or a placeholder)"
        if len(text) > 40:
            return "anomalous answer (over-long text)"
    return None


async def execute(
    project: Project, task: Task, override: Mapping[tuple[str, str], Any]
) -> dict[str, Any] | None:
    """The gold chain with some handed-over values replaced (None when a call fails or a path breaks)."""
    from kopa_gen.runtime.chain import Walker, walk_chain

    def read_value(call: Any, name: str, value: Any) -> Any:
        return override.get((call.id, name), value)

    platforms = sorted({project.platform_of(c.tool).id for s in task.gold for c in s.calls})
    async with Session.open(project, platforms, sandbox=SandboxConfig(limits=False)) as session:
        walk = await walk_chain(project, task, session, Walker(strict=True, read_value=read_value))
    if walk.problems:
        return None
    return walk.results


async def decorative(
    project: Project, task: Task, results: Mapping[str, Any], fixture: Mapping[str, Any]
) -> bool:
    """True when the answer survives replacing every handed-over value by another value the producer returned: the
    chain does not matter. A replacement that breaks the chain or changes the answer shows that it does."""
    assert task.answer_from is not None
    answer = derive_answer(results, task.answer_from)
    gold_args = {c["id"]: c["args"] for step in fixture.get("steps", []) for c in step}
    checked = 0
    for step in task.gold:
        for call in step.calls:
            if call.for_each is not None:
                continue
            for name, value in call.args.items():
                if not isinstance(value, From):
                    continue
                current = str(gold_args.get(call.id, {}).get(name))
                others = _alternatives(results.get(value.call), value.path, current)
                for other in others[:2]:
                    checked += 1
                    changed = await execute(project, task, {(call.id, name): other})
                    if changed is None:
                        return False
                    try:
                        if derive_answer(changed, task.answer_from) != answer:
                            return False
                    except PathError:
                        return False
    return checked > 0


def _alternatives(result: Any, path: str, current: str) -> list[Any]:
    """Other values of the handed-over field among the producer's rows."""
    field_name = path.split("|")[0].strip().rsplit(".", 1)[-1]
    rows = (result or {}).get("rows") if isinstance(result, dict) else None
    if not isinstance(rows, list):
        return []
    seen: list[Any] = []
    for row in rows:
        v = row.get(field_name) if isinstance(row, dict) else None
        if v not in (None, "") and str(v) != current and v not in seen:
            seen.append(v)
    return seen


async def oracle_fails(project: Project, task: Task, fixture: dict[str, Any]) -> str | None:
    """The answer mode in which the reference policy's answer does not pass (a task no one can pass there), or
    None: a list whose items need different units cannot be submitted, for one."""
    for mode in ANSWER_MODES:
        config = EvalConfig(policy="oracle", out=Path("."), answer_mode=mode)
        record = await run_episode(project, config, task, fixture, 0, 0)
        if not record["reward"]:
            return mode
    return None


async def shortcut(
    project: Project,
    task: Task,
    fixture: dict[str, Any],
    policies: Sequence[str],
    max_guess: float,
    upstream: int = 1,
) -> str | None:
    """The first shortcut that solves the task, or None. Guessing is the pool-guess policy's exact expectation,
    extended to every choice of the chain: `upstream` is the number of distinct values a guesser must choose
    among before the last step (the product over the chain's Drv junctions), for the benchmark's pool-guess makes
    the gold calls, reductions included, and so guesses only at the last step."""
    guess = guess_task(task, fixture, "submit")
    p = float(guess.p) / max(1, upstream)
    if guess.scored and p > max_guess:
        return f"pool-guess (p = {p:.2f}: pool {guess.pool}, {upstream} upstream)"
    for name in policies:
        config = EvalConfig(policy=name, out=Path("."))
        record = await run_episode(project, config, task, fixture, 0, 0)
        if record["reward"]:
            return name
    return None


def scorable(task: Task, value: Any) -> bool:
    assert task.answer is not None
    year = task.system.today.year
    return (
        score_response(render_answer(value), task.answer, year).passed
        and not score_response(UNKNOWN, task.answer, year).passed
    )


async def rules(project: Project, task: Task, value: Any, counts: Counts) -> dict[str, Any] | None:
    """Stage 1: the build's gold run and lint; redundant calls; anomalous answers."""
    diags = Diagnostics()
    fixture = await run_gold(project, f"edge:{task.id}", task, project.world.seed, diags)
    if fixture is None:
        first = diags.errors[0].message if diags.errors else "error on re-execution"
        counts.drop("rules", _reason(first))
        return None
    seen = Counter(
        (c["tool"], json.dumps(c["args"], sort_keys=True, ensure_ascii=False))
        for s in fixture["steps"]
        for c in s
    )
    if any(n > 1 for n in seen.values()):
        counts.drop("rules", "redundant calls")
        return None
    why = anomalous(value)
    if why:
        counts.drop("rules", why)
        return None
    return fixture


def _reason(message: str) -> str:
    """A lint or walk message as a counted reason (its first clause, numbers and quoted values removed)."""
    head = re.split(r"[:;(]", message, maxsplit=1)[0]
    head = re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "…", head)
    return head.strip()[:80] or "error on re-execution"


async def gather(*aws: Any) -> list[Any]:
    return list(await asyncio.gather(*aws))


EVIDENCE_CHARS = 6000  # executed results shown to the re-solve stage's judge


def located_values(results: Mapping[str, Any]) -> list[tuple[From, Any]]:
    """Every scalar in the executed results with the path that selects it (rows[i].field, record.field, field)."""
    out: list[tuple[From, Any]] = []
    for call_id, result in sorted(results.items()):
        if not isinstance(result, dict):
            continue
        for key, value in result.items():
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
    task: Task,
    results: Mapping[str, Any],
    value: Any,
    record: Mapping[str, Any],
    verifier: OpenAIJudge | None,
) -> tuple[Answer, From, Any] | None:
    """The re-solver's different answer, when it is verified correct (stage 4 above); else None."""
    message = str(record.get("final_message") or "")
    stored = task.answer
    made_gold_calls = (record.get("action") or {}).get("corr") == 1.0  # every gold call, matched
    if verifier is None or not made_gold_calls or not message or stored is None:
        return None
    year = task.system.today.year
    stated: dict[str, tuple[Answer, From, Any]] = {}
    for where, found in located_values(results):
        answer = _as_answer(stored, found)
        if answer is None or not score_response(message, answer, year).passed:
            continue
        if score_response(render_answer(value), answer, year).passed:
            continue  # the stored answer itself
        stated.setdefault(answer.model_dump_json(), (answer, where, found))
    if len(stated) != 1:
        return None  # nothing, or several values: not verifiable
    answer, where, found = next(iter(stated.values()))
    evidence = json.dumps(results, ensure_ascii=False)
    if len(evidence) > EVIDENCE_CHARS:  # the judge's prompt budget; said so in the prompt, not cut silently
        evidence = (
            evidence[:EVIDENCE_CHARS] + f" …(truncated: {len(evidence) - EVIDENCE_CHARS} more characters)"
        )
    return (answer, where, found) if await verifier.verify(task.query, evidence, answer) else None


async def resolve(
    project: Project,
    task: Task,
    fixture: dict[str, Any],
    results: Mapping[str, Any],
    value: Any,
    resolver: EndpointSettings,
    verifier: EndpointSettings | None,
) -> tuple[bool, tuple[Answer, From, Any] | None]:
    """Stage 4: (keep, replacement). Solved: (True, None); a verified different answer: (True, it); else (False,
    None)."""
    config = EvalConfig(policy="openai", out=Path("."), endpoint=resolver, answer_mode="text")
    record = await run_episode(project, config, task, fixture, 0, 0)
    if record["reward"]:
        return True, None
    judge = OpenAIJudge(verifier) if verifier else None
    found = await verified_alternative(task, results, value, record, judge)
    return (found is not None), found

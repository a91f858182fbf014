"""Gold execution: a task's gold chain executed against the sandbox and linted, as the fixture
kopa_gen/compile/fixtures.py writes to generated/fixtures/<domain>/<id>.json (so that a data change that moves
a gold answer shows up in the diff).

A fixture holds, per executed gold call (a fan-out item and a page each count as one): the resolved arguments,
the compared arguments, the rows it covers when it pages, the resolved alternatives and a digest of its result;
then the gold answer, its value and the pool of candidates it was chosen from (what a grader weighs a reply
against), the ENVIRONMENT scope and its hash, what each call's references read (`calls`, for ACTION), and the
task's statistics (logical steps, turns, calls with pages, hand-offs with the distinct values handed on and the
rows behind them; docs/evaluation.md defines each).

A task whose chain does not execute, resolve or pass the lint (kopa_gen/gold/lint.py) gets no fixture; every
problem is a build error at its line in the task file."""

from __future__ import annotations

import re
from typing import Any

from kopa_gen.envelopes import family
from kopa_gen.envelopes.base import positional
from kopa_gen.gold import lint
from kopa_gen.language.diagnostics import Diagnostics
from kopa_gen.language.functions import to_text
from kopa_gen.language.records import check_fixture
from kopa_gen.language.source import Source, YamlError, format_path, load_yaml
from kopa_gen.language.task import Combine, From, Task
from kopa_gen.mcp.search import LIMIT
from kopa_gen.policies.reference import bypass
from kopa_gen.project import Project
from kopa_gen.runtime.answer import answer_pool, arg_value, derive_answer, source_value
from kopa_gen.runtime.chain import Problem, Unit, Walk, Walker, coerce, walk_chain
from kopa_gen.runtime.evidence import covered_rows, row_key
from kopa_gen.runtime.paths import PathError, rows_read
from kopa_gen.runtime.session import Session, exposure, title_query
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.sandbox.episode import digest


def task_platforms(project: Project, task: Task) -> list[str]:
    tools = {c.tool for c in task.calls()} | {a.tool for c in task.calls() for a in c.alternatives}
    tools |= set(task.tools or [])
    return sorted({project.platform_of(t).id for t in tools})


def search_problems(project: Project, task: Task) -> list[Problem]:
    """Search mode as `kopa-gen eval --tools-mode search` opens it (every platform, entry tools listed): each gold
    call's tool that is not listed must be among the tools a search for its title finds, the way the reference
    policies reach it (kopa_gen/runtime/chain.py). Checked where the task says it runs in search mode."""
    if "search" not in task.tools_modes:
        return []
    listed, index = exposure(project, [p.id for p in project.platforms], None, "search")
    assert listed is not None and index is not None
    problems: list[Problem] = []
    for loc, call in _call_locs(task):
        if call.tool in listed:
            continue
        query = title_query(index, call.tool)
        if call.tool not in {str(t["name"]) for t, _ in index.search(query["query"], LIMIT)}:
            problems.append(
                Problem(
                    (*loc, "tool"),
                    f"in search mode a search for {query['query']!r} does not find {call.tool} among the top "
                    f"{LIMIT} of {len(index.tools)} tools; leave search out of the task's tools_modes, or give "
                    "the tool a title that says what it does",
                )
            )
    return problems


def _source(project: Project, file: str) -> Source | None:
    path = project.root / file
    if not path.is_file():
        return None
    try:
        return load_yaml(path, project.root)
    except YamlError:
        return None


def report(diags: Diagnostics, project: Project, file: str, problems: list[Problem]) -> None:
    src = _source(project, file)
    for p in problems:
        line = src.line(p.loc) if src is not None else None
        diags.error(file, format_path(p.loc), p.message, line)


def _rows(unit: Unit) -> list[int] | None:
    """The row range [start, end) a list call's page covers (as ACTION reads an agent's)."""
    rows = covered_rows(unit.result)
    return list(rows) if rows is not None else None


def _compared(project: Project, tool: str, args: dict[str, Any], declared: list[str] | None) -> list[str]:
    paging = project.page_params(tool) or ()
    names = declared if declared is not None else list(args)
    return [n for n in names if n not in paging]


async def _alternatives(
    project: Project, session: Session, walk: Walk, unit: Unit
) -> tuple[list[Any], list[Problem]]:
    """Each alternative of a unit resolved against the walk's results (and the unit's fan-out item) as gold
    arguments are, and executed, so an alternative that cannot run is a build error."""
    out: list[Any] = []
    problems: list[Problem] = []
    for a, alt in enumerate(unit.call.alternatives):
        try:
            args = {
                name: coerce(project, alt.tool, name, arg_value(walk.results, value, unit.item))
                for name, value in alt.args.items()
            }
        except PathError as exc:
            problems.append(Problem(("alternatives", a), str(exc)))
            continue
        outcome = await session.call(alt.tool, args)
        if outcome.is_error:
            problems.append(Problem(("alternatives", a), f"alternative {alt.tool} failed: {outcome.text}"))
        out.append(
            {"tool": alt.tool, "args": args, "compare": _compared(project, alt.tool, args, alt.compare)}
        )
    return out, problems


async def run_gold(
    project: Project, file: str, task: Task, seed: int, diags: Diagnostics
) -> dict[str, Any] | None:
    """Execute and lint one gold chain in a fresh session; None (with diagnostics) when it fails either."""
    problems = lint.static_problems(project, task) + search_problems(project, task)
    if problems:
        report(diags, project, file, problems)
        return None
    config = SandboxConfig(limits=False)
    async with Session.open(
        project, task_platforms(project, task), sandbox=config, world_seed=seed
    ) as session:
        walk = await walk_chain(project, task, session, Walker(strict=True))
        if walk.problems:
            report(diags, project, file, walk.problems)
            return None
        scope = lint.state_scope(project, walk)
        state = session.state_hash(scope)
        downloaded = await _file_rows(project, session, task)
        located = {id(c): loc for loc, c in _call_locs(task)}
        steps: list[list[dict[str, Any]]] = []
        for turn in walk.turns:
            record = []
            for unit in turn:
                alternatives, alt_problems = await _alternatives(project, session, walk, unit)
                problems += [Problem((*located[id(unit.call)], *p.loc), p.message) for p in alt_problems]
                paging = project.page_params(unit.call.tool)
                record.append(
                    {
                        "id": unit.call.id,
                        "key": unit.key,
                        "tool": unit.call.tool,
                        "args": unit.args,
                        "compare": _compared(project, unit.call.tool, unit.args, unit.call.compare),
                        "paging": {"params": list(paging), "rows": _rows(unit)} if paging else None,
                        "alternatives": alternatives,
                        "result_sha256": digest(unit.result),
                        "total_count": (unit.result or {}).get("total_count"),
                    }
                )
            steps.append(record)
    answer_value: Any = None
    pool: list[Any] = []
    handoffs = [_behind(h, walk, task, downloaded) for h in walk.handoffs]
    if task.answer is not None and task.answer_from is not None:
        try:
            answer_value = derive_answer(walk.results, task.answer_from)
        except PathError as exc:
            problems.append(Problem(("answer_from",), str(exc)))
        pool = answer_pool(walk.results, task.answer_from)
        for source in task.answer_from.sources():
            base = walk.results.get(source.call)
            count = base.get("total_count") if isinstance(base, dict) else len(base or [])
            handoffs.append(
                _behind(
                    {
                        "from": source.call,
                        "to": "answer",
                        "arg": "answer",
                        "distinct": len(pool),
                        "rows": count or len(pool),
                    },
                    walk,
                    task,
                    downloaded,
                )
            )
    problems += lint.walk_problems(project, task, walk, answer_value) if not problems else []
    if problems:
        report(diags, project, file, problems)
        return None
    pool_warning(diags, project, file, task, pool)
    bypass_warnings(diags, project, file, task, steps)
    reading_warnings(diags, project, file, task)
    calls = sum(len(s) for s in steps)
    pages = sum(1 for s in steps for u in s if "@" in u["key"] and not u["key"].endswith("@1"))
    stats = {
        "steps": sum(1 for step in task.gold if step.calls),
        "turns": len(steps),
        "calls": calls,
        "pages": pages,
        "parallel_calls": sum(len(s) for s in steps if len(s) > 1),
        "max_calls": task.max_calls,
        "headroom": round(task.max_calls / calls, 3),
        "handoffs": handoffs,
        "one_to_many": sum(1 for h in handoffs if h["to"] != "answer" and h["distinct"] > 1),
    }
    fixture = {
        "id": task.id,
        "domain": task.domain,
        "spec": file,
        "world_seed": seed,
        "reward": task.reward,
        "platforms": task_platforms(project, task),
        "steps": steps,
        "answer": task.answer.model_dump(mode="json") if task.answer else None,
        "answer_value": answer_value,
        "answer_pool": pool,
        "state_scope": scope,
        "state_hash": state,
        "calls": call_infos(project, walk, task),
        "stats": stats,
    }
    check_fixture(fixture, file)  # what the readers will validate, checked where it is made
    return fixture


SMALL_POOL = 5
"""An answer chosen among this many candidates or fewer is a build warning: guessing passes too often."""

EVIDENCE_ROWS = 256
"""A gold call whose references read more rows than this is matched page by page (`rows: "all"`) instead of by
row keys, so that a fixture stays small."""


def pool_warning(diags: Diagnostics, project: Project, file: str, task: Task, pool: list[Any]) -> None:
    """A warning at the task's `answer_from` when its answer is chosen among few candidates."""
    if task.answer is None or "RESPONSE" not in task.reward or len(pool) > SMALL_POOL:
        return
    src = _source(project, file)
    distinct = len({to_text(c) for c in pool}) or 1
    diags.warning(
        file,
        "answer_from",
        f"the answer is chosen among {len(pool)} candidate(s): after the gold calls, one guessed at random "
        f"passes about {1 / distinct:.0%} of the time (pool-guess; `kopa-gen eval` prints the exact figure); "
        "choose among more values",
        src.line(("answer_from",)) if src is not None else None,
    )


def bypass_warnings(
    diags: Diagnostics, project: Project, file: str, task: Task, steps: list[list[dict[str, Any]]]
) -> None:
    """A warning at a call the gold pages through when the API could pick what the chain reads of it in one page
    (reference.bypass) with arguments the gold does not already send: the step is not the high-cardinality step
    it looks like. `steps`: the fixture's executed units."""
    src = _source(project, file)
    units = [unit for step in steps for unit in step]
    for loc, call in _call_locs(task):
        mine = [u for u in units if u["id"] == call.id]
        found = bypass(project, task, call) if len(mine) > 1 else None
        if found is None or all(str(mine[0]["args"].get(k)) == str(v) for k, v in found.items()):
            continue
        sent = ", ".join(f"{k}={v}" for k, v in found.items())
        diags.warning(
            file,
            ".".join(map(str, loc)),
            f"the gold pages through {call.id!r} ({len(mine)} pages), but the API picks what the chain reads of it "
            f"in one page when sent {sent}: send that in the gold (and drop `pages: all`), or the step is no "
            "high-cardinality step",
            src.line(loc) if src is not None else None,
        )


_ROUNDS = re.compile(r"\b(?:round|fixed)\(")
_TIE_BREAK = re.compile(r"\bargm(?:ax|in)\(\s*['\"]?(?:first|last)")
ROUNDING_WORDS = ("반올림", "자리", "버림", "올림")
TIE_WORDS = ("같으면", "같을 때", "동률", "동점", "같은 경우")


def reading_warnings(diags: Diagnostics, project: Project, file: str, task: Task) -> None:
    """Warnings at `answer_from` when the answer depends on a rule the query does not state (a rounding: `digits`,
    `round(...)`, `fixed(...)`; a declared tie-break), or is read from a platform serving real data
    (`x-kopa.real_data`), where it is a public fact."""
    if task.answer_from is None:
        return
    paths = [s.path for s in task.answer_from.sources()]
    digits = isinstance(task.answer_from, Combine) and task.answer_from.digits is not None
    tie = (isinstance(task.answer_from, Combine) and task.answer_from.tie_break is not None) or any(
        _TIE_BREAK.search(p) for p in paths
    )
    src = _source(project, file)
    line = src.line(("answer_from",)) if src is not None else None
    if (digits or any(_ROUNDS.search(p) for p in paths)) and not any(w in task.query for w in ROUNDING_WORDS):
        diags.warning(
            file,
            "answer_from",
            "the answer is rounded, but the query does not say to what ('소수 첫째 자리까지 반올림해'); say it, or "
            "a reply giving more digits reads as a different number",
            line,
        )
    calls = {c.id: c.tool for c in task.calls()}
    real = sorted(
        {
            project.platform_of(calls[s.call]).id
            for s in task.answer_from.sources()
            if s.call in calls and project.platform_of(calls[s.call]).kopa.real_data
        }
    )
    if real and task.answer is not None and "RESPONSE" in task.reward:
        diags.warning(
            file,
            "answer_from",
            f"the answer is read from {', '.join(real)}, which serves a real public master list: it is a public "
            "fact a model may remember (a real code, a real count of 법정동); read the answer from synthetic data",
            line,
        )
    if tie and not any(w in task.query for w in TIE_WORDS):
        diags.warning(
            file,
            "answer_from",
            "a tie-break is declared, but the query does not say how a tie is decided ('같으면 먼저 나온 곳'); say "
            "it, or the task has two readings",
            line,
        )


async def _file_rows(project: Project, session: Session, task: Task) -> dict[str, int]:
    """Per bulk-file tool of the chain (DART's CORPCODE.xml): the rows of the file the API sends. The API has no
    search: the tool downloads every row and filters them client-side (`local_filters`), so the rows behind such a
    step are the file's, and the filter is the shortcut the gold uses over them."""
    out: dict[str, int] = {}
    for tool in dict.fromkeys(c.tool for c in task.calls()):
        spec = project.platform_of(tool).operation(tool).kopa
        if spec.file is None or spec.file.per_row or not spec.local_filters:
            continue
        outcome = await session.call(tool, {})
        total = (outcome.structured or {}).get("total_count")
        if not outcome.is_error and isinstance(total, int):
            out[tool] = total
    return out


def _behind(handoff: dict[str, Any], walk: Walk, task: Task, downloaded: dict[str, int]) -> dict[str, Any]:
    """A hand-off with the rows behind its producing step: a bulk file's rows where the step filtered a downloaded
    file (its filter's matches kept as `matched`), else the result's total_count as the chain counted it."""
    tool = next((c.tool for c in task.calls() if c.id == handoff["from"]), None)
    if tool in downloaded and handoff["from"] in walk.results:
        return {**handoff, "rows": downloaded[tool], "matched": handoff["rows"]}
    return handoff


_WORD = re.compile(r"[^\W\d]\w*")
"""A name in a path (a field it filters or reads; other words such as functions are no row's fields)."""


def call_infos(project: Project, walk: Walk, task: Task) -> dict[str, Any]:
    """Per gold call (fan-outs left out): what its references read (kopa_gen.runtime.paths.rows_read: row keys,
    the total, the record), which calls read it, and whether the answer does. ACTION credits an agent that fetched
    what the references read, by any route (kopa_gen/evaluate/action.py)."""
    readers: dict[str, list[tuple[str, From]]] = {}
    for call in task.calls():
        for ref in call.references():
            readers.setdefault(ref.call, []).append((call.id, ref))
    for ref in task.answer_from.sources() if task.answer_from is not None else []:
        readers.setdefault(ref.call, []).append(("answer", ref))
    out: dict[str, Any] = {}
    for call in task.calls():
        result = walk.results.get(call.id)
        mine = readers.get(call.id, [])
        evidence: dict[str, Any] | None = None
        if call.for_each is None and isinstance(result, dict) and mine:
            platform = project.platform_of(call.tool)
            ignore = positional(family(platform.kopa.envelope), platform.operation(call.tool))
            rows: dict[str, dict[str, Any]] = {}
            total = record = other = False
            named = set(_WORD.findall(" ".join(ref.path for _, ref in mine)))
            for _, ref in mine:
                try:
                    env = {name: source_value(walk.results, r) for name, r in ref.with_.items()}
                    read = rows_read(result, ref.path, env)
                except PathError:
                    other = True
                    continue
                for r in read.rows:
                    rows.setdefault(row_key(r, ignore), {k: v for k, v in r.items() if k in named})
                total, record, other = total or read.total, record or read.record, other or read.other
            if not other:
                evidence = {
                    "rows": "all" if len(rows) > EVIDENCE_ROWS else list(rows),
                    "total": total,
                    "record": row_key(result.get("record")) if record else None,
                }
                if ignore:
                    evidence["ignore"] = ignore
        out[call.id] = {
            "evidence": evidence,
            "feeds": sorted({who for who, _ in mine if who != "answer"}),
            "answer": any(who == "answer" for who, _ in mine),
            "read": list(rows.values()) if evidence is not None and evidence["rows"] != "all" else None,
        }
    return out


def _call_locs(task: Task) -> list[tuple[tuple[str | int, ...], Any]]:
    return [(("gold", i, "calls", j), c) for i, s in enumerate(task.gold) for j, c in enumerate(s.calls)]

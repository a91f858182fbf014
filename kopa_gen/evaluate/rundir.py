"""A run folder (`runs/<name>`): `run.json` says what ran, `episodes.jsonl` holds one scored episode a line, and a
lock file keeps one writer at a time.

A folder holds one run: one task set (the benchmark or one task dir, each task's content hashed), one policy,
one plan (answer mode, seeds, rollouts, the tool-result budget, the model's endpoint and agent settings), one
world. Resuming with the same plan adds the missing episodes (more tasks of the set may join); anything else is
refused naming the difference, so two sets, policies or plans never mix (a pass@4 over rollouts of two
temperatures, or of 4 and 1 rollouts) and an episode recorded for another version of a task is never taken as
done. Later lines supersede earlier ones with the same key (an episode that
failed for infrastructure and was run again), and a line that is not JSON (a crash mid-write) is skipped with a
warning, so its episode is simply run again."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kopa_gen
from kopa_gen.client.errors import redact
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.records import (
    MANIFEST_FORMAT,
    EpisodeRecord,
    RecordError,
    RunManifest,
    check_manifest,
    check_record,
)
from kopa_gen.language.settings import public_url as public_url
from kopa_gen.processes import alive, hold_in_this_process_only, release

INFRASTRUCTURE = "infrastructure"
"""The stop reason of an episode the environment failed (the model endpoint down: connection refused, time-outs,
5xx, 429 after every retry; a platform or the sandbox failing past every retry; a world that cannot be opened):
recorded as failed-infrastructure, left out of the scores (counted apart in the report) and run again when the
run is resumed."""


class RunFolderError(UserError):
    """The user's mistake about a run folder (another set, another policy, a concurrent writer). One line."""


@dataclass(frozen=True)
class Episodes:
    """What a folder's episodes.jsonl holds: the latest record of each key (in the order they were written) and
    a warning for each line that could not be read."""

    records: list[dict[str, Any]]
    warnings: list[str]


def read_episodes(path: Path) -> Episodes:
    if not path.exists():
        return Episodes([], [])
    check_layout(path.parent)
    latest: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    lines = path.read_bytes().split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            key = str(record["key"])
        except (ValueError, KeyError, TypeError):
            torn = number == len(lines)  # no newline after it: the write was cut short
            what = "a torn last line" if torn else f"an unreadable line {number}"
            warnings.append(
                f"warning: skipped {what} of {path} (a crash mid-write?); that episode runs again"
            )
            continue
        try:
            check_record(
                EpisodeRecord,
                record,
                f"{path}:{number}",
                "episode",
                "another version wrote this run "
                "folder: start a new one (--out) or rerun with the version that wrote it",
            )
        except RecordError as exc:
            raise RunFolderError(str(exc)) from None
        latest.pop(key, None)  # a re-run episode moves to where it was written last
        latest[key] = record
    return Episodes(list(latest.values()), warnings)


def repair_tail(path: Path) -> None:
    """Cut a torn last line (no newline after it) so that the next record starts on a line of its own."""
    if not path.exists():
        return
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    try:
        json.loads(data[data.rfind(b"\n") + 1 :])
        with path.open("ab") as fh:  # a whole record that only lacks its newline
            fh.write(b"\n")
    except ValueError:
        with path.open("r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold `folder/.eval.lock` for the duration: a second writer is refused at once. The lock is the kernel's
    (flock), so a crashed run leaves no stale lock behind, and this process's alone: a process it forks (a world
    builder) closes its copy, so a builder that outlives a killed run cannot keep the folder locked."""
    check_layout(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".eval.lock"
    with path.open("a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            raise RunFolderError(f"{folder} is in use by {_holder(fh.read(), path)}") from None
        hold_in_this_process_only(fh.fileno())
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}")
        fh.flush()
        try:
            yield
        finally:
            release(fh.fileno())
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


FILES = ("run.json", "episodes.jsonl", ".eval.lock")
"""What a run folder holds, each a file."""


def check_layout(folder: Path) -> None:
    """RunFolderError when `folder` cannot be a run folder: a file stands where it would be, or a folder stands
    where one of its files belongs."""
    if folder.exists() and not folder.is_dir():
        raise RunFolderError(
            f"{folder} is a file, not a run folder; give --out a folder (it is made if missing)"
        )
    above = next(
        (p for p in folder.parents if p.exists()), None
    )  # the folder is made below the first that is
    if above is not None and not above.is_dir():
        raise RunFolderError(f"{above} is a file, so {folder} cannot be made there; give --out a folder")
    for name in FILES:
        path = folder / name
        if path.exists() and not path.is_file():
            raise RunFolderError(
                f"{path} is a folder where the run keeps its {name} file; move it away or use another run folder"
            )


def _holder(written: str, path: Path) -> str:
    """Who holds a run folder's lock and what to do, from the pid its holder wrote."""
    words = written.split()
    pid = int(words[1]) if len(words) == 2 and words[0] == "pid" and words[1].isdigit() else 0
    if pid and alive(pid):
        return f"another kopa-gen eval (pid {pid}); wait for it to end or give another --out"
    return (
        f"a process that outlived the eval that locked it (pid {pid or '?'} is gone; a child an older kopa-gen "
        f"left behind?): end it (`fuser {path}` names it) or give another --out"
    )


def task_hash(task: Any, fixture: dict[str, Any]) -> str:
    """SHA-256 of a task's spec and its gold fixture (canonical JSON): a changed task or world changes it."""
    body = json.dumps(
        {"task": task.model_dump(mode="json"), "fixture": fixture},
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def set_hash(tasks: dict[str, str]) -> str:
    """One hash over the tasks a run has run (id and content hash of each)."""
    body = "".join(f"{tid}:{h}\n" for tid, h in sorted(tasks.items()))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def code_version(root: Path) -> str:
    """The package version and, in a git checkout, `git describe` (with -dirty for local changes)."""
    version = f"kopa-gen {kopa_gen.__version__}"
    try:
        described = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty", "--tags"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return version
    if described.returncode == 0 and described.stdout.strip():
        return f"{version} (git {described.stdout.strip()})"
    return version


# The fields that make a run what it is, with the flag that sets each: resuming with any of them different would
# mix two runs in one folder.
PLAN: dict[str, str] = {
    "task_set": "--task-dir",
    "policy": "--policy",
    "answer_mode": "--answer-mode",
    "tools_mode": "--tools-mode",
    "seeds": "--seeds",
    "rollouts": "--rollouts",
    "tool_result_chars": "--tool-result-chars",
    "endpoint": "the model's flags",
    "agent": "the agent's flags",
    "live": "--live",
    "world_seed": "the world (specs/world)",
    "judge": "the judge's flags",
}


def _plan(manifest: RunManifest) -> dict[str, Any]:
    data = manifest.model_dump(mode="json", include=set(PLAN))
    data["task_set"].pop("hash")  # which set, not which of its tasks ran so far
    for name in ("endpoint", "judge"):  # the model, wherever it is served now
        block = data[name]
        if isinstance(block, dict):
            (block.get("endpoint") or block).pop("base_url", None)
    return data


def _difference(old: Any, new: Any, path: str) -> tuple[str, Any, Any] | None:
    """The first leaf where two plans differ: its dotted path and both values."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            found = _difference(old.get(key), new.get(key), f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    return None if old == new else (path, old, new)


def describe(manifest: RunManifest) -> str:
    ts = manifest.task_set
    where = "the benchmark" if ts.kind == "benchmark" else f"task dir {ts.path}"
    who = f"policy {manifest.policy}"
    if manifest.endpoint is not None:
        who += f" (model {manifest.endpoint.model} at {manifest.endpoint.base_url})"
    said = f"{who} on {where}, answering in {manifest.answer_mode} mode, tools in {manifest.tools_mode} mode"
    if manifest.unvalidated:
        shown = ", ".join(manifest.unvalidated[:5]) + (" ..." if len(manifest.unvalidated) > 5 else "")
        said += f" ({len(manifest.unvalidated)} tasks not validated in it: {shown})"
    return said


def merge(folder: Path, old: RunManifest | None, new: RunManifest, has_episodes: bool) -> RunManifest:
    """The manifest to write for a run about to start in `folder`, or RunFolderError when its episodes would
    mix with another run's (the message names the first difference and the flag that sets it)."""
    if old is None or not has_episodes:
        if has_episodes:
            raise RunFolderError(
                f"{folder} holds episodes but no run.json says what they are; give another --out "
                f"(or delete {folder})"
            )
        return new
    found = _difference(_plan(old), _plan(new), "")
    if found is not None:
        where, was, now = found
        flag = PLAN[where.split(".")[0]]
        same = describe(old) == describe(new)
        raise RunFolderError(
            f"{folder} holds a run of {describe(old)}"
            + ("" if same else f" and this is {describe(new)}")
            + f": {where} = {json.dumps(was, ensure_ascii=False)} there, {json.dumps(now, ensure_ascii=False)} "
            f"here; run it with the same {flag} to resume, or give another --out"
        )
    changed = sorted(t for t, h in new.tasks.items() if old.tasks.get(t, h) != h)
    if changed:
        raise RunFolderError(
            f"{folder} holds episodes of another version of task {', '.join(changed)} (spec or gold fixture "
            "changed since); give another --out"
        )
    tasks = {**old.tasks, **new.tasks}
    versions = list(old.code_versions)
    versions += [v for v in new.code_versions if v not in versions]
    endpoints = list(old.endpoints)
    endpoints += [url for url in new.endpoints if url not in endpoints]
    return new.model_copy(
        update={
            "task_set": new.task_set.model_copy(update={"hash": set_hash(tasks)}),
            "tasks": dict(sorted(tasks.items())),
            "code_versions": versions,
            "endpoints": endpoints,
            "pool_guess": {**old.pool_guess, **new.pool_guess},
            "unvalidated": sorted({*old.unvalidated, *new.unvalidated}),
        }
    )


def read_manifest(folder: Path) -> RunManifest | None:
    """The folder's run.json, validated; None without one; RunFolderError when it is not a run manifest at all
    or not a valid one (naming the file and the field)."""
    path = folder / "run.json"
    if not path.exists():
        return None
    check_layout(folder)
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested past the stack
        raise RunFolderError(
            f"{path} is not a run manifest ({_short(exc)}): damaged, or written by something other than kopa-gen; "
            f"give another --out (or delete {folder})"
        ) from None
    if not isinstance(data, dict):
        raise RunFolderError(
            f"{path} is not a run manifest (a JSON {type(data).__name__}, not an object): damaged, or written by "
            f"something other than kopa-gen; give another --out (or delete {folder})"
        )
    if data.get("format") != MANIFEST_FORMAT:
        raise RunFolderError(
            f"{path}: run.json format {data.get('format')!r}, and this kopa-gen reads format {MANIFEST_FORMAT}: "
            "the folder was written by another version; give another --out, or use the version that wrote it"
        )
    try:
        return check_manifest(data, path)
    except RecordError as exc:
        raise RunFolderError(str(exc)) from None


def _short(exc: BaseException) -> str:
    return "nested too deep" if isinstance(exc, RecursionError) else str(exc).split("\n")[0][:120]


def write_manifest(folder: Path, manifest: RunManifest, secrets: list[str]) -> None:
    """Write run.json whole (a crash leaves the old one), with every secret in reach redacted."""
    path = folder / "run.json"
    tmp = path.with_suffix(".json.tmp")
    text = json.dumps(manifest.model_dump(mode="json"), ensure_ascii=False, indent=1)
    tmp.write_text(redact(text, secrets) + "\n", encoding="utf-8")
    os.replace(tmp, path)

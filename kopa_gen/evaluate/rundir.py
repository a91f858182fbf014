"""A run folder (`runs/<name>`): `run.json` says what ran, `episodes.jsonl` holds one scored episode a line, and a
lock file keeps one writer at a time.

A folder holds one run: one task set (the benchmark or one task dir, each task's content hashed), one policy
with its options, one world. Resuming with the same set adds episodes (more seeds, more rollouts, more tasks of
the set); anything else is refused, so two sets or two policies never mix and an episode recorded for another
version of a task is never taken as done. Later lines supersede earlier ones with the same key (an episode that
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
from urllib.parse import urlsplit, urlunsplit

import kopa_gen
from kopa_gen.client.errors import redact
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.records import EpisodeRecord, RecordError, check_record
from kopa_gen.processes import alive, hold_in_this_process_only, release

MANIFEST_FORMAT = 2
INFRASTRUCTURE = "infrastructure"
"""The stop reason of an episode whose model endpoint was down (connection refused, time-outs, 5xx, 429 after
every retry): recorded as failed-infrastructure, counted as a fail, and run again when the run is resumed."""


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


def public_url(url: str) -> str:
    """A base URL fit to write down: no user info, query or fragment (where keys sometimes travel)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


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


# The fields that make a run what it is: resuming with any of them different would mix two runs in one folder.
IDENTITY = ("task_set", "policy", "policy_options", "answer_mode", "live", "world_seed", "judge")


def _identity(manifest: dict[str, Any], name: str) -> Any:
    value = manifest.get(name)
    if name == "task_set" and isinstance(value, dict):  # which set, not which of its tasks ran so far
        return {k: v for k, v in value.items() if k != "hash"}
    if name in ("policy_options", "judge") and isinstance(
        value, dict
    ):  # the model, wherever it is served now
        return {k: v for k, v in value.items() if k != "base_url"}
    return value


def describe(manifest: dict[str, Any]) -> str:
    ts = manifest.get("task_set") or {}
    where = "the benchmark" if ts.get("kind") == "benchmark" else f"task dir {ts.get('path')}"
    options = manifest.get("policy_options") or {}
    who = f"policy {manifest.get('policy')}"
    if options.get("model"):
        who += f" (model {options['model']} at {options.get('base_url')})"
    mode = manifest.get("answer_mode")
    return f"{who} on {where}" + (f", answering in {mode} mode" if mode else "")


def merge(
    folder: Path, old: dict[str, Any] | None, new: dict[str, Any], has_episodes: bool
) -> dict[str, Any]:
    """The manifest to write for a run about to start in `folder`, or RunFolderError when its episodes would
    mix with another run's."""
    if old is None or not has_episodes:
        if has_episodes:
            raise RunFolderError(
                f"{folder} holds episodes but no run.json says what they are; give another --out "
                f"(or delete {folder})"
            )
        return new
    if old.get("format") != MANIFEST_FORMAT:
        raise RunFolderError(
            f"{folder} was written by an older kopa-gen whose run.json does not say which tasks ran; "
            f"give another --out (or delete {folder})"
        )
    for name in IDENTITY:
        if _identity(old, name) != _identity(new, name):
            raise RunFolderError(
                f"{folder} holds a run of {describe(old)} and this is {describe(new)} "
                f"({name} differs); give another --out"
            )
    changed = sorted(t for t, h in new["tasks"].items() if old["tasks"].get(t, h) != h)
    if changed:
        raise RunFolderError(
            f"{folder} holds episodes of another version of task {', '.join(changed)} (spec or gold fixture "
            "changed since); give another --out"
        )
    tasks = {**old["tasks"], **new["tasks"]}
    versions = list(old.get("code_versions") or [])
    if new["code_versions"][0] not in versions:
        versions.append(new["code_versions"][0])
    endpoints = list(old.get("endpoints") or [])
    endpoints += [url for url in new.get("endpoints") or [] if url not in endpoints]
    return {
        **new,
        "task_set": {**new["task_set"], "hash": set_hash(tasks)},
        "tasks": dict(sorted(tasks.items())),
        "seeds": sorted(set(old.get("seeds") or []) | set(new["seeds"])),
        "rollouts": max(int(old.get("rollouts") or 0), new["rollouts"]),
        "code_versions": versions,
        "endpoints": endpoints,
        "pool_guess": {**(old.get("pool_guess") or {}), **(new.get("pool_guess") or {})},
    }


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The folder's run.json, None when there is none; RunFolderError when it is not a run manifest at all."""
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
    return data


def _short(exc: BaseException) -> str:
    return "nested too deep" if isinstance(exc, RecursionError) else str(exc).split("\n")[0][:120]


def write_manifest(folder: Path, manifest: dict[str, Any], secrets: list[str]) -> None:
    """Write run.json whole (a crash leaves the old one), with every secret in reach redacted."""
    path = folder / "run.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(
        redact(json.dumps(manifest, ensure_ascii=False, indent=1), secrets) + "\n", encoding="utf-8"
    )
    os.replace(tmp, path)

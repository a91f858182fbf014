"""Processes that end cleanly when the process that started them dies: the few operating-system facts the world
build and the run folder's lock need, in one place.

A world build forks workers. Killed mid-build, its parent used to leave them running as orphans, holding what they
had inherited (the run folder's lock among it) and writing partial files; now each worker dies with its parent
(Linux: PR_SET_PDEATHSIG), no forked child keeps a lock its parent took, and what a dead process left in the cache
is swept by the next one."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1
_held: set[int] = set()
_held_lock = threading.Lock()


def alive(pid: int) -> bool:
    """Whether a process with this id exists (a zombie counts until it is reaped)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def die_with_parent(parent: int) -> None:
    """In a freshly started child: be killed when `parent` dies. On Linux the kernel does it (PR_SET_PDEATHSIG);
    the check after it covers a parent that died before the request was made. Elsewhere: nothing (a child there
    is spawned, not forked, and holds nothing of its parent's)."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def hold_in_this_process_only(fd: int) -> None:
    """Keep the lock on `fd` (an flock) from living on in forked children: a child inherits the descriptor, and
    the lock lasts as long as any copy of it is open, so a child that outlived its parent kept the lock. Forked
    children let go of their copy at once."""
    with _held_lock:
        _held.add(fd)


def release(fd: int) -> None:
    """`fd` is closed or unlocked: forked children no longer need to close it."""
    with _held_lock:
        _held.discard(fd)


def _close_held() -> None:
    """In a forked child: point each held descriptor at /dev/null, which drops the child's reference to the locked
    file and keeps the number valid for any object that still thinks it owns it."""
    if not _held:
        return
    null = os.open(os.devnull, os.O_RDWR)
    for fd in list(_held):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_held)

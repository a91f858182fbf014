"""Keys never leave the process: every form a key can take in text is replaced by `***`, before any cut.

A key reaches text in more spellings than one: as sent (raw), percent-encoded in a URL (upper- or lower-case hex,
once or twice), with its `/` escaped in JSON (`\\/`, as PHP and Java services write it), and base64 or hex where a
service or a library encodes it. `redact` replaces all of them; a text is cut (an error snippet, a log line) only
after it, so no cut can leave a piece of a key that no longer matches.

Keys known to the process are registered here (`register`): the user's platform keys when live mode reads them,
model and judge keys when a request is sent with one. Registering the first key also makes every log record of
the process, whatever its logger (httpx's logs each request URL, key included, at INFO) and level, redacted when it
is made (`logging.setLogRecordFactory`), so no handler added later can print one.
"""

from __future__ import annotations

import base64
import functools
import logging
import threading
import traceback
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

MASK = "***"
MIN_LENGTH = 8
"""Shorter values are not redacted: a key of a few characters would mask that text everywhere it occurs, and no
platform issues one."""

_KEYS: set[str] = set()
_LOCK = threading.Lock()
_installed = False


@functools.cache
def forms(secret: str) -> tuple[str, ...]:
    """Every spelling of `secret` that `redact` replaces, longest first (so no shorter form cuts a longer one)."""
    raw = secret.encode("utf-8")
    once = quote(secret, safe="")
    spellings = {
        secret,
        once,
        _lower_hex(once),
        quote(once, safe=""),
        secret.replace("/", "\\/"),
        base64.b64encode(raw).decode("ascii"),
        base64.urlsafe_b64encode(raw).decode("ascii"),
        raw.hex(),
        raw.hex().upper(),
    }
    spellings |= {s.rstrip("=") for s in spellings if s.endswith("=")}
    return tuple(sorted((s for s in spellings if len(s) >= MIN_LENGTH), key=len, reverse=True))


def _lower_hex(encoded: str) -> str:
    parts = encoded.split("%")
    return parts[0] + "".join("%" + p[:2].lower() + p[2:] for p in parts[1:])


def register(secret: str | None) -> None:
    """Remember a key of this process for `redact` and for every log record from now on."""
    if not secret or len(secret) < MIN_LENGTH:
        return
    with _LOCK:
        _KEYS.add(secret)
    _install_log_redaction()


def registered() -> frozenset[str]:
    return frozenset(_KEYS)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every form of every registered key and of `secrets` replaced by `***`."""
    for form in _all_forms(secrets):
        if form in text:
            text = text.replace(form, MASK)
    return text


def redact_bytes(body: bytes, secrets: Iterable[str] = ()) -> bytes:
    """`redact` for a body before it is decoded or parsed (its error snippets are cut from it)."""
    for form in _all_forms(secrets):
        spelled = form.encode("utf-8")
        if spelled in body:
            body = body.replace(spelled, MASK.encode("ascii"))
    return body


def _all_forms(secrets: Iterable[str]) -> tuple[str, ...]:
    """Every spelling of every key to redact, longest first across keys: where one key holds another (a key and
    a longer one that begins with it), masking the shorter first would leave the longer one's tail showing."""
    return _ordered(frozenset(_KEYS.union(s for s in secrets if s and len(s) >= MIN_LENGTH)))


@functools.cache
def _ordered(keys: frozenset[str]) -> tuple[str, ...]:
    """Sorted once per set of keys: redaction runs on every tool result."""
    return tuple(sorted({form for secret in keys for form in forms(secret)}, key=lambda f: (-len(f), f)))


def _install_log_redaction() -> None:
    global _installed
    with _LOCK:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            _redact_record(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed = True


def _redact_record(record: logging.LogRecord) -> None:
    """Redact a record's message, its exception and stack text as it is made (a formatter uses the text set
    here instead of formatting the exception again)."""
    try:
        message = record.getMessage()
    except Exception:  # a record whose arguments do not fit its format: logging reports it when it is emitted
        return
    clean = redact(message)
    if clean != message:
        record.msg, record.args = clean, ()
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
    if record.stack_info:
        record.stack_info = redact(record.stack_info)

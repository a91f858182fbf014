"""Envelope families: how each platform wraps rows, paging facts and result codes, in JSON and XML.

Each family module knows both directions of its wire format: `render` (what the sandbox sends) and `parse` (what
the client reads), so the two can never drift apart.
"""

from __future__ import annotations

from kopa_gen.envelopes.base import Family, Page, Parsed, Reply, Wire
from kopa_gen.envelopes.dart import DartFamily
from kopa_gen.envelopes.datagokr import DataGoKrFamily
from kopa_gen.envelopes.hub import HubFamily
from kopa_gen.envelopes.stanregin import StanReginFamily
from kopa_gen.spec.kopa import Envelope

FAMILIES: dict[Envelope, Family] = {
    "dart": DartFamily(),
    "flat": DartFamily(),  # the same flat {status, message, list} shape, for kopa-gen's own workspace platform
    "datagokr": DataGoKrFamily(),
    "hub": HubFamily(),
    "stanregin": StanReginFamily(),
}

__all__ = ["FAMILIES", "Family", "Page", "Parsed", "Reply", "Wire"]

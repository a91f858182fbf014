"""Who may reach `kopa-gen serve --transport http`: loopback by default; another address only when asked for, and
then with a bearer token, checked by the MCP SDK's own auth middleware, and Host/Origin checks against the names
the user lists.

On loopback the SDK already refuses a foreign Host (421) and Origin (403), which keeps a web page the user visits
from driving the tools (DNS rebinding). Off loopback nothing did: any client that could reach the port could call
every tool, with `--live` on the user's own keys. Now the address must be chosen with `--allow-remote`, every
request carries the token from `--token-env VAR` (`Authorization: Bearer ...`), and Host and Origin must be among
the names given."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcp.server import Server
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

LOOPBACK_NAMES = ("localhost",)
MIN_TOKEN = 16
"""Shortest token accepted: one a client can guess is no protection."""


def is_loopback(host: str) -> bool:
    """Whether binding `host` serves this machine only (127.0.0.0/8, ::1, localhost)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def is_wildcard(host: str) -> bool:
    """Whether binding `host` serves every interface (0.0.0.0, ::)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


class StaticToken:
    """The SDK's TokenVerifier for one shared secret: a request is let in when its bearer token equals it (compared
    in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8", "surrogateescape"), self._token):
            return AccessToken(token="***", client_id="kopa-gen serve", scopes=[])
        return None


@dataclass(frozen=True)
class Exposure:
    """How an HTTP server is reachable: the address, the token (None: none asked), the Host and Origin values
    let in."""

    host: str
    port: int
    token: str | None
    allowed_hosts: Sequence[str]
    allowed_origins: Sequence[str]

    def app(self, server: Server[Any]) -> Starlette:
        """The streamable HTTP app of `server` behind these checks (all of them the SDK's own)."""
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(self.allowed_hosts),
            allowed_origins=list(self.allowed_origins),
        )
        if self.token is None:
            return server.streamable_http_app(host=self.host, transport_security=security)
        auth = AuthSettings(issuer_url=self.url, resource_server_url=None)
        return server.streamable_http_app(
            host=self.host, transport_security=security, auth=auth, token_verifier=StaticToken(self.token)
        )

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def exposure(
    host: str,
    port: int,
    token: str | None,
    hosts: Sequence[str] = (),
    origins: Sequence[str] = (),
) -> Exposure:
    """The checks for a server on `host`. Host: the loopback names (as the SDK allows on loopback), the bound
    address unless it is a wildcard, the given hosts and the hosts of the given origins, each on any port unless
    it names one. Origin: the loopback origins and the given ones."""
    bound = [] if is_wildcard(host) else [f"[{host}]" if ":" in host else host]
    allowed: list[str] = []
    for name in ["127.0.0.1", "localhost", "[::1]", *bound, *hosts, *(urlsplit(o).netloc for o in origins)]:
        for value in [name] if _has_port(name) else [name, f"{name}:*"]:
            if value not in allowed:
                allowed.append(value)
    loopback_origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    return Exposure(host, port, token, allowed, [*loopback_origins, *origins])


def _has_port(name: str) -> bool:
    return "]:" in name if name.startswith("[") else ":" in name

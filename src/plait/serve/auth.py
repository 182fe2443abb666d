"""A token source and a bind address → the bearer token `plait serve` requires, and the ASGI guards every request
passes: the token check and the request body cap.

The token comes from `$PLAIT_SERVE_TOKEN` or `--token-file`; without one the
server refuses to start unless `--no-auth` is given and it listens on loopback
only. Every path but the studio's (`/`, `/static/...`) needs
`Authorization: Bearer <token>`; the comparison takes constant time.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from pathlib import Path
from typing import Any, Awaitable, Callable

__all__ = ["BodyCap", "BearerAuth", "TokenError", "load_token", "loopback"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Paths anyone may read: the studio's page and assets (they hold no data; the data comes through the API).
PUBLIC = ("/", "/index.html")
PUBLIC_PREFIX = "/static/"


class TokenError(ValueError):
    """No usable token: one line, for the CLI to print."""


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_token(token_file: str | None, no_auth: bool, host: str) -> str | None:
    """The token to require, or None (no auth: only with `no_auth` on a loopback address)."""
    if no_auth:
        if not loopback(host):
            raise TokenError(f"--no-auth is allowed only on a loopback address, not {host}: give a token instead")
        return None
    if token_file:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenError(f"cannot read the token file {token_file}: {exc.__class__.__name__}") from None
        if not token:
            raise TokenError(f"the token file {token_file} is empty")
        return token
    token = os.environ.get("PLAIT_SERVE_TOKEN", "").strip()
    if token:
        return token
    raise TokenError(
        "a bearer token is needed: set PLAIT_SERVE_TOKEN or pass --token-file FILE (or --no-auth on a loopback address)"
    )


async def _error(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BearerAuth:
    """Refuses (401) any request to a non-public path without the right bearer token."""

    def __init__(self, app: App, token: str | None) -> None:
        self.app = app
        self.token = None if token is None else token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.token is None or _public(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                given = value
                break
        scheme, _, credential = given.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(credential.strip(), self.token):
            await _error(send, 401, "a bearer token is required", [(b"www-authenticate", b"Bearer")])
            return
        await self.app(scope, receive, send)


def _public(path: str) -> bool:
    return path in PUBLIC or path.startswith(PUBLIC_PREFIX)


class _TooLarge(Exception):
    pass


class BodyCap:
    """Refuses (413) a request whose body is over `limit` bytes: by its Content-Length, or as it streams in."""

    def __init__(self, app: App, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _error(send, 400, "the Content-Length header is not a number")
                    return
                if declared > self.limit:
                    await _error(send, 413, f"the request body is over {self.limit} bytes")
                    return
        seen = 0
        started = False

        async def capped() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        async def watched(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, capped, watched)
        except _TooLarge:
            if not started:
                await _error(send, 413, f"the request body is over {self.limit} bytes")

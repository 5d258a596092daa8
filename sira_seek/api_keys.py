"""Bearer API keys for every server sira-seek starts: the HTTP service and the MCP server.

Both front ends ask the same of a caller (``Authorization: Bearer KEY``, compared in constant
time, never logged) and read the keys the same way (a file, ``SIRA_SEEK_SERVE_API_KEYS``),
so the check lives here, beside neither: the MCP server importing the HTTP service's
guards made one front end depend on another. ``service.guards`` adds what only the HTTP
service needs (a body size limit, its open documentation pages).
"""

from __future__ import annotations

import hmac
import json
import logging
import stat
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any

from sira_seek.input_errors import InputError

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"})
"""What the HTTP service answers without a key: the API's own description (it holds no data)."""

OPEN_PREFIX = "/static-offline-docs/"
"""The scripts and styles of those pages, served by the service itself (fastapi-offline)."""

KEYS_ENV = "SIRA_SEEK_SERVE_API_KEYS"
"""Where the keys may also come from: comma-separated, for ``serve`` and ``mcp`` alike."""


def read_api_keys(path: Path | None, env_value: str | None) -> tuple[str, ...]:
    """Keys from a file (one per line; blank lines and ``#`` comments skipped) and from the
    comma-separated environment value. A key shorter than 16 characters is refused: it could
    be guessed. A file or a set variable that yields no key is refused too: asking for keys
    and getting none would otherwise serve without authentication, silently. A file others
    may read is warned about (logged). Refusals are ``InputError``s."""
    keys: list[str] = []
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text (one API key per line)") from None
        from_file = [line.strip() for line in text.splitlines()]
        from_file = [line for line in from_file if line and not line.startswith("#")]
        if not from_file:
            raise InputError(
                f"{path} holds no API key (only blank lines or # comments): refusing to serve "
                "without authentication; put one key per line"
            )
        keys += from_file
        exposed = keys_file_exposure(path)
        if exposed:
            logger.warning("%s", exposed)
    if env_value is not None:
        from_env = [k.strip() for k in env_value.split(",") if k.strip()]
        if not from_env:
            raise InputError(
                f"{KEYS_ENV} is set but holds no API key: refusing to serve without "
                "authentication; give comma-separated keys, or unset it"
            )
        keys += from_env
    short = [i for i, key in enumerate(keys, start=1) if len(key) < 16]
    if short:
        raise InputError(
            f"API key {short[0]} is shorter than 16 characters; use long random keys "
            "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    return tuple(dict.fromkeys(keys))


def keys_file_exposure(path: Path) -> str | None:
    """A warning when users other than the owner may read the keys file (``mode & 0o077``):
    anyone who can read it can call the service."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if not mode & 0o077:
        return None
    return (
        f"the API keys file {path} may be read by group or others "
        f"(mode {mode:04o}); restrict it: chmod 600 {path}"
    )


def key_matches(given: str, keys: Iterable[str]) -> bool:
    """Whether ``given`` is one of ``keys``, in time independent of where they differ."""
    found = False
    for key in keys:
        found |= hmac.compare_digest(given.encode(), key.encode())
    return found


async def reply(send: Send, status: int, detail: str, headers: dict[str, str]) -> None:
    """A JSON error reply (``detail``, the HTTP API's error shape) sent before any app runs."""
    body = json.dumps({"detail": detail, "errors": []}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class ApiKeys:
    """401 unless ``Authorization: Bearer KEY`` names one of the keys (``open_paths`` and
    paths under ``open_prefix`` excepted: by default the HTTP API's own description; the MCP
    server has none and opens nothing). The key is never logged or echoed."""

    def __init__(
        self,
        app: ASGIApp,
        keys: tuple[str, ...],
        *,
        open_paths: frozenset[str] = OPEN_PATHS,
        open_prefix: str | None = OPEN_PREFIX,
    ) -> None:
        self.app = app
        self.keys = keys
        self.open_paths, self.open_prefix = open_paths, open_prefix

    def _open(self, path: str) -> bool:
        return path in self.open_paths or bool(
            self.open_prefix and path.startswith(self.open_prefix)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or self._open(path):
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            detail = "missing API key: send `Authorization: Bearer <key>`"
            await reply(send, 401, detail, {"www-authenticate": "Bearer"})
            return
        if not key_matches(given.strip(), self.keys):
            detail = "wrong API key"
            await reply(send, 401, detail, {"www-authenticate": 'Bearer error="invalid_token"'})
            return
        await self.app(scope, receive, send)

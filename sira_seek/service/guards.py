"""What stands between the network and the API: API keys, a body size limit, the Host header.

A search service reachable by others needs the same three habits as any other: callers
prove who they are (bearer API keys, compared in constant time, never logged), a request
body cannot exhaust the server's memory (413 before the body is read whole), and a browser
page cannot reach a loopback server through DNS rebinding (the Host header must name this
server; Starlette's ``TrustedHostMiddleware`` checks it).
"""

from __future__ import annotations

import contextlib
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

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""4 MiB: a thousand times a long question with its expansions, far below a memory problem."""

OPEN_PATHS = frozenset({"/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"})
"""What answers without a key: the API's own description (it holds no data)."""

OPEN_PREFIX = "/static-offline-docs/"
"""The scripts and styles of those pages, served by the service itself (fastapi-offline)."""

KEYS_ENV = "SIRA_SEEK_SERVE_API_KEYS"


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


async def _reply(send: Send, status: int, detail: str, headers: dict[str, str]) -> None:
    body = json.dumps({"detail": detail, "errors": []}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """413 for a body over ``max_bytes``: at once from Content-Length, else as soon as the
    streamed chunks (a chunked body has no length) pass the limit; the rest is never read.

    The app reading the body sees the overflow as an error and may answer it its own way
    (FastAPI makes any failure while reading the body a 400); that answer is dropped and the
    413 sent instead, unless the app had already started its response."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        too_big = f"the request body is larger than {self.max_bytes:,} bytes"
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _reply(send, 413, too_big, {"connection": "close"})
            return
        seen = 0
        over = False
        replied = False

        async def limited() -> Message:
            nonlocal seen, over
            if over:
                raise _TooBig
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    over = True
                    raise _TooBig
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal replied
            if over and not replied:
                return  # the app's answer to a body it could not read: the 413 replaces it
            replied = True
            await send(message)

        with contextlib.suppress(_TooBig):
            await self.app(scope, limited, guarded_send)
        if over and not replied:
            await _reply(send, 413, too_big, {"connection": "close"})


class _TooBig(Exception):
    pass


class ApiKeys:
    """401 unless ``Authorization: Bearer KEY`` names one of the keys (the OpenAPI document
    and its pages excepted). The key is never logged or echoed."""

    def __init__(self, app: ASGIApp, keys: tuple[str, ...]) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path in OPEN_PATHS or path.startswith(OPEN_PREFIX):
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            detail = "missing API key: send `Authorization: Bearer <key>`"
            await _reply(send, 401, detail, {"www-authenticate": "Bearer"})
            return
        if not key_matches(given.strip(), self.keys):
            detail = "wrong API key"
            await _reply(send, 401, detail, {"www-authenticate": 'Bearer error="invalid_token"'})
            return
        await self.app(scope, receive, send)

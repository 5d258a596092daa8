"""What stands between the network and the API: API keys, a body size limit, the Host header.

A search service reachable by others needs the same three habits as any other: callers
prove who they are (bearer API keys, ``sira_seek.api_keys``, shared with the MCP server, so
neither front end imports the other; re-exported here for the service), a request
body cannot exhaust the server's memory (413 before the body is read whole), and a browser
page cannot reach a loopback server through DNS rebinding (the Host header must name this
server; Starlette's ``TrustedHostMiddleware`` checks it).
"""

from __future__ import annotations

import contextlib
import logging

from sira_seek.api_keys import (
    KEYS_ENV,
    OPEN_PATHS,
    OPEN_PREFIX,
    ApiKeys,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    key_matches,
    read_api_keys,
    reply,
)

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "KEYS_ENV",
    "OPEN_PATHS",
    "OPEN_PREFIX",
    "ASGIApp",
    "ApiKeys",
    "BodyLimit",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "key_matches",
    "read_api_keys",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""4 MiB: a thousand times a long question with its expansions, far below a memory problem."""


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
            await reply(send, 413, too_big, {"connection": "close"})
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
            await reply(send, 413, too_big, {"connection": "close"})


class _TooBig(Exception):
    pass

"""The service's logs: on stderr (stdout is the ``--json`` line), one request id per request,
and a JSON form for log pipelines.

The request id comes from the caller's ``X-Request-ID`` when it looks like one (letters,
digits, ``-``, ``_``, ``.``; at most 64), else a fresh one; it goes back in the response's
``X-Request-ID`` and into every log record written while the request runs (the access line
included), so a client's report and the server's log meet.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

from .guards import ASGIApp, Message, Receive, Scope, Send

LogFormat = Literal["text", "json"]

LogLevel = Literal["warning", "info", "debug"]
"""sira-seek's own records: the command line's default, ``--verbose``, ``--debug``."""

CLIENT_LOGGERS = ("elastic_transport", "opensearch")
"""The engine clients' loggers (as the command line treats them, cli/groups.py): their
request lines and expected 404s only under ``--debug``."""

REQUEST_ID: ContextVar[str | None] = ContextVar("sira_seek_request_id", default=None)
_GIVEN_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    """Sets ``REQUEST_ID`` for the request and echoes it as ``X-Request-ID``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _GIVEN_ID.match(given) else uuid.uuid4().hex
        token = REQUEST_ID.set(request_id)

        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, tagged)
        finally:
            REQUEST_ID.reset(token)


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` (``-`` outside a request) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id; an access line
    also carries client, method, path, HTTP version and status as fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "request_id": getattr(record, "request_id", "-"),
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            client, method, path, version, status = record.args
            entry.update(
                client=client, method=method, path=path, http=version, status=int(str(status))
            )
        else:
            entry["message"] = record.getMessage()
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class QuietClients(logging.Filter):
    """Drops the engine clients' records below ERROR (an index-exists probe logs its 404 as
    a WARNING there)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not record.name.startswith(CLIENT_LOGGERS)


def log_config(fmt: LogFormat, level: LogLevel = "warning") -> dict[str, Any]:
    """The server's whole logging config, applied by uvicorn in every process (the parent
    and each worker): every handler on stderr with the request id attached, sira-seek's
    records at ``level`` (its service's start and stop lines always), the engine clients'
    below ERROR only at ``debug``; ``json`` swaps both formatters for ``JsonFormatter``."""
    text = {
        "default": {
            "()": "uvicorn.logging.DefaultFormatter",
            "fmt": "%(levelprefix)s %(message)s [%(request_id)s]",
        },
        "access": {
            "()": "uvicorn.logging.AccessFormatter",
            "fmt": '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s '
            "[%(request_id)s]",
        },
    }
    as_json = {name: {"()": "sira_seek.service.logs.JsonFormatter"} for name in text}
    debug = level == "debug"
    handler = {
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
        "filters": ["request_id"] if debug else ["request_id", "quiet_clients"],
    }
    loggers: dict[str, Any] = {
        "uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": False},
        "uvicorn.error": {"level": "INFO"},
        "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
        "sira_seek": {"level": level.upper()},
        "sira_seek.service": {"level": "DEBUG" if debug else "INFO"},
    }
    if debug:
        loggers.update({name: {"level": "INFO"} for name in CLIENT_LOGGERS})
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "request_id": {"()": "sira_seek.service.logs.RequestIdFilter"},
            "quiet_clients": {"()": "sira_seek.service.logs.QuietClients"},
        },
        "formatters": as_json if fmt == "json" else text,
        "handlers": {
            "default": {**handler, "formatter": "default"},
            "access": {**handler, "formatter": "access"},
        },
        "loggers": loggers,
        "root": {"handlers": ["default"], "level": "WARNING"},
    }

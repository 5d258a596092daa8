"""``sira-seek serve``: the HTTP API (``sira_seek.service``) under uvicorn."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sira_seek.service.guards import DEFAULT_MAX_BODY_BYTES
from sira_seek.workflows import validation
from sira_seek.workflows.errors import InvalidInput

from .access import api_keys_option, is_loopback, server_keys
from .exit_codes import BadInput
from .options import cluster_options, json_option, require_extra

if TYPE_CHECKING:  # the serve extra (fastapi, uvicorn) is imported only when serving
    from sira_seek.client import SiraSeek
    from sira_seek.service.app import ServiceConfig
    from sira_seek.service.logs import LogFormat
    from sira_seek.service.redaction import Redactor

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
"""Host header values a loopback server answers by default (a DNS-rebinding page sends its
own domain name, which is refused)."""


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option(
    "--index",
    "indexes",
    multiple=True,
    help="An index (or alias) requests may name; repeat for several; the first is the "
    "default. Without it, any one index by name (never a wildcard or a list).",
)
@api_keys_option
@click.option(
    "--max-body-bytes",
    type=click.IntRange(1024),
    default=DEFAULT_MAX_BODY_BYTES,
    show_default=True,
    help="Larger request bodies get 413.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="Host header values served (repeat). Default: loopback names on a loopback --host, "
    "any on another.",
)
@click.option(
    "--llm",
    "llm_spec",
    default=None,
    help="LLM spec (openai:URL#MODEL, llamacpp:gemma3-270m): SIRA for /search requests "
    "without expansions, and SEEK's model for /ask (default for /ask: SIRA_SEEK_LLM_BACKEND, "
    "else the CPU model). Without it /search is BM25 unless the body brings expansions.",
)
@click.option(
    "--access-log/--no-access-log",
    default=True,
    show_default=True,
    help="One line per request on stderr (method, path, status, request id; never a body).",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one JSON object per log line (time, level, request_id; access lines with "
    "client, method, path, status), for log pipelines.",
)
@json_option(
    "Print one JSON line (url, host, port, docs, index, llm) once the port is bound, then serve."
)
@cluster_options
def serve(
    host: str,
    port: int,
    indexes: tuple[str, ...],
    api_keys_file: Path | None,
    run_open: bool,
    max_body_bytes: int,
    allowed_hosts: tuple[str, ...],
    llm_spec: str | None,
    access_log: bool,
    log_format: LogFormat,
    as_json: bool,
    **cluster: Any,
) -> None:
    """Serve POST /search, POST /ask, GET /health and OpenAPI docs (/docs) over HTTP.

    The cluster is configured as for every command (--url or the local node, auth, TLS) and
    connected on the first request that needs it: a server started before its cluster
    answers 503 with the reason until the cluster is up. Bind to a non-loopback --host only
    behind your own authentication: the API has none.
    """
    require_extra("serve", "fastapi", "uvicorn")
    import uvicorn

    from sira_seek.service.app import ServiceConfig, create_app
    from sira_seek.service.logs import log_config
    from sira_seek.service.redaction import Redactor

    redact = Redactor.for_cluster(
        url=cluster["url"], password=cluster["password"], api_key=cluster["api_key"]
    )
    keys = server_keys(api_keys_file, host, run_open)
    _check_indexes(indexes)
    service = ServiceConfig(
        llm=llm_spec,
        indexes=indexes,
        api_keys=keys,
        max_body_bytes=max_body_bytes,
        allowed_hosts=allowed_hosts or _default_hosts(host),
    )
    app = create_app(_connector(cluster), service, redact=Redactor([*redact.secrets, *keys]))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        access_log=access_log,
        log_level="info",
        log_config=log_config(log_format),
        lifespan="on",
    )
    server = uvicorn.Server(config)
    sock = _bind(host, port)
    if as_json:
        click.echo(json.dumps(_ready_line(host, sock, service, redact)), nl=True)
    # uvicorn installed its handlers when the server was configured (above).
    _redact_log_handlers(redact)
    server.run(sockets=[sock])


def _connector(cluster: dict[str, Any]) -> Callable[[], SiraSeek]:
    """How the service connects, on the first request that needs the cluster."""
    import sira_seek

    def connect() -> SiraSeek:
        return sira_seek.connect(
            cluster["url"],
            api_key=cluster["api_key"],
            username=cluster["username"],
            password=cluster["password"],
            ca_certs=cluster["ca_certs"],
            ssl_fingerprint=cluster["ssl_fingerprint"],
            verify_certs=not cluster["insecure"],
            engine=cluster["engine"],
        )

    return connect


def _check_indexes(indexes: tuple[str, ...]) -> None:
    """Every --index is one concrete index or alias name, by the workflows' rule (exit 2)."""
    for name in indexes:
        try:
            validation.index_name(name, field="--index")
        except InvalidInput as exc:
            raise BadInput(str(exc)) from None


def _default_hosts(host: str) -> tuple[str, ...]:
    """Host headers served without --allowed-host: loopback names on a loopback --host."""
    return LOOPBACK_HOSTS if is_loopback(host) else ("*",)


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so `--port 0` (any free port) can be reported before
    serving starts."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def _ready_line(
    host: str, sock: socket.socket, service: ServiceConfig, redact: Redactor
) -> dict[str, Any]:
    """``serve --json``'s one line, printed once the port is bound (docs: json-output.md)."""
    bound = int(sock.getsockname()[1])
    base = f"http://{f'[{host}]' if ':' in host else host}:{bound}"
    return {
        "url": base,
        "host": host,
        "port": bound,
        "docs": f"{base}/docs",
        "index": service.index,
        "indexes": list(service.indexes),
        "auth": bool(service.api_keys),
        "llm": redact(service.llm) if service.llm else None,
    }


def _redact_log_handlers(redact: Redactor) -> None:
    """Every handler in the process masks the secrets, whatever logger a record comes from."""
    from sira_seek.service.redaction import RedactingFilter

    secret_filter = RedactingFilter(redact)
    root = logging.getLogger()
    if not root.handlers:  # else Python's last-resort handler would print unfiltered
        fallback = logging.StreamHandler()
        fallback.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        root.addHandler(fallback)
    for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(secret_filter)

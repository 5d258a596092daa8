"""``sira-seek serve``: the HTTP API (``sira_seek.service``) under uvicorn."""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import socket
from pathlib import Path
from typing import Any

import click

from sira_seek.service.guards import DEFAULT_MAX_BODY_BYTES, KEYS_ENV, read_api_keys
from sira_seek.workflows import validation
from sira_seek.workflows.errors import InvalidInput

from .exit_codes import BadInput
from .options import cluster_options, json_option, require_extra

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
"""Host header values a loopback server answers by default (a DNS-rebinding page sends its
own domain name, which is refused)."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
@click.option(
    "--api-keys-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help=f"Bearer API keys, one per line (also {KEYS_ENV}, comma-separated): every request "
    "but the OpenAPI pages needs `Authorization: Bearer KEY`.",
)
@click.option(
    "--open",
    "run_open",
    is_flag=True,
    help="Serve a non-loopback --host without API keys (only behind your own authentication).",
)
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
    help="One line per request on stderr (method, path, status; never a body).",
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
    as_json: bool,
    url: str | None,
    api_key: str | None,
    username: str | None,
    password: str | None,
    ca_certs: str | None,
    ssl_fingerprint: str | None,
    insecure: bool,
    engine: Any,
) -> None:
    """Serve POST /search, POST /ask, GET /health and OpenAPI docs (/docs) over HTTP.

    The cluster is configured as for every command (--url or the local node, auth, TLS) and
    connected on the first request that needs it: a server started before its cluster
    answers 503 with the reason until the cluster is up. Bind to a non-loopback --host only
    behind your own authentication: the API has none.
    """
    require_extra("serve", "fastapi", "uvicorn")
    import uvicorn

    import sira_seek
    from sira_seek.service.app import ServiceConfig, create_app
    from sira_seek.service.redaction import RedactingFilter, Redactor

    redact = Redactor.for_cluster(url=url, password=password, api_key=api_key)

    def connect() -> sira_seek.SiraSeek:
        return sira_seek.connect(
            url,
            api_key=api_key,
            username=username,
            password=password,
            ca_certs=ca_certs,
            ssl_fingerprint=ssl_fingerprint,
            verify_certs=not insecure,
            engine=engine,
        )

    try:
        keys = read_api_keys(api_keys_file, os.environ.get(KEYS_ENV))
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if not keys and not _is_loopback(host) and not run_open:
        raise BadInput(
            f"refusing to serve {host} without API keys: give --api-keys-file (or {KEYS_ENV}), "
            "or --open when your own proxy authenticates callers"
        )
    for name in indexes:
        try:
            validation.index_name(name, field="--index")
        except InvalidInput as exc:
            raise BadInput(str(exc)) from None
    if not allowed_hosts:
        allowed_hosts = LOOPBACK_HOSTS if _is_loopback(host) else ("*",)
    service = ServiceConfig(
        llm=llm_spec,
        indexes=indexes,
        api_keys=keys,
        max_body_bytes=max_body_bytes,
        allowed_hosts=allowed_hosts,
    )
    app = create_app(connect, service, redact=Redactor([*redact.secrets, *keys]))
    if not keys and not _is_loopback(host):
        click.echo(f"warning: listening on {host} without API keys (--open)", err=True)
    config = uvicorn.Config(
        app, host=host, port=port, access_log=access_log, log_level="info", lifespan="on"
    )
    server = uvicorn.Server(config)
    # Bind here, so `--port 0` (any free port) can be reported before serving starts.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = int(sock.getsockname()[1])
    if as_json:
        base = f"http://{f'[{host}]' if ':' in host else host}:{bound}"
        line = {
            "url": base,
            "host": host,
            "port": bound,
            "docs": f"{base}/docs",
            "index": service.index,
            "indexes": list(indexes),
            "auth": bool(keys),
            "llm": redact(llm_spec) if llm_spec else None,
        }
        click.echo(json.dumps(line), nl=True)
    # uvicorn installs its handlers when the server is configured; every handler in the
    # process then masks the secrets, whatever logger a record comes from.
    secret_filter = RedactingFilter(redact)
    root = logging.getLogger()
    if not root.handlers:  # else Python's last-resort handler would print unfiltered
        fallback = logging.StreamHandler()
        fallback.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        root.addHandler(fallback)
    for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(secret_filter)
    server.run(sockets=[sock])

"""``sira-seek serve``: the HTTP API (``sira_seek.service``) under uvicorn.

This command parses the flags into one validated ``ServeSettings`` (bad input stops it here,
before any worker starts), binds the port, prints the ``--json`` line, and hands over to
``sira_seek.service.runner``, which serves with one or ``--workers N`` processes and stops
gracefully.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from pydantic import ValidationError

from sira_seek.service.guards import DEFAULT_MAX_BODY_BYTES
from sira_seek.service.settings import (
    DEFAULT_PROFILE_MAX_AGE_S,
    DEFAULT_SHUTDOWN_TIMEOUT_S,
    ServeSettings,
    ServiceConfig,
)
from sira_seek.service.threads import DEFAULT_QUEUED, DEFAULT_THREADS
from sira_seek.workflows import validation
from sira_seek.workflows.errors import InvalidInput, validation_message

from .access import api_keys_option, is_loopback, server_keys
from .exit_codes import BadInput, EngineFailure
from .groups import debug_requested
from .options import (
    cluster_options,
    cluster_settings,
    friendly_errors,
    json_option,
    require_extra,
)

if TYPE_CHECKING:  # the serve extra (fastapi, uvicorn) is imported only when serving
    import socket

    from sira_seek.service.logs import LogFormat, LogLevel

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
    "--max-running",
    type=click.IntRange(min=1),
    default=DEFAULT_THREADS,
    show_default=True,
    help="/search and /ask calls run at once per worker (threads waiting on the cluster or "
    "the LLM).",
)
@click.option(
    "--max-queued",
    type=click.IntRange(min=0),
    default=DEFAULT_QUEUED,
    show_default=True,
    help="/search and /ask calls that may wait for a free thread, per worker; more get 429 "
    "with Retry-After. A queued call whose client disconnects is never started.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="Host header values served (repeat). Default: loopback names on a loopback --host, "
    "any on another.",
)
@click.option(
    "--profile-max-age",
    type=click.FloatRange(min=0),
    default=DEFAULT_PROFILE_MAX_AGE_S,
    show_default=True,
    metavar="SECONDS",
    help="Reuse an index's profile (its sira-seek fields, whether it is enriched) for this "
    "long between searches instead of reading it on each (about half a search's engine "
    "requests); a recreated or newly enriched index is seen within it. A deleted index is "
    "404 at once. 0: read it on every search.",
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
    "--embedder",
    "embedder_spec",
    metavar="SPEC",
    default=None,
    help="The query embedder of the vector methods (/search method dense, hybrid, "
    "sira-hybrid; /ask retriever dense, hybrid): cpu or openai:URL#MODEL, the model the index "
    "was ingested --embed with (default: SIRA_SEEK_SIRA_EMBEDDER, else cpu). Loaded once per "
    "worker, on the first request that needs it.",
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
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worker processes sharing the port, each with its own cluster connection (and its "
    "own copy of a local --llm model): about one per core the service may use.",
)
@click.option(
    "--shutdown-timeout",
    type=click.IntRange(min=0),
    default=DEFAULT_SHUTDOWN_TIMEOUT_S,
    show_default=True,
    metavar="SECONDS",
    help="On SIGTERM or Ctrl-C: stop accepting, let the requests in flight finish for at "
    "most this long (then cancel them), close the cluster connections, exit 0.",
)
@json_option(
    "Print one JSON line (url, host, port, docs, index, llm, workers) once the port is bound, "
    "then serve."
)
@cluster_options
@friendly_errors  # its output and log lines masked; the workers mask their own logs
def serve(
    host: str,
    port: int,
    indexes: tuple[str, ...],
    api_keys_file: Path | None,
    run_open: bool,
    max_body_bytes: int,
    max_running: int,
    max_queued: int,
    allowed_hosts: tuple[str, ...],
    profile_max_age: float,
    llm_spec: str | None,
    embedder_spec: str | None,
    access_log: bool,
    log_format: LogFormat,
    workers: int,
    shutdown_timeout: int,
    as_json: bool,
    **cluster: Any,
) -> None:
    """Serve POST /search, POST /ask, GET /health, GET /metrics and OpenAPI docs (/docs)
    over HTTP.

    The cluster is configured as for every command (--url or the local node, auth, TLS) and
    connected on the first request that needs it: a server started before its cluster
    answers 503 with the reason until the cluster is up. A non-loopback --host needs API
    keys (or --open behind your own authentication).
    """
    require_extra("serve", "fastapi", "uvicorn")
    from sira_seek.service import runner
    from sira_seek.workflows.ingesting import live_embedder_spec

    if embedder_spec is not None:
        # A bad spec, or a batch: one that cannot embed a query: exit 2 before any worker starts.
        live_embedder_spec(embedder_spec)
    service = ServiceConfig(
        llm=llm_spec,
        embedder=embedder_spec,
        indexes=_checked_indexes(indexes),
        api_keys=server_keys(api_keys_file, host, run_open),
        max_body_bytes=max_body_bytes,
        max_running=max_running,
        max_queued=max_queued,
        allowed_hosts=allowed_hosts or _default_hosts(host),
        profile_max_age=profile_max_age,
    )
    options: dict[str, Any] = {"access_log": access_log, "log_format": log_format}
    options |= {"workers": workers, "shutdown_timeout": shutdown_timeout, "log_level": _log_level()}
    settings = _settings(host, port, service, options, cluster)
    sock = runner.bind(host, port)
    if as_json:
        click.echo(json.dumps(_ready_line(settings, sock)), nl=True)
    try:
        runner.run(settings, sock)
    except runner.WorkersFailed as exc:
        raise EngineFailure(str(exc)) from None


def _settings(
    host: str, port: int, service: ServiceConfig, options: dict[str, Any], cluster: dict[str, Any]
) -> ServeSettings:
    """Every option in one validated value, what each worker builds its app from (exit 2
    for a value it refuses)."""
    try:
        cluster_settings(dict(cluster))  # options that cannot go together: exit 2, now
    except InvalidInput as exc:
        raise BadInput(str(exc)) from None
    try:
        return ServeSettings(
            host=host, port=port, service=service, cluster=_connect_arguments(cluster), **options
        )
    except ValidationError as exc:
        raise BadInput(validation_message(exc)) from None


def _connect_arguments(cluster: dict[str, Any]) -> dict[str, Any]:
    """The cluster options as ``sira_seek.client.connect`` takes them (``--insecure`` is
    ``verify_certs=False``; a CA file by its absolute path, whatever a worker's directory)."""
    arguments = {key: value for key, value in cluster.items() if key != "insecure"}
    arguments["verify_certs"] = not cluster.get("insecure", False)
    if arguments.get("ca_certs"):
        arguments["ca_certs"] = str(Path(arguments["ca_certs"]).resolve())
    return arguments


def _log_level() -> LogLevel:
    """The command line's logging (``--verbose``, ``--debug``), for every worker alike."""
    ctx = click.get_current_context()
    if debug_requested(ctx):
        return "debug"
    return "info" if ctx.find_root().params.get("verbose") else "warning"


def _checked_indexes(indexes: tuple[str, ...]) -> tuple[str, ...]:
    """Every --index is one concrete index or alias name, by the workflows' rule (exit 2)."""
    for name in indexes:
        try:
            validation.index_name(name, field="--index")
        except InvalidInput as exc:
            raise BadInput(str(exc)) from None
    return indexes


def _default_hosts(host: str) -> tuple[str, ...]:
    """Host headers served without --allowed-host: loopback names on a loopback --host."""
    return LOOPBACK_HOSTS if is_loopback(host) else ("*",)


def _ready_line(settings: ServeSettings, sock: socket.socket) -> dict[str, Any]:
    """``serve --json``'s one line, printed once the port is bound (docs: json-output.md)."""
    host, service = settings.host, settings.service
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
        "llm": settings.redactor()(service.llm) if service.llm else None,
        "workers": settings.workers,
    }

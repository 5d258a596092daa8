"""Running ``sira-seek serve``: one process, or a supervisor and ``--workers N`` processes, on
a socket bound beforehand; and stopping gracefully.

- One worker: uvicorn serves the app built from the settings in this process.
- Several: this process writes the settings where only its owner can read them, starts N
  workers (uvicorn's supervisor, ``spawn``), each building the same app from that file
  (``sira_seek.service.worker``), and keeps them alive. Prometheus counters go to a fresh
  multiprocess folder (``PROMETHEUS_MULTIPROC_DIR``), so ``/metrics`` from any worker sums
  them all. Both are removed when the server stops.
- Stopping (SIGTERM, or SIGINT / Ctrl-C): the listening socket is closed at once (new
  connections are refused), the requests in flight get ``shutdown_timeout`` seconds to
  finish (then they are cancelled), each worker closes its cluster connection and the
  process exits 0.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from sira_seek.redaction import redact_log_handlers

from .logs import log_config
from .settings import SETTINGS_ENV, ServeSettings, write_settings

if TYPE_CHECKING:
    import uvicorn

logger = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus-client's multiprocess mode: each worker's counters in files of this folder."""

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

WORKER_HEALTHCHECK_S = 20
"""How long the supervisor waits for a worker's answer to its liveness ping before replacing
it (uvicorn's default is 5 s): a worker starting on a busy machine (``spawn`` imports the
command line and uvicorn again before it can answer) is not a hung one."""


class WorkersFailed(RuntimeError):
    """A worker could not start (it would fail the same way on every restart)."""


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before serving so ``--port 0`` (any free port) can be
    reported first; shared by every worker.

    Made with ``IPPROTO_TCP`` named: asyncio turns Nagle's algorithm off (``TCP_NODELAY``) only
    on connections whose socket says it is TCP, and one made with protocol 0 does not. With
    Nagle on, a response written in two parts (headers, then body) waits for the client's
    delayed ACK on a kept-alive connection: about 40 ms added to every request.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def uvicorn_options(settings: ServeSettings) -> dict[str, Any]:
    """What ``uvicorn.Config`` gets besides the app, in every mode (``workers`` given, so
    uvicorn's own ``WEB_CONCURRENCY`` never overrides ``--workers``)."""
    return {
        "host": settings.host,
        "port": settings.port,
        "workers": settings.workers,
        "access_log": settings.access_log,
        "log_level": "info",
        "log_config": log_config(settings.log_format, settings.log_level),
        "lifespan": "on",
        "timeout_graceful_shutdown": settings.shutdown_timeout,
    }


def run(settings: ServeSettings, sock: socket.socket) -> None:
    """Serve on ``sock`` until SIGTERM or SIGINT; return once the requests in flight
    finished (or were cancelled after ``shutdown_timeout``) and every worker stopped.
    ``WorkersFailed`` when a worker could not start."""
    if settings.workers == 1:
        _serve_here(settings, sock)
    else:
        _supervise(settings, sock)


def _serve_here(settings: ServeSettings, sock: socket.socket) -> None:
    import uvicorn

    from .worker import build_app

    app = build_app(settings)
    config = uvicorn.Config(app, **uvicorn_options(settings))
    redact_log_handlers(settings.redactor())  # uvicorn configured the handlers just now
    server = uvicorn.Server(config)
    with _stop_requests(server):
        server.run(sockets=[sock])
    if not server.started:
        raise WorkersFailed("the server did not start (see the log above)")


@contextmanager
def _stop_requests(server: uvicorn.Server) -> Iterator[None]:
    """SIGTERM and SIGINT stop ``server``, also before it installed its own handlers.

    uvicorn re-raises the signal that stopped it once it finished, with the handler it
    found: Python's defaults would end the process by SIGTERM (exit 143) or as an
    interrupted command (exit 1) after a clean shutdown; this one is a normal exit (0).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(_signum: int, _frame: FrameType | None) -> None:
        server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _supervise(settings: ServeSettings, sock: socket.socket) -> None:
    import uvicorn

    from .worker import WORKER_FACTORY

    with _run_folder() as folder:
        metrics = folder / "metrics"
        metrics.mkdir()
        path = write_settings(settings, folder)
        with _environment({SETTINGS_ENV: str(path), MULTIPROC_ENV: str(metrics)}):
            config = uvicorn.Config(
                WORKER_FACTORY,
                factory=True,
                timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
                **uvicorn_options(settings),
            )
            redact_log_handlers(settings.redactor())
            with _restored_signals():
                supervisor = _supervisor(config, sock)
                supervisor.run()
    if supervisor.failed:
        raise WorkersFailed("a worker could not start (see the log above)")


def _supervisor(config: uvicorn.Config, sock: socket.socket) -> Any:
    """uvicorn's ``Multiprocess`` supervisor, closing the shared socket as soon as it is told
    to stop: the workers finish what they accepted, nobody accepts more (else the kernel
    would keep queueing connections on the parent's copy until every worker ended)."""
    from uvicorn.config import STARTUP_FAILURE
    from uvicorn.supervisors.multiprocess import Multiprocess

    class Supervisor(Multiprocess):
        def handle_term(self) -> None:
            self._stop_listening()
            super().handle_term()

        def handle_int(self) -> None:
            self._stop_listening()
            super().handle_int()

        def _stop_listening(self) -> None:
            for listener in self.sockets:
                listener.close()

        @property
        def failed(self) -> bool:
            return any(p.exitcode == STARTUP_FAILURE for p in self.processes)

    return Supervisor(config, sockets=[sock])


@contextmanager
def _run_folder() -> Iterator[Path]:
    """A fresh private folder (mode 0700) for one run's settings and metrics files."""
    folder = Path(tempfile.mkdtemp(prefix="sira-seek-serve-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` (inherited by the workers) while the block runs."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


@contextmanager
def _restored_signals() -> Iterator[None]:
    """The supervisor installs its own handlers for good; put the previous ones back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

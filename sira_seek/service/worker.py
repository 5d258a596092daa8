"""The app one ``sira-seek serve`` worker runs, built from the validated ``ServeSettings``.

``build_app`` is the one way from settings to an app: the single-process server calls it with
the parent's object; with ``--workers N`` uvicorn starts N fresh processes, and each imports
``app_from_environment`` (the factory named in ``WORKER_FACTORY``), which reads the settings
the parent wrote (``SETTINGS_ENV``) and calls ``build_app`` with them. The parent validated
them before any worker started; a worker only reads them back.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sira_seek.gc_settings import settle_server_heap
from sira_seek.redaction import redact_log_handlers

from .app import create_app
from .settings import SETTINGS_ENV, ServeSettings, read_settings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from sira_seek.client import SiraSeek

logger = logging.getLogger(__name__)

WORKER_FACTORY = "sira_seek.service.worker:app_from_environment"
"""What uvicorn imports and calls in each worker process."""


def connector(cluster: dict[str, str | bool | None]) -> Callable[[], SiraSeek]:
    """How the service connects, on the first request that needs the cluster:
    ``sira_seek.client.connect`` with the settings' arguments."""
    arguments: dict[str, Any] = dict(cluster)

    def connect() -> SiraSeek:
        from sira_seek.client import connect as connect_cluster

        return connect_cluster(**arguments)

    return connect


def ready_to_serve() -> None:
    """The process serves from now on: the request path's modules imported (the search
    workflow is otherwise imported by the first search), then the heap settled for the
    collector (``settle_server_heap``: 15-25% less CPU a search at 8 clients)."""
    import sira_seek.workflows.search  # noqa: F401

    settle_server_heap()


def build_app(settings: ServeSettings) -> FastAPI:
    """The service for ``settings`` in a server process (the single one, or each worker);
    ``app.state.serve_settings`` keeps what it was built from."""
    app = create_app(
        connector(settings.cluster),
        settings.service,
        redact=settings.redactor(),
        on_ready=ready_to_serve,
    )
    app.state.serve_settings = settings
    return app


def app_from_environment() -> FastAPI:
    """The app of one worker of ``serve --workers N``: the parent's settings, read back from
    the file ``SETTINGS_ENV`` names; the process's log handlers mask their secrets before
    the app exists."""
    path = os.environ.get(SETTINGS_ENV, "")
    try:
        settings = read_settings(Path(path))
    except (OSError, ValueError) as exc:  # never echoed: the file holds secrets
        from uvicorn.config import STARTUP_FAILURE

        logger.error(
            "this worker cannot read its settings (%s=%r: %s); workers are started by "
            "sira-seek serve --workers N",
            SETTINGS_ENV,
            path,
            type(exc).__name__,
        )
        # uvicorn's code for "would fail the same way on every restart": the parent stops.
        sys.exit(STARTUP_FAILURE)
    redact_log_handlers(settings.redactor())
    return build_app(settings)

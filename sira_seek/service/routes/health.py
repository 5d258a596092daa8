"""``GET /health``: whether the cluster answers, and what it is (never the secrets)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from sira_seek import __version__

from ..bodies import ERROR_RESPONSES
from ..errors import UNAVAILABLE_ERRORS
from ..state import ServiceState


def router(state: ServiceState) -> APIRouter:
    """The ``/health`` route: ``200`` for a green or yellow cluster, else ``503``."""
    routes = APIRouter()
    config, redact = state.config, state.redact

    @routes.get(
        "/health",
        summary="Whether the cluster answers, and what it is",
        responses={401: ERROR_RESPONSES[401], 503: {"description": "The cluster is down."}},
    )
    def health() -> JSONResponse:
        try:
            sk = state.cluster.get()
            status = sk.backend.wait_for_health("red", timeout_s=5)
        except UNAVAILABLE_ERRORS as exc:
            return JSONResponse(
                status_code=503,
                content={"status": "unavailable", "detail": redact(str(exc))},
            )
        info = sk.backend.info
        body = {
            "status": "ok" if status in ("green", "yellow") else "degraded",
            "cluster_status": status,
            "engine": info.engine,
            "version": info.version,
            "cluster_name": info.cluster_name,
            "llm": redact(config.llm) if config.llm else None,
            "index": config.index,
            "indexes": list(config.indexes),
            "sira_seek": __version__,
        }
        return JSONResponse(status_code=200 if body["status"] == "ok" else 503, content=body)

    return routes

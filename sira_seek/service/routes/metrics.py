"""``GET /metrics``: the Prometheus exposition of the service's counters and histograms."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse, Response

from ..bodies import ERROR_RESPONSES
from ..state import ServiceState


def router(state: ServiceState) -> APIRouter:
    """The ``/metrics`` route over ``state.metrics``."""
    routes = APIRouter()

    @routes.get(
        "/metrics",
        summary="Prometheus metrics: requests and latency by route and status, engine and LLM time",
        response_class=PlainTextResponse,
        responses={401: ERROR_RESPONSES[401]},
    )
    def prometheus() -> Response:
        body, content_type = state.metrics.exposition()
        return Response(content=body, media_type=content_type)

    return routes

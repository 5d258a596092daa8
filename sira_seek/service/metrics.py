"""Prometheus metrics of the HTTP API: requests and latency by route and status, and where
the time of a search or an answer went (engine, LLM).

prometheus-client does the exposition; each app has its own registry, so two apps in one
process (tests) never share counters.

Several worker processes (``serve --workers N``): prometheus-client's multiprocess mode. The
parent sets ``PROMETHEUS_MULTIPROC_DIR`` to a fresh folder before the workers start (the
client reads it when first imported); each worker's values go to files there, and
``/metrics``, whichever worker answers it, reads them all (``MultiProcessCollector``):
counters and histograms summed over the workers, living or gone.
"""

from __future__ import annotations

import os
import time
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector

from .guards import ASGIApp, Message, Receive, Scope, Send

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class ServiceMetrics:
    """The API's counters and histograms, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.multiprocess_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
        self.requests = Counter(
            "sira_seek_http_requests",
            "HTTP requests by route and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "sira_seek_http_request_seconds",
            "Time from the request's arrival to the end of its response, by route.",
            ["method", "route"],
            buckets=_SECONDS,
            registry=self.registry,
        )
        self.engine = Histogram(
            "sira_seek_engine_seconds",
            "Cluster time of one search (DF check and the weighted query).",
            ["route"],
            buckets=_SECONDS,
            registry=self.registry,
        )
        self.llm = Histogram(
            "sira_seek_llm_seconds",
            "LLM time of one request (SIRA expansion, or SEEK's calls).",
            ["route"],
            buckets=_SECONDS,
            registry=self.registry,
        )

        # The bounded work of /search and /ask (``threads.BlockingCalls``); summed over the
        # living workers in multiprocess mode.
        self.running = Gauge(
            "sira_seek_http_work_running",
            "/search and /ask calls running in a thread now.",
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self.queued = Gauge(
            "sira_seek_http_work_queued",
            "/search and /ask calls waiting for a free thread now (the queue depth).",
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self.rejected = Counter(
            "sira_seek_http_rejected",
            "Requests refused with 429 because every thread was busy and the queue full.",
            ["route"],
            registry=self.registry,
        )
        self.cancelled = Counter(
            "sira_seek_http_cancelled",
            "Requests whose client went away: dropped while queued (never started), or "
            "abandoned while running (the call ran on, its answer discarded).",
            ["route", "stage"],
            registry=self.registry,
        )

    def work(self, running: int, queued: int) -> None:
        """The queue's state, as ``BlockingCalls`` reports each change."""
        self.running.set(running)
        self.queued.set(queued)

    def exposition(self) -> tuple[bytes, str]:
        """The text format Prometheus scrapes, and its content type: this process's
        registry, or in multiprocess mode every worker's files."""
        if self.multiprocess_dir is None:
            return generate_latest(self.registry), CONTENT_TYPE_LATEST
        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=self.multiprocess_dir)
        return generate_latest(merged), CONTENT_TYPE_LATEST


class MetricsMiddleware:
    """Counts every HTTP request by its route template (``/search``, never a raw path with
    ids in it: unknown paths count as ``other``) and its status."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics, routes: frozenset[str]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        route = scope.get("path", "") if scope.get("path") in self.routes else "other"
        method = scope.get("method", "GET")
        status: dict[str, Any] = {"code": 500}

        async def recorded(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, recorded)
        finally:
            self.metrics.requests.labels(method, route, str(status["code"])).inc()
            self.metrics.latency.labels(method, route).observe(time.perf_counter() - started)

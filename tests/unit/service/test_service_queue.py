"""/search and /ask run behind a bounded queue: a full queue is 429 with Retry-After, a
queued call whose client went away never starts, a running one is abandoned (its thread
keeps its slot until it ends), and /metrics shows the queue.

No cluster: ``connect`` is a blocking double (``BlockingClusterDouble``), standing above the
library call, that holds its thread until the test lets it go, then fails as an unreachable
cluster. What could break: the bound not holding (a third call starting), a full queue
answered 500 or left waiting, a disconnected client's call run anyway, the slot of an
abandoned call freed while its thread still runs."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from sira_seek.backend import EngineError
from sira_seek.service.app import ServiceConfig, create_app
from sira_seek.service.threads import BlockingCalls, ClientGone, QueueFull


class BlockingClusterDouble:
    """Stands in for ``connect``: each call counts, then blocks until ``release``, then fails
    as a cluster that cannot be reached (503)."""

    def __init__(self) -> None:
        self.calls = 0
        self.gate = threading.Event()

    def __call__(self) -> object:
        self.calls += 1
        self.gate.wait(timeout=60)
        raise EngineError("the cluster at http://db:9200 refused the connection")


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    for _ in range(2000):
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def test_calls_wait_their_turn_first_come_first_served_and_a_full_queue_refuses() -> None:
    order: list[str] = []
    gate = threading.Event()

    def work(name: str) -> str:
        gate.wait(timeout=60)
        order.append(name)
        return name

    async def main() -> list[str]:
        calls = BlockingCalls(threads=1, queued=2)
        try:
            tasks = [asyncio.ensure_future(calls.run(work, n)) for n in ("a", "b", "c")]
            await until(lambda: _true(calls.waiting == 2), "two calls queued")
            assert calls.running == 1
            with pytest.raises(QueueFull) as full:
                await calls.run(work, "d")
            assert full.value.retry_after >= 1
            gate.set()
            return list(await asyncio.gather(*tasks))
        finally:
            calls.close()

    assert asyncio.run(main()) == ["a", "b", "c"]
    assert order == ["a", "b", "c"]  # "d" never ran


async def _true(value: bool) -> bool:
    return value


def test_a_queued_call_whose_client_left_never_starts_and_a_running_one_keeps_its_slot() -> None:
    started: list[str] = []
    gate = threading.Event()

    def work(name: str) -> str:
        started.append(name)
        gate.wait(timeout=60)
        return name

    async def main() -> None:
        calls = BlockingCalls(threads=1, queued=5)
        left = {name: asyncio.Event() for name in ("a", "b")}
        try:
            a = asyncio.ensure_future(calls.run(work, "a", gone=left["a"].wait))
            b = asyncio.ensure_future(calls.run(work, "b", gone=left["b"].wait))
            await until(lambda: _true(calls.waiting == 1), "b queued")
            left["b"].set()
            with pytest.raises(ClientGone) as gone_b:
                await b
            assert gone_b.value.stage == "queued" and calls.waiting == 0
            left["a"].set()
            with pytest.raises(ClientGone) as gone_a:
                await a
            assert gone_a.value.stage == "running"
            # "a" still runs in its thread: it keeps the slot, so "c" waits for it.
            c = asyncio.ensure_future(calls.run(work, "c"))
            await until(lambda: _true(calls.waiting == 1), "c queued behind a")
            assert calls.running == 1 and started == ["a"]
            gate.set()
            assert await c == "c"
            assert (calls.running, calls.waiting) == (0, 0)
        finally:
            calls.close()

    asyncio.run(main())
    assert started == ["a", "c"]  # "b" left while queued: never started


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


def test_a_full_queue_is_429_with_retry_after_and_metrics_show_the_queue() -> None:
    cluster = BlockingClusterDouble()
    config = ServiceConfig(
        indexes=("wikimh",), allowed_hosts=("testserver",), max_running=1, max_queued=1
    )
    app = create_app(cluster, config)

    async def main() -> tuple[list[httpx.Response], httpx.Response, str]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:

            async def queue_depth_is_one() -> bool:
                text = (await http.get("/metrics")).text
                return metric(text, "sira_seek_http_work_queued") == 1

            first = asyncio.ensure_future(http.post("/search", json={"query": "x"}))
            second = asyncio.ensure_future(http.post("/ask", json={"question": "x"}))
            await until(queue_depth_is_one, "one call running, one queued")
            third = await http.post("/search", json={"query": "y"})
            busy = (await http.get("/metrics")).text
            cluster.gate.set()
            return [await first, await second], third, busy

    answers, third, busy = asyncio.run(main())
    assert third.status_code == 429, third.text
    assert int(third.headers["retry-after"]) >= 1
    assert "busy" in third.json()["detail"]
    assert [a.status_code for a in answers] == [503, 503]
    assert cluster.calls == 2  # the refused request never reached the cluster
    assert metric(busy, "sira_seek_http_work_running") == 1
    assert 'sira_seek_http_rejected_total{route="/search"} 1.0' in busy
    assert 'sira_seek_http_requests_total{method="POST",route="/search",status="429"} 1.0' in busy


class RawRequest:
    """One ASGI request sent by hand, whose client can be made to go away (``leave``)."""

    def __init__(self, app: Any, path: str, body: dict[str, Any]) -> None:
        self.app = app
        self.path = path
        self.body = json.dumps(body).encode()
        self.gone = asyncio.Event()
        self.sent = False
        self.status: int | None = None

    def leave(self) -> None:
        self.gone.set()

    async def receive(self) -> dict[str, Any]:
        if not self.sent:
            self.sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]

    async def run(self) -> int | None:
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": self.path, "raw_path": self.path.encode(),
            "query_string": b"", "root_path": "", "server": ("testserver", 80),
            "client": ("127.0.0.1", 5000),
            "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"),
                        (b"content-length", str(len(self.body)).encode())],
        }  # fmt: skip
        await self.app(scope, self.receive, self.send)
        return self.status


def test_a_client_that_disconnects_cancels_its_queued_call_over_http() -> None:
    cluster = BlockingClusterDouble()
    config = ServiceConfig(
        indexes=("wikimh",), allowed_hosts=("testserver",), max_running=1, max_queued=4
    )
    app = create_app(cluster, config)

    async def main() -> str:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:

            async def queued(depth: int) -> bool:
                text = (await http.get("/metrics")).text
                return metric(text, "sira_seek_http_work_queued") == depth

            running = RawRequest(app, "/ask", {"question": "x"})
            waiting = RawRequest(app, "/search", {"query": "x"})
            first = asyncio.ensure_future(running.run())
            await until(lambda: _true(cluster.calls == 1), "the first call running")
            second = asyncio.ensure_future(waiting.run())
            await until(lambda: queued(1), "the second call queued")
            waiting.leave()
            assert await second == 499
            assert await queued(0)
            running.leave()
            assert await first == 499  # abandoned: its thread still waits on the double
            text = (await http.get("/metrics")).text
            assert metric(text, "sira_seek_http_work_running") == 1  # the slot is still taken
            cluster.gate.set()
            return text

    text = asyncio.run(main())
    assert cluster.calls == 1  # the queued call never started
    assert 'sira_seek_http_cancelled_total{route="/search",stage="queued"} 1.0' in text
    assert 'sira_seek_http_cancelled_total{route="/ask",stage="running"} 1.0' in text


def test_the_openapi_document_lists_413_and_429_with_retry_after() -> None:
    app = create_app(BlockingClusterDouble(), ServiceConfig(allowed_hosts=("testserver",)))
    paths = app.openapi()["paths"]
    for route in ("/search", "/ask"):
        responses = paths[route]["post"]["responses"]
        assert {"413", "422", "429"} <= set(responses)
        assert "Retry-After" in responses["429"]["headers"]

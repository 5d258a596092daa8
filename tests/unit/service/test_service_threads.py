"""The endpoints' blocking calls run in the app's own thread pool, with the caller's context.

``/search`` and ``/ask`` are ``async def`` endpoints that hand their library call to
``BlockingCalls`` (cheaper per request than anyio's ``to_thread``). What could break: the
request id not reaching log lines written inside the call (the context not carried), the
call running on the event loop (blocking every other request), errors lost on the way back."""

from __future__ import annotations

import asyncio
import threading
from contextvars import ContextVar

import pytest
from fastapi.testclient import TestClient

from sira_seek.backend import EngineError
from sira_seek.service.app import ServiceConfig, create_app
from sira_seek.service.logs import REQUEST_ID
from sira_seek.service.threads import BlockingCalls

MARK: ContextVar[str] = ContextVar("mark", default="unset")


def test_a_call_runs_in_a_pool_thread_with_the_callers_context_and_errors_come_back() -> None:
    calls = BlockingCalls(threads=2)

    def where(x: int) -> tuple[str, str, int]:
        return threading.current_thread().name, MARK.get(), x * 2

    def fails() -> None:
        raise KeyError("inside")

    async def main() -> tuple[str, str, int]:
        MARK.set("caller's")
        found = await calls.run(where, 21)
        with pytest.raises(KeyError, match="inside"):
            await calls.run(fails)
        return found

    try:
        name, mark, doubled = asyncio.run(main())
    finally:
        calls.close()
    assert name.startswith("sira-seek-request") and name != threading.current_thread().name
    assert (mark, doubled) == ("caller's", 42)


class ConnectRecorder:
    """Stands in for ``connect``: records the thread and the request id it was called with,
    then fails as a cluster that cannot be reached."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    def __call__(self) -> object:
        self.seen.append((threading.current_thread().name, REQUEST_ID.get()))
        raise EngineError("the cluster at http://db:9200 refused the connection")


@pytest.mark.parametrize(
    ("route", "body"), [("/search", {"query": "x"}), ("/ask", {"question": "x"})]
)
def test_search_and_ask_call_the_library_in_a_pool_thread_under_the_request_id(
    route: str, body: dict[str, str]
) -> None:
    recorder = ConnectRecorder()
    config = ServiceConfig(indexes=("wikimh",), allowed_hosts=("testserver",))
    with TestClient(create_app(recorder, config)) as client:  # lifespan: one try at start
        recorder.seen.clear()
        res = client.post(route, json=body, headers={"X-Request-ID": "trace-7"})
    assert res.status_code == 503 and "refused the connection" in res.json()["detail"]
    assert recorder.seen == [(recorder.seen[0][0], "trace-7")]
    assert recorder.seen[0][0].startswith("sira-seek-request")

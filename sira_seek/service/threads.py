"""Where the service's blocking library calls run: a thread pool of the app's own, behind a
bounded queue.

A FastAPI ``def`` endpoint runs in anyio's worker threads (``to_thread.run_sync``), whose
bookkeeping per call (the current task, a capacity limiter, a cancel scope, run variables)
was 15% of the event loop's time per search at one client (py-spy, ``--gil``). The hot
endpoints are ``async def`` instead and hand their one blocking call to this pool through
asyncio's ``run_in_executor``, carrying the caller's context (the request id of the logs).

The work is bounded: at most ``threads`` calls run, at most ``queued`` more wait their turn
(first come, first served), and a call beyond that is refused at once (``QueueFull``: the
service answers 429 with ``Retry-After``) instead of piling up unseen. A waiting call whose
client went away is dropped before it starts (``ClientGone``). A call already running
cannot be interrupted (a thread blocked on the cluster or the LLM has no safe stop): its
caller stops waiting and its result is discarded, while its thread (and slot) stay busy
until it ends, so the bound holds.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

T = TypeVar("T")

DEFAULT_THREADS = 40
"""As many as anyio's default limiter allows, which served the endpoints before: each
thread mostly waits on the cluster or the LLM."""

DEFAULT_QUEUED = 200
"""Calls that may wait for a thread: five times the threads, a few seconds of searches at
most; beyond that a client is told to come back (429) rather than wait unseen."""

MAX_RETRY_AFTER_S = 60

FIRST = asyncio.FIRST_COMPLETED


class QueueFull(Exception):
    """Every thread is busy and the queue is full; ``retry_after`` is a whole number of
    seconds after which a slot is likely free."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"the service is busy; retry after {retry_after} s")
        self.retry_after = retry_after


class ClientGone(Exception):
    """The client went away: ``stage`` says whether its call was dropped before it started
    (``queued``) or abandoned while it ran (``running``)."""

    def __init__(self, stage: Literal["queued", "running"]) -> None:
        super().__init__(f"the client went away while its call was {stage}")
        self.stage = stage


Watch = Callable[[], Awaitable[object]]
"""Returns when the caller's client went away (never, if it stays)."""


def _with(
    future: asyncio.Future[Any], watcher: asyncio.Future[object] | None
) -> set[asyncio.Future[Any]]:
    return {future} if watcher is None else {future, watcher}


class BlockingCalls:
    """A thread pool for the endpoints' blocking calls behind a bounded FIFO queue; ``close``
    when the app stops. ``on_change(running, queued)`` is told every change (the metrics'
    gauges). Used from one event loop (the app's)."""

    def __init__(
        self,
        threads: int = DEFAULT_THREADS,
        queued: int = DEFAULT_QUEUED,
        on_change: Callable[[int, int], None] | None = None,
    ) -> None:
        self.threads = threads
        self.queued = queued
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="sira-seek-request")
        self._running = 0
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._on_change = on_change
        self._mean_s = 0.0  # moving mean of a call's time, for Retry-After

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def run(self, fn: Callable[..., T], /, *args: object, gone: Watch | None = None) -> T:
        """``fn(*args)`` in a pool thread, in a copy of the caller's context, once a thread is
        free. ``QueueFull`` when none is and the queue is full; ``ClientGone`` when ``gone``
        returns first (before the call started: it never starts)."""
        watcher = asyncio.ensure_future(gone()) if gone is not None else None
        try:
            await self._slot(watcher)
            return await self._call(fn, args, watcher)
        finally:
            if watcher is not None:
                watcher.cancel()
                if watcher.done() and not watcher.cancelled():
                    watcher.exception()  # retrieved: a failed watch means the client left

    async def _slot(self, watcher: asyncio.Future[object] | None) -> None:
        """Take a thread's slot: at once when one is free and nobody waits, else in turn."""
        if self._running < self.threads and not self._waiting:
            self._running += 1
            self._changed()
            return
        if len(self._waiting) >= self.queued:
            raise QueueFull(self.retry_after())
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        self._changed()
        try:
            await asyncio.wait(_with(turn, watcher), return_when=FIRST)
        except BaseException:  # this request was cancelled (the server is stopping)
            self._leave(turn)
            raise
        if watcher is not None and watcher.done():
            self._leave(turn)
            raise ClientGone("queued")

    def _leave(self, turn: asyncio.Future[None]) -> None:
        """A waiting call gives up: out of the queue, or, had it just been handed a slot,
        the slot passes on to the next."""
        if turn.done():
            self._release()
        else:
            turn.cancel()
            self._waiting.remove(turn)
            self._changed()

    async def _call(
        self, fn: Callable[..., T], args: tuple[object, ...], watcher: asyncio.Future[object] | None
    ) -> T:
        """``fn`` in a thread; its slot is freed when the thread ends, never before (a caller
        that stopped waiting, or was cancelled, leaves the thread running)."""
        context = contextvars.copy_context()
        call = functools.partial(context.run, fn, *args)
        started = time.monotonic()
        future = asyncio.get_running_loop().run_in_executor(self._pool, call)

        def finished(_done: asyncio.Future[T]) -> None:
            self._mean_s += (time.monotonic() - started - self._mean_s) * 0.2
            self._release()

        future.add_done_callback(finished)
        # asyncio.wait never cancels what it waits for: a cancelled request leaves the
        # future (and its slot) to the thread.
        await asyncio.wait(_with(future, watcher), return_when=FIRST)
        if not future.done():
            raise ClientGone("running")
        return future.result()

    def _release(self) -> None:
        """A thread is free: the longest-waiting call takes it, else one fewer runs."""
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # the slot passes on: ``running`` stays the same
                self._changed()
                return
        self._running -= 1
        self._changed()

    def retry_after(self) -> int:
        """Seconds until the queue has likely moved on: the calls ahead, shared by the
        threads, at the recent mean time per call (at least 1, at most a minute)."""
        ahead = (len(self._waiting) + 1) / self.threads
        return max(1, min(MAX_RETRY_AFTER_S, math.ceil(ahead * self._mean_s)))

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self._running, len(self._waiting))

    def close(self) -> None:
        """No new calls; those still running finish in their threads."""
        self._pool.shutdown(wait=False, cancel_futures=True)

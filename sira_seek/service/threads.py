"""Where the service's blocking library calls run: a thread pool of the app's own.

A FastAPI ``def`` endpoint runs in anyio's worker threads (``to_thread.run_sync``), whose
bookkeeping per call (the current task, a capacity limiter, a cancel scope, run variables)
was 15% of the event loop's time per search at one client (py-spy, ``--gil``). The hot
endpoints are ``async def`` instead and hand their one blocking call to this pool through
asyncio's ``run_in_executor``, carrying the caller's context (the request id of the logs).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

DEFAULT_THREADS = 40
"""As many as anyio's default limiter allows, which served the endpoints before: each
thread mostly waits on the cluster or the LLM."""


class BlockingCalls:
    """A thread pool for the endpoints' blocking calls; ``close`` when the app stops."""

    def __init__(self, threads: int = DEFAULT_THREADS) -> None:
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="sira-seek-request")

    async def run(self, fn: Callable[..., T], /, *args: object) -> T:
        """``fn(*args)`` in a pool thread, in a copy of the caller's context."""
        context = contextvars.copy_context()
        call = functools.partial(context.run, fn, *args)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    def close(self) -> None:
        """No new calls; those still running finish in their threads."""
        self._pool.shutdown(wait=False, cancel_futures=True)

"""Blocking wrapper over any async ``LLMClient``, for scripts, notebooks and synchronous call sites.

The async client keeps its own event loop on a private thread, so connection pools survive
between calls and the wrapper also works when the caller is already inside an event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Sequence
from types import TracebackType
from typing import Any, TypeVar

from sira_seek.input_errors import InputError
from sira_seek.llm.client import LLMClient
from sira_seek.llm.pending import PendingRequests
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse

T = TypeVar("T")

DEFAULT_PROGRESS_CONCURRENCY = 16
"""Requests in flight when progress is asked for and no concurrency is given (as LLMExpander)."""


class BlockingLLMClient:
    """``generate`` / ``generate_many`` as plain blocking calls."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="sira-seek-llm-loop", daemon=True
        )
        self._thread.start()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run another coroutine of ``client`` (its ``post_json`` for embeddings) on the
        client's own loop, blocking: the same pools and loop as ``generate``."""
        return self._run(coro)

    def model_name(self) -> str:
        return self._run(self.client.model_name())

    def generate(self, request: LLMRequest) -> LLMResponse:
        return self._run(self.client.generate(request))

    def generate_many(
        self,
        requests: Sequence[LLMRequest],
        concurrency: int | None = None,
        *,
        on_done: Callable[[int], None] | None = None,
    ) -> list[LLMResponse | LLMError]:
        """Answer all requests, in input order; failures become ``LLMError`` records.

        ``on_done(1)`` fires as each request finishes (answered or failed), so a caller can
        show progress over a long batch (a CPU model takes seconds per call). It runs on the
        client's loop thread. With it, each request goes through the client's own
        ``generate_many`` one at a time, at most ``concurrency`` (default
        ``DEFAULT_PROGRESS_CONCURRENCY``) in flight, so failures are recorded exactly as in
        one batch.
        """
        if on_done is None:
            return self._run(self.client.generate_many(requests, concurrency))
        return self._run(self._generate_reporting(requests, concurrency, on_done))

    async def _generate_reporting(
        self,
        requests: Sequence[LLMRequest],
        concurrency: int | None,
        on_done: Callable[[int], None],
    ) -> list[LLMResponse | LLMError]:
        limit = concurrency or DEFAULT_PROGRESS_CONCURRENCY
        if limit < 1:
            raise InputError(f"concurrency must be at least 1, not {limit}")
        semaphore = asyncio.Semaphore(limit)
        waiting = PendingRequests()

        async def one(index: int, request: LLMRequest) -> LLMResponse | LLMError | None:
            with waiting.collect():  # every pending request of the batch goes in one round
                async with semaphore:
                    (outcome,) = await self.client.generate_many([request], 1)
                if isinstance(outcome, LLMError):
                    outcome = outcome.model_copy(update={"request_index": index})
                on_done(1)
                return outcome
            return None

        outcomes = list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))
        waiting.raise_if_any()
        return [outcome for outcome in outcomes if outcome is not None]

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self.client.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    def __enter__(self) -> BlockingLLMClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

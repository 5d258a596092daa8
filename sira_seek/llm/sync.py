"""Blocking wrapper over any async ``LLMClient``, for scripts, notebooks and sync call sites.

The async client keeps its own event loop on a private thread, so connection pools survive
between calls and the wrapper also works when the caller is already inside an event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from types import TracebackType
from typing import Any, TypeVar

from sira_seek.llm.client import LLMClient
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse

T = TypeVar("T")


class SyncLLMClient:
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

    def model_name(self) -> str:
        return self._run(self.client.model_name())

    def generate(self, request: LLMRequest) -> LLMResponse:
        return self._run(self.client.generate(request))

    def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return self._run(self.client.generate_many(requests, concurrency))

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self.client.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    def __enter__(self) -> SyncLLMClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

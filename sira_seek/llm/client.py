"""The one interface every backend implements, and the batch helper they share.

Async first: throughput comes from keeping many requests in flight. ``BlockingLLMClient`` in
``sync.py`` derives the blocking API from this one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, runtime_checkable

from sira_seek.input_errors import InputError
from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.pending import PendingRequest
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse


@runtime_checkable
class LLMClient(Protocol):
    """A backend that answers ``LLMRequest``s."""

    @property
    def backend(self) -> str:
        """Short backend name recorded in responses, cache keys and the ledger."""
        ...

    async def model_name(self) -> str:
        """The model that answers (may ask the server the first time)."""
        ...

    async def generate(self, request: LLMRequest) -> LLMResponse:
        """Answer one request; raises ``LLMCallError`` subclasses on failure."""
        ...

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        """Answer all requests, at most ``concurrency`` in flight; failures become ``LLMError``."""
        ...

    async def aclose(self) -> None:
        """Release connections, processes or model memory."""
        ...


async def generate_many_bounded(
    generate: Callable[[LLMRequest], Awaitable[LLMResponse]],
    requests: Sequence[LLMRequest],
    concurrency: int,
    *,
    backend: str = "",
    model: str = "",
) -> list[LLMResponse | LLMError]:
    """Run ``generate`` over ``requests`` with bounded concurrency, in input order.

    Every failed call (an ``LLMCallError``: the server unreachable, a timeout, a malformed
    answer, ...) is turned into an ``LLMError`` record carrying the request's index, so a batch
    of a million documents survives one bad prompt. Any other exception is a bug, not an LLM
    outage: it propagates (a traceback, a non-zero exit, an HTTP 500) instead of passing for a
    failed call that SIRA would answer with plain BM25. Requests an offline batch round has no
    answer for yet (``pending.PendingRequest``) are all collected, then raised as one.
    """
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, not {concurrency}")
    semaphore = asyncio.Semaphore(concurrency)
    pending: list[PendingRequest] = []

    async def one(index: int, request: LLMRequest) -> LLMResponse | LLMError:
        async with semaphore:
            started = time.perf_counter()
            try:
                return await generate(request)
            except PendingRequest as signal:
                pending.append(signal)
                return LLMError(kind="internal", message="pending", request_index=index)
            except LLMCallError as exc:
                return LLMError.from_exception(
                    exc,
                    backend=backend,
                    model=model,
                    latency_s=time.perf_counter() - started,
                    request_index=index,
                )

    outcomes = list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))
    if pending:
        raise PendingRequest.merge(pending)
    return outcomes

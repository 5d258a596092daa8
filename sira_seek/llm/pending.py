"""The signal an offline batch round sends through a run: "this request has no answer yet".

A run over ``--llm batch:DIR#MODEL`` (``sira_seek.llm.batch_rounds``) does not call a server:
each request is looked up among the answers of earlier rounds, and one that has none is
written down for the next round and interrupts whoever asked, with ``PendingRequest``.

It is a ``BaseException``, like ``asyncio.CancelledError``: control flow, not a failure. The
``except Exception`` handlers along the way (a failed LLM call recorded on a step, an expansion
noted as failed, a question recorded as failed, the usage ledger) must let it through, or a
request that is merely not answered yet would be taken for a failure and its question
finished without the answer. The few places that run several requests at once collect every
pending one before they re-raise (``generate_many_bounded``, ``gather_settled``,
``PendingRequests``), so one round holds all the requests a run can make at that point.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any


class PendingRequest(BaseException):  # noqa: N818 - a signal, like asyncio.CancelledError
    """Requests (their batch ``custom_id``s) that have no answer yet; the run goes on in the
    next round, once the answers are there."""

    def __init__(self, custom_ids: Iterable[str]) -> None:
        self.custom_ids = tuple(dict.fromkeys(custom_ids))
        super().__init__(f"{len(self.custom_ids)} LLM request(s) wait for a batch round")

    @classmethod
    def merge(cls, signals: Iterable[PendingRequest]) -> PendingRequest:
        """One signal for all of ``signals``' requests."""
        return cls(cid for signal in signals for cid in signal.custom_ids)


class PendingRequests:
    """Collects the ``PendingRequest``s of independent items (queries, questions) that a loop
    runs one after another, so every item gets its requests into the round before the signal
    goes on::

        waiting = PendingRequests()
        for query in queries:
            with waiting.collect():
                ...  # an item whose request is pending stops here, the loop goes on
        waiting.raise_if_any()
    """

    def __init__(self) -> None:
        self.signals: list[PendingRequest] = []

    def collect(self) -> _Collect:
        return _Collect(self)

    def __bool__(self) -> bool:
        return bool(self.signals)

    def raise_if_any(self) -> None:
        if self.signals:
            raise PendingRequest.merge(self.signals)


class _Collect:
    def __init__(self, owner: PendingRequests) -> None:
        self.owner = owner

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: Any, tb: Any) -> bool:
        if isinstance(exc, PendingRequest):
            self.owner.signals.append(exc)
            return True
        return False


async def gather_settled(*awaitables: Awaitable[Any]) -> list[Any]:
    """``asyncio.gather`` that lets every awaitable finish before it raises: the first
    failure (in argument order) if any, else one ``PendingRequest`` for all pending ones.

    Plain ``gather`` raises at the first exception and leaves the others running unseen; here
    concurrent LLM calls of one question all get their requests into the same batch round.
    """
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    pending = [r for r in results if isinstance(r, PendingRequest)]
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, PendingRequest):
            raise result
    if pending:
        raise PendingRequest.merge(pending)
    return list(results)

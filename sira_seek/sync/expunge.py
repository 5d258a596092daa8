"""Merging away the deleted documents a sync leaves behind.

Every enrichment write is an update, so every enriched document leaves one deleted copy in
its segment. Term statistics (DF, BM25 IDF, SIRA's query-side DF filter) count those copies
until segments merge, so right after a sync they drift. ``--expunge-deletes`` ends the run
with an ``only_expunge_deletes`` force-merge; it is opt-in because merging rewrites segments
(I/O a user may want to schedule).
"""

from __future__ import annotations

import time

from pydantic import BaseModel

from sira_seek.backend import SearchBackend


class ExpungeSummary(BaseModel):
    """Deleted documents before and after the merge, and how long it took."""

    deleted_before: int
    deleted_after: int
    seconds: float


def expunge_deletes(backend: SearchBackend, index: str) -> ExpungeSummary:
    started = time.perf_counter()
    backend.refresh(index)  # deletes show in the statistics once refreshed
    before = backend.deleted_docs(index)
    after = backend.expunge_deletes(index) if before else 0
    return ExpungeSummary(
        deleted_before=before,
        deleted_after=after,
        seconds=round(time.perf_counter() - started, 3),
    )

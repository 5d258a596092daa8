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
from sira_seek.workflows import validation
from sira_seek.workflows.errors import InvalidInput


class ExpungeSummary(BaseModel):
    """Deleted documents before and after the merge, and how long it took."""

    deleted_before: int
    deleted_after: int
    seconds: float


def expunge_target(backend: SearchBackend, index: str) -> str:
    """The one concrete index the merge of ``index`` (an index or an alias of one) rewrites.

    A merge rewrites segments of every index a name reaches, so it takes a concrete name only:
    ``index`` must pass the one index-name rule (no wildcard, list or ``_all``), and an alias
    must point at exactly one index. ``InvalidInput`` (field ``index``) otherwise, before any
    merge; the enrich workflow asks this before the run, so a refusal costs no LLM work.
    """
    validation.index_name(index)
    indexes, _ = backend.resolve_name(index)
    if len(indexes) != 1:
        found = "no index"
        if indexes:
            found = f"an alias of {len(indexes)} indexes ({', '.join(indexes)})"
        raise InvalidInput(
            f"expunge-deletes merges one index, and {index!r} is {found}: name one index",
            field="index",
        )
    return indexes[0]


def expunge_deletes(backend: SearchBackend, index: str) -> ExpungeSummary:
    """Merge away the deleted copies in ``index`` (by its concrete name, ``expunge_target``)."""
    started = time.perf_counter()
    index = expunge_target(backend, index)
    backend.refresh(index)  # deletes show in the statistics once refreshed
    before = backend.deleted_docs(index)
    after = backend.expunge_deletes(index) if before else 0
    return ExpungeSummary(
        deleted_before=before,
        deleted_after=after,
        seconds=round(time.perf_counter() - started, 3),
    )

"""Exact document frequencies of many texts over several fields, for SIRA's DF check.

SIRA needs, for every candidate phrase, the terms the unigram field, the shingle subfield and
the enrichment fields make of it, and how many LIVE documents of the WHOLE index hold each
term. Two routes, both through the ``SearchBackend`` protocol:

- the live route (``batch_term_statistics``), two round trips: ``analyze_terms`` (the fields'
  own analyzers turn every text into terms), then ``live_doc_freqs`` (one size-0 search counts
  each term's live documents on every shard). Always exact, whatever the index's state.
- the term-statistics route (``grounding_term_statistics``), ONE round trip per query:
  ``df_bounds.analyze_with_doc_freq_bounds`` analyses every text and sums each term's Lucene
  ``docFreq`` over every shard in one ``term_vectors`` request. That sum counts deleted copies
  until a merge, so it is the live DF exactly when no copy of any shard holds a deleted
  document, which ``index_doc_counts`` (index stats, with |C|) says; those counts are reused for
  ``max_age_s`` seconds (``SIRA_SEEK_SIRA_DF_STATS_MAX_AGE``). With deleted documents the
  terms the bounds leave open (any bound above 0: a bound of 0 is an exact 0) are counted live,
  one more round trip, so the DFs stay exact.

Staleness, stated: for up to ``max_age_s`` after a write, |C| (hence tau * |C|) may be the older
one, and a copy deleted since the counts were read may still be counted in a DF. A name that
comes to mean another index (an alias moved, an index re-created) is seen at most as late (at
once when the old index is gone: the failed request reads the counts again). The term
statistics themselves are read on every query, from what searches see.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Literal

from pydantic import BaseModel, Field

from sira_seek.backend import (
    EngineError,
    IndexDocCounts,
    SearchBackend,
    TermDocFreqBounds,
    TermStatistic,
)

from .df_bounds import analyze_with_doc_freq_bounds

logger = logging.getLogger(__name__)

DfRoute = Literal["live_counts", "term_statistics", "term_statistics+live_counts"]


class TextFieldTerms(BaseModel):
    """The analysed terms of one text, per field, with index-wide document frequencies."""

    text: str
    fields: dict[str, list[TermStatistic]] = Field(default_factory=dict)


class BatchTermStatistics(BaseModel):
    texts: list[TextFieldTerms]
    doc_count: int = Field(description="Live documents in the index (|C|), over all shards.")
    round_trips: int
    route: DfRoute = Field(
        default="live_counts",
        description="live_counts: analysis + a live count; term_statistics: one request, the "
        "index holding no deleted document; term_statistics+live_counts: the open terms "
        "counted live beside it.",
    )


class TermStatisticsError(RuntimeError):
    """The engine refused the term-statistics request."""


def batch_term_statistics(
    backend: SearchBackend, index: str, fields: list[str], texts: list[str]
) -> BatchTermStatistics:
    """Analyse every text with every field's analyzer and count each term's live DF."""
    if not texts or not fields:
        return BatchTermStatistics(
            texts=[TextFieldTerms(text=t) for t in texts], doc_count=0, round_trips=0
        )
    analysed = backend.analyze_terms(index, fields, texts)
    wanted = [(f, t) for per_text in analysed for f, ts in per_text.items() for t in ts]
    live = backend.live_doc_freqs(index, wanted)
    df = live.as_dict()
    out = [
        TextFieldTerms(
            text=text,
            fields={
                f: [TermStatistic(term=t, doc_freq=df.get((f, t), 0)) for t in per_text.get(f, [])]
                for f in fields
            },
        )
        for text, per_text in zip(texts, analysed, strict=True)
    ]
    return BatchTermStatistics(
        texts=out, doc_count=live.doc_count, round_trips=1 + live.round_trips
    )


class DocCountsCache:
    """``index_doc_counts`` per backend and index name, read again once older than the age
    asked for. Process-wide (``DOC_COUNTS``): a retriever is often built per request (the HTTP
    API, the agent tools) while the backend lives on. Thread-safe; ``None`` answers (several
    indexes behind the name) are kept too, so an alias does not cost a stats request per
    query."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: weakref.WeakKeyDictionary[
            SearchBackend, dict[str, tuple[float, IndexDocCounts | None]]
        ] = weakref.WeakKeyDictionary()

    def get(
        self, backend: SearchBackend, index: str, max_age_s: float
    ) -> tuple[IndexDocCounts | None, int]:
        """The counts (fresh enough) and the round trips spent reading them (0 if reused).

        A backend that cannot be weakly referenced (or hashed) keeps nothing: read each time."""
        now = time.monotonic()
        try:
            with self._lock:
                entries = self._entries.setdefault(backend, {})
                cached = entries.get(index)
        except TypeError:
            entries, cached = {}, None
        if cached is not None and now - cached[0] <= max_age_s:
            return cached[1], 0
        counts = backend.index_doc_counts(index)
        with self._lock:
            entries[index] = (now, counts)
        return counts, counts.round_trips if counts is not None else 1

    def forget(self, backend: SearchBackend, index: str | None = None) -> None:
        """Drop what is kept for ``index`` (every index when None): the next check reads anew."""
        with self._lock:
            try:
                entries = self._entries.get(backend)
            except TypeError:
                return
            if entries is None:
                return
            if index is None:
                entries.clear()
            else:
                entries.pop(index, None)


DOC_COUNTS = DocCountsCache()


def _bounds(
    backend: SearchBackend, counts: IndexDocCounts | None, fields: list[str], texts: list[str]
) -> TermDocFreqBounds | None:
    if counts is None:
        return None
    return analyze_with_doc_freq_bounds(
        backend, counts.index, fields, texts, index_uuid=counts.uuid
    )


def grounding_term_statistics(
    backend: SearchBackend,
    index: str,
    fields: list[str],
    texts: list[str],
    *,
    max_age_s: float,
    cache: DocCountsCache = DOC_COUNTS,
) -> BatchTermStatistics:
    """The same DFs and |C| as ``batch_term_statistics``, in one round trip when the index's
    counts are fresh (at most ``max_age_s`` old) and say no copy holds a deleted document.

    ``max_age_s == 0`` or no bounds for the target (several indexes behind an alias,
    partitioned routing): the live route. Deleted documents present: the bounds above 0 are
    counted live (a bound of 0 is exact), so every DF equals the live route's; |C| then comes
    with that count. ``round_trips`` counts every request, the counts' and the once-per-index
    routing look-up included."""
    if not texts or not fields or max_age_s <= 0:
        return batch_term_statistics(backend, index, fields, texts)
    counts, trips = cache.get(backend, index, max_age_s)
    try:
        bounds = _bounds(backend, counts, fields, texts)
    except EngineError:
        if trips:  # the counts were read just now: the failure is the cluster's answer
            raise
        # Kept counts can name an index that is gone (deleted, the alias moved on): read
        # them again once rather than fail for the rest of the max age.
        logger.debug("DF check on %s: the kept counts failed, reading them again", index)
        cache.forget(backend, index)
        counts, trips = cache.get(backend, index, max_age_s)
        trips += 1  # the request that failed
        bounds = _bounds(backend, counts, fields, texts)
    if counts is None or bounds is None:
        logger.debug("DF check on %s: no per-shard bounds for this target, live counts", index)
        exact = batch_term_statistics(backend, index, fields, texts)
        return exact.model_copy(update={"round_trips": trips + exact.round_trips})
    trips += bounds.round_trips
    doc_count = counts.doc_count
    route: DfRoute = "term_statistics"
    df: dict[tuple[str, str], int] = {}
    if counts.deleted_docs:
        # Lucene still counts deleted copies: only a bound of 0 is exact, count the rest live.
        open_terms = [
            (f, t)
            for per_text in bounds.texts
            for f, per in per_text.items()
            for t, b in per.items()
            if b > 0
        ]
        route = "term_statistics+live_counts"
        if open_terms:
            live = backend.live_doc_freqs(index, open_terms)
            df = live.as_dict()
            doc_count = live.doc_count
            trips += live.round_trips
        logger.debug(
            "DF check on %s: %d deleted documents, %d terms counted live",
            index,
            counts.deleted_docs,
            len(set(open_terms)),
        )
    out = [
        TextFieldTerms(
            text=text,
            fields={
                f: [  # validated: cheaper than model_construct with pydantic 2.14 (1.2 us / 3 us)
                    TermStatistic(
                        term=t, doc_freq=df.get((f, t), 0) if counts.deleted_docs else bound
                    )
                    for t, bound in per_text.get(f, {}).items()
                ]
                for f in fields
            },
        )
        for text, per_text in zip(texts, bounds.texts, strict=True)
    ]
    return BatchTermStatistics(texts=out, doc_count=doc_count, round_trips=trips, route=route)

"""Exact document frequencies of many texts over several fields, in two round trips.

SIRA needs, for every candidate phrase, the terms the unigram field, the shingle subfield and
the enrichment fields make of it, and how many LIVE documents of the WHOLE index hold each
term. Lucene term statistics cannot give that on a real cluster: they are per shard (an
artificial document lands on one shard) and count deleted copies until a merge. So the work is
split in two engine calls, both through the ``SearchBackend`` protocol:

1. ``analyze_terms``: the fields' own analyzers turn every text into terms;
2. ``live_doc_freqs``: one size-0 search counts each term's live documents on every shard.

Two round trips, not one: no engine API both analyses free text and counts documents; sending
raw words as queries would let analysis (stemming, stopwords, shingles) decide silently what
is counted. The cost is bounded by the number of candidates, never by the corpus or shards.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend, TermStatistic


class TextFieldTerms(BaseModel):
    """The analysed terms of one text, per field, with index-wide document frequencies."""

    text: str
    fields: dict[str, list[TermStatistic]] = Field(default_factory=dict)


class BatchTermStatistics(BaseModel):
    texts: list[TextFieldTerms]
    doc_count: int = Field(description="Live documents in the index (|C|), over all shards.")
    round_trips: int


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

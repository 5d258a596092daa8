"""The DF filter's upper bounds: the same decisions as exact live counts, fewer counted."""

from __future__ import annotations

import random

from conftest import DOCS
from in_memory_backend import InMemoryBackend
from sync_doubles import layout_properties

from sira_seek.sira.df_bounds import ANALYZE_SENTINEL, term_doc_freq_bounds
from sira_seek.sync.corpus_df_filter import CorpusDFFilter
from sira_seek.sync.mapping import EnrichmentLayout

LAYOUT = EnrichmentLayout(
    index="idx", df_unigram_fields=["contents"], df_shingle_fields=["contents.shingles"]
)


def _exact(index: InMemoryBackend, tau: float, phrases: list[str]) -> CorpusDFFilter:
    """The filter as it was: every window counted over live documents (no bounds)."""
    index.bounds_unavailable = True
    try:
        reference = CorpusDFFilter(index, LAYOUT, tau=tau, doc_count=index.count("idx"))
        reference.verdicts(phrases)
    finally:
        index.bounds_unavailable = False
    return reference


def test_a_bound_inflated_by_deleted_copies_is_counted_and_kept_on_the_live_count() -> None:
    index = InMemoryBackend(DOCS, properties=layout_properties())
    for doc_id in ("d00", "d01", "d02", "d03"):
        index.edit(doc_id, text=f"ocean story {doc_id}")
        index.edit(doc_id, text=f"ocean tale {doc_id}")  # leaves a deleted copy with "ocean"
    (bounds,) = term_doc_freq_bounds(index, "idx", ["contents"], ["ocean"]).texts  # type: ignore[union-attr]
    assert bounds["contents"]["ocean"] == 8  # 4 live + 4 deleted copies: > tau * |C| = 4
    index.calls.clear()
    df = CorpusDFFilter(index, LAYOUT, tau=0.2, doc_count=20)
    verdicts = df.verdicts(["ocean", "place7", "brand new", "river"])
    assert verdicts["ocean"].kept and verdicts["ocean"].doc_freq == 4
    assert verdicts["ocean"].doc_freq_at_most is None
    # Kept on the bound: no count, and no DF reported as if counted.
    assert verdicts["place7"].kept and verdicts["place7"].doc_freq is None
    assert verdicts["place7"].doc_freq_at_most == 1
    assert verdicts["brand new"].doc_freq_at_most == 0
    assert not verdicts["river"].kept and verdicts["river"].doc_freq == 16
    # the routing values, one analysis per analyzer, the bounds' one request, one live count
    names = [name for name, _ in index.calls]
    assert names == ["shard_routings", "analyze", "analyze", "term_vectors", "live_doc_freqs"]
    (field, values) = index.calls[1][1]
    assert values == ["ocean", "place7", "brand new", "river", ANALYZE_SENTINEL]
    counted = index.calls[-1][1]
    # Only the windows of the two phrases the bounds left open, none bounded by 0.
    assert sorted(counted) == [("contents", "ocean"), ("contents", "river")]
    assert df.round_trips == 4 + 1


def test_no_count_at_all_when_every_bound_decides() -> None:
    index = InMemoryBackend(DOCS, properties=layout_properties())
    df = CorpusDFFilter(index, LAYOUT, tau=0.2, doc_count=20)
    verdicts = df.verdicts(["place3 story", "new words", "the"])
    names = [name for name, _ in index.calls]
    assert names == ["shard_routings", "analyze", "analyze", "term_vectors"]
    assert verdicts["place3 story"].kept and verdicts["place3 story"].doc_freq_at_most == 0
    assert verdicts["the"].reason == "no_terms"
    assert df.round_trips == 4


def test_without_bounds_every_window_is_counted_as_before() -> None:
    index = InMemoryBackend(DOCS, properties=layout_properties())
    index.bounds_unavailable = True
    df = CorpusDFFilter(index, LAYOUT, tau=0.2, doc_count=20)
    verdicts = df.verdicts(["place7", "river", "the"])
    assert [name for name, _ in index.calls] == [
        "shard_routings",
        "analyze_terms",
        "live_doc_freqs",
    ]
    assert verdicts["place7"].doc_freq == 1 and verdicts["place7"].doc_freq_at_most is None
    assert verdicts["river"].reason == "too_common" and verdicts["river"].doc_freq == 20
    assert verdicts["the"].reason == "no_terms"


def test_bounded_decisions_equal_exact_ones_under_churn_and_shards() -> None:
    """Random documents on three shards, rewritten again and again (every rewrite leaves a
    deleted copy the bounds count): every verdict equals the exact path's, and every DF the
    bounded path reports is a live count."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(12)]
    index = InMemoryBackend(properties=layout_properties())
    index.indexes["idx"].shards = 3

    def text() -> str:
        return " ".join(rng.choices(words, weights=range(12, 0, -1), k=6))

    for i in range(40):
        index.bulk_upsert("idx", [{"_id": f"d{i}", "title": f"t{i}", "text": text()}])
    for _ in range(60):
        index.edit(f"d{rng.randrange(40)}", text=text())
    phrases = list(
        dict.fromkeys([*words, *(f"{a} {b}" for a in words[:6] for b in words[:6]), "the"])
    )
    for tau in (0.1, 0.3, 0.6):
        reference = _exact(index, tau, phrases)
        bounded = CorpusDFFilter(index, LAYOUT, tau=tau, doc_count=index.count("idx"))
        got, want = bounded.verdicts(phrases), reference.verdicts(phrases)
        for phrase in phrases:
            assert (got[phrase].kept, got[phrase].reason) == (
                want[phrase].kept,
                want[phrase].reason,
            )
            if got[phrase].doc_freq is not None:
                assert got[phrase].doc_freq == want[phrase].doc_freq
            if got[phrase].doc_freq_at_most is not None:
                assert got[phrase].doc_freq_at_most >= (want[phrase].doc_freq or 0)
        assert any(v.doc_freq_at_most is not None for v in got.values())
        assert any(v.doc_freq is not None for v in got.values())

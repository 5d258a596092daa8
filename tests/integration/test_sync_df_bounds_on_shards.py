"""sira-sync's DF filter on real nodes: deciding on upper bounds (Lucene docFreq over every
shard, deleted copies included) and counting only what they leave open gives exactly the
decisions of live counts, on a three-shard index full of deleted copies."""

from __future__ import annotations

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.sira.df_bounds import term_doc_freq_bounds
from sira_seek.sira.term_vectors import batch_term_statistics
from sira_seek.sync.corpus_df_filter import CorpusDFFilter
from sira_seek.sync.mapping import EnrichmentLayout

pytestmark = pytest.mark.integration

N = 30
TAU = 0.25  # tau * |C| = 7.5
REWRITTEN = [*range(6), *range(10, 18)]  # the ocean and harbor documents, twice


def _text(i: int) -> str:
    words = [f"plain{i}", "common"]
    words += ["ocean"] if i < 6 else []  # 6 live: kept, though its copies push the bound to 14
    words += ["pebble"] if 6 <= i < 9 else []  # 3 live: kept on the bound alone
    words += ["harbor"] if 10 <= i < 18 else []  # 8 live: dropped
    return " ".join(words)


def test_bounded_decisions_equal_live_counts_with_deleted_copies_on_three_shards(
    backend: SearchBackend, index_name: str
) -> None:
    be, index = backend, index_name
    assert be.ensure_corpus_index(index, shards=3)
    docs = [{"_id": f"d{i}", "title": f"Doc {i}", "text": _text(i)} for i in range(N)]
    assert not be.bulk_upsert(index, docs).errors
    be.refresh(index)
    for round_ in range(2):  # every rewrite leaves a deleted copy holding the old text's words
        rewritten = [{"_id": f"d{i}", "text": f"{_text(i)} again{round_}"} for i in REWRITTEN]
        assert not be.bulk_upsert(index, rewritten).errors
        be.refresh(index)
    assert be.deleted_docs(index) > 0 and be.count(index) == N
    (settings,) = be.index_settings(index).values()
    assert int(settings["number_of_shards"]) == 3

    bounds = term_doc_freq_bounds(be, index, ["contents"], ["ocean"])
    assert bounds is not None
    assert bounds.texts[0]["contents"]["ocean"] > TAU * N  # deleted copies lift the bound

    layout = EnrichmentLayout(
        index=index,
        df_unigram_fields=["contents"],
        df_shingle_fields=["contents.shingles"],
    )
    phrases = [
        "ocean",
        "pebble",
        "harbor",
        "common",
        "ocean common",
        "plain3",
        "zzqq new",
        "the",
    ]
    df = CorpusDFFilter(be, layout, tau=TAU, doc_count=N)
    verdicts = df.verdicts(phrases)

    # The reference: every window of every phrase counted over live documents.
    fields = [*layout.df_unigram_fields, *layout.df_shingle_fields]
    exact = batch_term_statistics(be, index, fields, phrases)
    for entry in exact.texts:
        tiers: dict[str, int] = {}
        for field in fields:
            for stat in entry.fields.get(field, []):
                tier = f"{field == 'contents'}:{stat.term}"
                tiers[tier] = tiers.get(tier, 0) + stat.doc_freq
        verdict = verdicts[entry.text]
        if not entry.fields.get("contents"):
            assert verdict.reason == "no_terms", entry.text
            continue
        live = min(tiers.values())
        assert verdict.kept == (live <= TAU * N), (entry.text, live, verdict)
        if verdict.doc_freq is not None:  # a reported DF is the live count itself
            assert verdict.doc_freq == live, (entry.text, live, verdict)
        else:
            assert verdict.doc_freq_at_most is not None and verdict.doc_freq_at_most >= live

    assert verdicts["ocean"].kept and verdicts["ocean"].doc_freq == 6  # counted: bound > 7.5
    assert verdicts["pebble"].kept and verdicts["pebble"].doc_freq is None  # bound decided
    assert not verdicts["harbor"].kept and verdicts["harbor"].doc_freq == 8
    assert not verdicts["common"].kept and verdicts["common"].doc_freq == N
    assert verdicts["the"].reason == "no_terms"

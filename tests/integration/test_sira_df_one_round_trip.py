"""SIRA's DF check in one request on real nodes: the candidate tables (decisions, deciding DFs,
every window's DF, |C|) equal the live route's (analysis + a live count), on one shard and on
four, before and after updates leave deleted copies (then the open terms are counted live and
the tables still agree). The index's counts are reused for the stated max age: within it a
deleted copy can still be counted, which the test shows and then reads the counts anew."""

from __future__ import annotations

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.sira.df_bounds import analyze_with_doc_freq_bounds
from sira_seek.sira.df_check import CandidateTable, DocFrequencyChecker
from sira_seek.sira.index_profile import read_index_profile
from sira_seek.sira.term_vectors import DOC_COUNTS

pytestmark = pytest.mark.integration

N = 40
TAU = 0.2  # tau * |C| = 8
REWRITTEN = [*range(6), *range(10, 18)]  # the ocean and harbor documents, twice


def _text(i: int) -> str:
    words = [f"plain{i}", "common", "stone"]
    words += ["ocean liner"] if i < 6 else []  # 6 live; deleted copies lift its bound to 18
    words += ["pebble"] if 6 <= i < 9 else []  # 3 live: kept
    words += ["harbor"] if 10 <= i < 20 else []  # 10 live: too common
    words += ["blue whale"] if i % 5 == 0 else []  # 8 live, "blue whale" a bigram
    return " ".join(words)


PHRASES = [
    "ocean",
    "ocean liner",
    "pebble",
    "harbor",
    "common stone",
    "blue whale",
    "whale blue",
    "plain3",
    "zzqq never",
    "the of",
    "stone",
    "liner",
]
QUERY = "which big liner carried the stone"


def _check(be: SearchBackend, index: str, max_age: float) -> CandidateTable:
    checker = DocFrequencyChecker(
        be, read_index_profile(be, index), tau=TAU, stats_max_age_s=max_age
    )
    return checker.check(PHRASES, query=QUERY)


def _same(fast: CandidateTable, live: CandidateTable) -> None:
    assert fast.candidates == live.candidates
    assert (fast.doc_count, fast.max_doc_freq) == (live.doc_count, live.max_doc_freq)


@pytest.mark.parametrize("shards", [1, 4])
def test_one_request_tables_equal_the_live_route_with_and_without_deleted_copies(
    backend: SearchBackend, index_name: str, shards: int
) -> None:
    be, index = backend, index_name
    assert be.ensure_corpus_index(index, shards=shards)
    docs = [{"_id": f"d{i}", "title": f"Doc {i}", "text": _text(i)} for i in range(N)]
    assert not be.bulk_upsert(index, docs).errors
    be.refresh(index)
    assert be.deleted_docs(index) == 0
    DOC_COUNTS.forget(be, index)

    live = _check(be, index, 0)
    fast = _check(be, index, 3600)
    assert live.df_route == "live_counts" and fast.df_route == "term_statistics"
    _same(fast, live)
    decisions = {c.phrase: c.decision for c in fast.candidates}
    assert decisions["pebble"] == "kept" and decisions["harbor"] == "too_common"
    assert decisions["zzqq never"] == "absent" and decisions["the of"] == "no_terms"
    assert decisions["blue whale"] == "kept" and decisions["liner"] == "in_query"
    assert decisions["stone"] == "too_common" and decisions["ocean liner"] == "kept"
    again = _check(be, index, 3600)
    assert again.round_trips == 1 and again.candidates == fast.candidates

    for round_ in range(2):  # every rewrite leaves a deleted copy holding the old words
        rewritten = [{"_id": f"d{i}", "text": f"{_text(i)} again{round_}"} for i in REWRITTEN]
        assert not be.bulk_upsert(index, rewritten).errors
        be.refresh(index)
    assert be.deleted_docs(index) > 0 and be.count(index) == N

    # Within the max age the counts read before the rewrites still say "nothing deleted":
    # the bounds are taken as DFs, and the deleted copies show (the stated staleness).
    stale = _check(be, index, 3600)
    assert stale.df_route == "term_statistics"
    ocean = next(c for c in stale.candidates if c.phrase == "ocean")
    assert ocean.doc_freq is not None and ocean.doc_freq > 6

    DOC_COUNTS.forget(be, index)  # what the max age passing does
    fast = _check(be, index, 3600)
    live = _check(be, index, 0)
    assert fast.df_route == "term_statistics+live_counts"
    _same(fast, live)
    by_phrase = {c.phrase: c for c in fast.candidates}
    assert by_phrase["ocean"].decision == "kept" and by_phrase["ocean"].doc_freq == 6
    assert by_phrase["harbor"].decision == "too_common"
    assert fast.round_trips == 2 + 1 + 1  # the counts, the one request, the live count


def test_an_alias_is_read_through_its_concrete_index(
    backend: SearchBackend, index_name: str
) -> None:
    """The counts name the index behind the alias; the one request goes there. When the alias
    moves and the old index is deleted within the max age, the failed request reads the counts
    again at once."""
    be, alias = backend, f"{index_name}-alias"
    assert be.ensure_corpus_index(index_name, shards=2)
    docs = [{"_id": f"d{i}", "title": f"Doc {i}", "text": _text(i)} for i in range(N)]
    assert not be.bulk_upsert(index_name, docs).errors
    be.refresh(index_name)
    be.update_aliases([{"add": {"index": index_name, "alias": alias}}])
    counts = be.index_doc_counts(alias)
    assert counts is not None and counts.index == index_name
    fast = _check(be, alias, 3600)
    live = _check(be, alias, 0)
    assert fast.df_route == "term_statistics" and fast.doc_count == N
    _same(fast, live)

    moved = f"{index_name}-moved"
    try:
        assert be.ensure_corpus_index(moved)
        assert not be.bulk_upsert(moved, docs[:10]).errors
        be.refresh(moved)
        be.update_aliases(
            [
                {"remove": {"index": index_name, "alias": alias}},
                {"add": {"index": moved, "alias": alias}},
            ]
        )
        be.delete_index(index_name)
        fast = _check(be, alias, 3600)  # the kept counts still name the deleted index
        live = _check(be, alias, 0)
        assert fast.df_route == "term_statistics" and fast.doc_count == 10
        _same(fast, live)
    finally:
        be.delete_index(moved)


def test_a_field_with_another_position_gap_goes_one_document_per_text(
    backend: SearchBackend, index_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The texts go as ONE document mapped back by positions, which assumes the default
    position gap; a field mapped with another gap (0 here, and 1,000) fails the sentinel
    check: the same request is sent again with one document per text, the terms and DFs equal
    the analysis's, and the index is remembered (one request from then on)."""
    be, index = backend, index_name
    text = {"type": "text", "analyzer": "standard"}
    be.create_index(
        index,
        {
            "settings": {"number_of_shards": 2, "number_of_replicas": 0},
            "mappings": {
                "properties": {
                    "tight": {**text, "position_increment_gap": 0},
                    "wide": {**text, "position_increment_gap": 1000},
                }
            },
        },
    )
    docs = [{"_id": f"d{i}", "tight": _text(i), "wide": _text(i)} for i in range(N)]
    assert not be.bulk_upsert(index, docs).errors
    be.refresh(index)
    counts = be.index_doc_counts(index)
    assert counts is not None and counts.uuid
    texts = ["", "ocean liner", "the of", "pebble harbor", "ocean"]
    expected = be.analyze_terms(index, ["tight", "wide"], texts)
    live = be.live_doc_freqs(
        index, [(f, t) for per in expected for f, terms in per.items() for t in terms]
    ).as_dict()
    for field in ("tight", "wide"):
        caplog.clear()
        with caplog.at_level("INFO", logger="sira_seek.sira.df_bounds"):
            first = analyze_with_doc_freq_bounds(be, index, [field], texts, index_uuid=counts.uuid)
        again = analyze_with_doc_freq_bounds(be, index, [field], texts, index_uuid=counts.uuid)
        assert first is not None and again is not None
        assert first.texts == again.texts
        assert [list(b[field]) for b in first.texts] == [per[field] for per in expected]
        assert all(df == live[(field, t)] for b in first.texts for t, df in b[field].items())
        assert first.texts[1][field] == {"ocean": 6, "liner": 6}
        gone = [r for r in caplog.records if "one document per text" in r.getMessage()]
        # The first field's failure marks the index (its first call also finds the routing
        # values); the second goes one document per text from the start, in one request.
        if field == "tight":
            assert first.round_trips >= 2 and len(gone) == 1
        else:
            assert first.round_trips == 1 and gone == []
        assert again.round_trips == 1

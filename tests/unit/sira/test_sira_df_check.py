"""The DF filter: one round trip per query (analysis and every shard's docFreq) while the index
holds no deleted document, a live count of the open terms beside it otherwise, two round trips on
the live route; whatever the number of candidates, and a decision with a reason for every
candidate."""

from __future__ import annotations

from typing import Any

import pytest
from in_memory_backend import InMemoryBackend
from sira_doubles import DF, DFTableBackend, one_request

from sira_seek.backend import SearchBackend
from sira_seek.sira.df_check import (
    DocFrequencyChecker,
    TooManyCandidatesError,
    WindowStat,
    decide,
)
from sira_seek.sira.index_profile import IndexProfile


def _checker(backend: DFTableBackend, tau: float = 0.1, **kw: float) -> DocFrequencyChecker:
    return DocFrequencyChecker(backend, IndexProfile(index="idx"), tau=tau, **kw)  # type: ignore[arg-type]


def _call_names(backend: DFTableBackend) -> list[str]:
    return [name for name, _ in backend.calls]


def _calls_of_one_check(checker: DocFrequencyChecker, phrases: list[str]) -> list[tuple[str, Any]]:
    """The calls one check made on a fresh backend: the counts, then the one request."""
    backend = checker.backend
    assert isinstance(backend, DFTableBackend)
    mark = len(backend.calls)
    checker.check(phrases)
    return backend.calls[mark:]


def test_every_candidate_gets_a_decision(fake_backend: DFTableBackend) -> None:
    phrases = ["Christopher Nolan", "film director", "zzzxq", "the of", "Malayalam cinema"]
    table = _checker(fake_backend).check(phrases)
    got = {c.phrase: c.decision for c in table.candidates}
    assert got == {
        "Christopher Nolan": "kept",  # nolan: DF 7 <= 100
        "film director": "too_common",  # rarest window DF 300 > 0.1 * 1000
        "zzzxq": "absent",
        "the of": "no_terms",
        "Malayalam cinema": "kept",
    }
    assert table.doc_count == 1000 and table.max_doc_freq == pytest.approx(100)
    assert table.kept_phrases() == ["Christopher Nolan", "Malayalam cinema"]
    nolan = table.candidates[0]
    assert nolan.doc_freq == 7 and "'nolan'" in nolan.reason


@pytest.mark.parametrize("n_phrases", [1, 5, 40, 300])
def test_one_round_trip_whatever_the_number_of_phrases(n_phrases: int) -> None:
    """Analysis and DF of every phrase in one call once the index's counts are known (read
    once, then reused while fresh); a loop over phrases (or over fields) would make this grow
    with the candidates. The live route (max age 0): analysis, then counting, two calls."""
    backend = DFTableBackend(DF)
    phrases = [f"nolan film{i} cinema" for i in range(n_phrases)]
    checker = _checker(backend, stats_max_age_s=3600)
    first = checker.check(phrases, query="who directed Inception")
    assert _call_names(backend) == ["index_doc_counts", "shard_routings", "term_vectors"]
    assert first.round_trips == 4 and first.df_route == "term_statistics"
    backend.calls.clear()
    again = checker.check(phrases, query="who directed Inception")
    assert _call_names(backend) == ["term_vectors"]  # the routing values are kept
    assert again.round_trips == 1 and again == first.model_copy(
        update={"round_trips": 1, "took_ms": again.took_ms}
    )
    assert len(again.candidates) == n_phrases
    live_backend = DFTableBackend(DF)
    live = _checker(live_backend, stats_max_age_s=0).check(phrases, query="who directed Inception")
    assert _call_names(live_backend) == ["analyze_terms", "live_doc_freqs"]
    assert live.round_trips == 2 and live.df_route == "live_counts"
    assert live.candidates == again.candidates


def test_one_analysis_covers_unigram_and_shingle_fields(fake_backend: DFTableBackend) -> None:
    phrase = ["Christopher Edward Nolan"]
    fields, texts = one_request(_calls_of_one_check(_checker(fake_backend), phrase)[-1])
    assert fields == ["contents", "contents.shingles"] and texts == ["Christopher Edward Nolan"]
    fake_backend.calls.clear()
    _checker(fake_backend, stats_max_age_s=0).check(["Christopher Edward Nolan"])
    (_, (fields, texts)), (_, terms) = fake_backend.calls
    assert fields == ["contents", "contents.shingles"] and texts == ["Christopher Edward Nolan"]
    assert ("contents", "edward") in terms
    assert ("contents.shingles", "christopher edward") in terms
    assert ("contents", "christopher edward") not in terms  # each field's own analysis


def test_a_rare_bigram_window_keeps_a_phrase_of_common_words() -> None:
    backend = DFTableBackend({"new": 500, "york": 400, "new york": 30}, doc_count=1000)
    table = _checker(backend).check(["New York"])
    assert table.candidates[0].decision == "kept"
    assert table.candidates[0].has_known_ngrams()
    assert "ngram 'new york'" in table.candidates[0].reason


def test_enrichment_fields_are_checked_in_the_same_request() -> None:
    backend = DFTableBackend(DF)
    profile = IndexProfile(
        index="idx",
        phrase_field="sira_enrichment.phrases",
        phrase_shingle_field="sira_enrichment.phrases.shingles",
    )
    DocFrequencyChecker(backend, profile, tau=0.1).check(["nolan"])
    assert _call_names(backend) == ["index_doc_counts", "shard_routings", "term_vectors"]
    one_request_fields, _ = one_request(backend.calls[2])
    backend.calls.clear()
    DocFrequencyChecker(backend, profile, tau=0.1, stats_max_age_s=0).check(["nolan"])
    assert _call_names(backend) == ["analyze_terms", "live_doc_freqs"]
    (_, (fields, _)), (_, terms) = backend.calls
    assert sorted(one_request_fields) == sorted(fields)
    assert fields == [
        "contents",
        "sira_enrichment.phrases",
        "contents.shingles",
        "sira_enrichment.phrases.shingles",
    ]
    assert terms == [("contents", "nolan"), ("sira_enrichment.phrases", "nolan")]


def test_df_is_summed_over_source_and_enrichment_fields() -> None:
    backend = DFTableBackend({"nolan": 60})
    profile = IndexProfile(index="idx", phrase_field="sira_enrichment.phrases")
    table = DocFrequencyChecker(backend, profile, tau=0.1).check(["nolan"])
    # 60 in contents + 60 in phrases = 120 > 100
    assert table.candidates[0].decision == "too_common"
    assert table.candidates[0].doc_freq == 120


def test_limits_too_long_over_limit_and_too_many(fake_backend: DFTableBackend) -> None:
    long_phrase = " ".join(["nolan"] * 9)
    table = _checker(fake_backend, max_kept=1).check(["nolan", "malayalam", long_phrase])
    assert [c.decision for c in table.candidates] == ["kept", "over_limit", "too_long"]
    with pytest.raises(TooManyCandidatesError, match="max_candidates=2"):
        _checker(fake_backend, max_candidates=2).check(["a1", "b2", "c3"])


def test_tau_moves_the_too_common_boundary(fake_backend: DFTableBackend) -> None:
    assert _checker(fake_backend, tau=0.3).check(["director"]).candidates[0].kept
    assert not _checker(fake_backend, tau=0.299).check(["director"]).candidates[0].kept


def test_no_candidates_means_no_request(fake_backend: DFTableBackend) -> None:
    table = _checker(fake_backend).check([])
    assert table.candidates == [] and fake_backend.calls == [] and table.round_trips == 0


def test_the_double_is_a_search_backend_without_raw_rest(fake_backend: DFTableBackend) -> None:
    """Core code must reach an engine only through the protocol's typed methods."""
    assert isinstance(fake_backend, SearchBackend)
    assert not hasattr(fake_backend, "request")


def test_decide_reports_the_rarest_window() -> None:
    from sira_seek.sira.df_check import WindowStat

    windows = [
        WindowStat(window="a", tier="unigram", doc_freq=50),
        WindowStat(window="b", tier="unigram", doc_freq=5),
        WindowStat(window="c", tier="unigram", doc_freq=0),
    ]
    d = decide("a b c", windows, max_doc_freq=10, doc_count=100)
    assert d.kept and d.doc_freq == 5


def test_phrases_that_only_repeat_the_query_are_dropped(fake_backend: DFTableBackend) -> None:
    query = "Are Christopher Nolan and Malayalam film directors alike?"
    table = _checker(fake_backend).check(["Nolan", "Christopher Edward Nolan"], query=query)
    assert _call_names(fake_backend) == ["index_doc_counts", "shard_routings", "term_vectors"]
    _, texts = one_request(fake_backend.calls[2])
    assert texts[-1] == query  # the query rides in the same analysis call
    copy, new = table.candidates
    assert copy.decision == "in_query" and "no term the query lacks" in copy.reason
    assert new.decision == "kept"  # "edward" is new; its query terms count in both parts
    off = DocFrequencyChecker(
        fake_backend, IndexProfile(index="idx"), tau=0.1, drop_query_copies=False
    )
    assert off.check(["Nolan"], query=query).candidates[0].decision == "kept"


def test_phrase_occurs_rule_drops_a_phrase_whose_words_never_stand_together() -> None:
    """ "Christopher Malayalam": both words are rare and occur, the pair never does. The
    reference rule keeps it on the rare word; phrase_occurs drops it and names the pair."""
    backend = DFTableBackend(DF)
    phrases = ["Christopher Malayalam", "Malayalam cinema", "Nolan"]
    loose = _checker(backend).check(phrases)
    strict = DocFrequencyChecker(
        DFTableBackend(DF), IndexProfile(index="idx"), tau=0.1, keep_rule="phrase_occurs"
    ).check(phrases)
    assert [c.decision for c in loose.candidates] == ["kept", "kept", "kept"]
    assert [c.decision for c in strict.candidates] == ["absent", "kept", "kept"]
    dropped = strict.candidates[0]
    assert "'christopher malayalam' never occurs" in dropped.reason and dropped.doc_freq == 0
    # a phrase that occurs keeps the same deciding window under both rules
    assert strict.candidates[1].doc_freq == loose.candidates[1].doc_freq == 8


def test_phrase_occurs_still_applies_tau_to_the_rarest_window() -> None:
    windows = [
        WindowStat(window="film", tier="unigram", doc_freq=600),
        WindowStat(window="director", tier="unigram", doc_freq=300),
        WindowStat(window="film director", tier="ngram", doc_freq=150),
    ]
    d = decide("film director", windows, 100, 1000, rule="phrase_occurs")
    assert d.decision == "too_common" and d.doc_freq == 150


# -- the one-request route against the live route -----------------------------------------
PHRASES = ["Christopher Nolan", "film director", "zzzxq", "Malayalam cinema", "Edward", "the of"]
QUERY = "Who directed Inception and Malayalam films?"


def _tables(**backend_kw: Any) -> tuple[Any, Any, DFTableBackend]:
    """The same check on the one-request route and on the live route, and the first's double."""
    fast = DFTableBackend(DF, **backend_kw)
    one = _checker(fast, stats_max_age_s=3600).check(PHRASES, query=QUERY)
    live = _checker(DFTableBackend(DF, **backend_kw), stats_max_age_s=0).check(PHRASES, query=QUERY)
    return one, live, fast


def test_without_deleted_documents_the_bounds_are_the_dfs_in_one_request() -> None:
    one, live, fast = _tables()
    assert one.df_route == "term_statistics" and live.df_route == "live_counts"
    assert one.candidates == live.candidates and one.doc_count == live.doc_count == 1000
    assert "live_doc_freqs" not in _call_names(fast)


def test_deleted_copies_are_counted_live_for_the_open_terms_only() -> None:
    """Deleted copies raise the bounds of "nolan" (7 -> 200: on the bound alone it would be
    too common) and of "edward" (149 -> 152): the bounds above 0 are counted live, the ones at 0
    ("zzzxq") are exact and never counted, and every decision and DF equals the live route's."""
    one, live, fast = _tables(deleted={"nolan": 193, "edward": 3})
    assert one.df_route == "term_statistics+live_counts"
    assert one.candidates == live.candidates and one.doc_count == live.doc_count
    nolan = next(c for c in one.candidates if c.phrase == "Christopher Nolan")
    assert nolan.decision == "kept" and nolan.doc_freq == 7
    (counted,) = [args for name, args in fast.calls if name == "live_doc_freqs"]
    assert ("contents", "nolan") in counted and ("contents", "zzzxq") not in counted
    assert all(t not in ("zzzxq", "inception") for _, t in counted)  # bound 0: exact already
    assert one.round_trips == 2 + 1 + 1 + 1  # counts, routing look-up, one request, live count


def test_a_target_without_bounds_falls_back_to_the_live_route() -> None:
    fast = DFTableBackend(DF)
    fast.bounds_unavailable = True  # several indexes behind an alias, partitioned routing
    one = _checker(fast, stats_max_age_s=3600).check(PHRASES, query=QUERY)
    live = _checker(DFTableBackend(DF), stats_max_age_s=0).check(PHRASES, query=QUERY)
    assert one.df_route == "live_counts" and one.candidates == live.candidates
    assert _call_names(fast) == [
        "index_doc_counts",
        "shard_routings",
        "analyze_terms",
        "live_doc_freqs",
    ]
    assert one.round_trips == 2 + 2  # the counts were read, then the live route's two


def test_the_counts_are_reused_only_while_fresh() -> None:
    """Max age 0 reads nothing cached; a tiny max age reads the counts again once it passed."""
    backend = DFTableBackend(DF)
    fresh = _checker(backend, stats_max_age_s=3600)
    fresh.check(["nolan"])
    fresh.check(["nolan"])
    assert _call_names(backend).count("index_doc_counts") == 1
    backend.doc_count = 5000  # the index grew; a reader that allows no age sees it at once
    stale = _checker(backend, stats_max_age_s=1e-9)
    assert stale.check(["nolan"]).doc_count == 5000
    assert _call_names(backend).count("index_doc_counts") == 2


class StatsDenied(DFTableBackend):
    """Credentials that may not read index stats: ``index_doc_counts`` answers None."""

    def index_doc_counts(self, index: str) -> None:
        self.calls.append(("index_doc_counts", index))
        return None


def test_no_counts_means_the_live_route_and_no_bounds_request() -> None:
    denied = StatsDenied(DF)
    one = _checker(denied, stats_max_age_s=3600).check(PHRASES, query=QUERY)
    live = _checker(DFTableBackend(DF), stats_max_age_s=0).check(PHRASES, query=QUERY)
    assert one.df_route == "live_counts" and one.candidates == live.candidates
    assert _call_names(denied) == ["index_doc_counts", "analyze_terms", "live_doc_freqs"]
    _checker(denied, stats_max_age_s=3600).check(PHRASES, query=QUERY)
    assert _call_names(denied).count("index_doc_counts") == 1  # the None is kept too


def test_kept_counts_naming_a_deleted_index_are_read_again() -> None:
    """The alias moved to a new index and the old one was deleted within the max age: the kept
    counts name an index that is gone, so they are read again at once instead of failing."""
    be = InMemoryBackend({"d1": {"title": "One", "text": "nolan river"}}, index="old")
    be.ensure_corpus_index("new")
    docs = [{"_id": "d2", "text": "nolan again"}, {"_id": "d3", "text": "nolan once more"}]
    assert not be.bulk_upsert("new", docs).errors
    be.update_aliases([{"add": {"index": "old", "alias": "live"}}])
    checker = DocFrequencyChecker(be, IndexProfile(index="live"), tau=1.0, stats_max_age_s=3600)
    before = checker.check(["nolan"])
    assert (before.doc_count, before.candidates[0].doc_freq) == (1, 1)
    be.update_aliases(
        [{"remove": {"index": "old", "alias": "live"}}, {"add": {"index": "new", "alias": "live"}}]
    )
    be.delete_index("old")
    after = checker.check(["nolan"])
    assert (after.doc_count, after.candidates[0].doc_freq) == (2, 2)
    assert after.df_route == "term_statistics"
    # the failed request, the counts, the new index's routing look-up, the request again
    assert after.round_trips == 1 + 2 + 1 + 1

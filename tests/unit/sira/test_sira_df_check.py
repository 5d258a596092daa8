"""The DF filter: two round trips per query (analysis, live counting) whatever the number of
candidates, and a decision with a reason for every candidate."""

from __future__ import annotations

import pytest
from sira_doubles import DF, DFTableBackend

from sira_seek.backend import SearchBackend
from sira_seek.sira.df_check import (
    DocFrequencyChecker,
    TooManyCandidatesError,
    WindowStat,
    decide,
)
from sira_seek.sira.index_profile import IndexProfile


def _checker(backend: DFTableBackend, tau: float = 0.1, **kw: int) -> DocFrequencyChecker:
    return DocFrequencyChecker(backend, IndexProfile(index="idx"), tau=tau, **kw)


def _call_names(backend: DFTableBackend) -> list[str]:
    return [name for name, _ in backend.calls]


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
def test_two_round_trips_whatever_the_number_of_phrases(n_phrases: int) -> None:
    """Analysis of every phrase in one call, counting of every term in one more: a loop over
    phrases (or over fields) would make this grow with the candidates."""
    backend = DFTableBackend(DF)
    phrases = [f"nolan film{i} cinema" for i in range(n_phrases)]
    table = _checker(backend).check(phrases, query="who directed Inception")
    assert _call_names(backend) == ["analyze_terms", "live_doc_freqs"]
    assert table.round_trips == 2
    assert len(table.candidates) == n_phrases


def test_one_analysis_covers_unigram_and_shingle_fields(fake_backend: DFTableBackend) -> None:
    _checker(fake_backend).check(["Christopher Edward Nolan"])
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
    assert _call_names(backend) == ["analyze_terms", "live_doc_freqs"]
    (_, (fields, _)), (_, terms) = backend.calls
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
    assert _call_names(fake_backend) == ["analyze_terms", "live_doc_freqs"]
    (_, (_, texts)), _ = fake_backend.calls
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

"""The retriever against an in-memory cluster: stages, fallbacks and clear errors."""

from __future__ import annotations

import pytest
from sira_doubles import DF, DFTableBackend

from sira_seek.llm.precomputed import PrecomputedKeywords
from sira_seek.sira.categories import CategoryGrounder, rank_neighbours
from sira_seek.sira.df_check import TooManyCandidatesError
from sira_seek.sira.expansions import PrecomputedExpander, QueryInput
from sira_seek.sira.index_profile import SiraIndexError, profile_from_mapping, read_index_profile
from sira_seek.sira.retriever import EmptyQueryError, SiraRetriever
from sira_seek.sira.settings import SiraSettings

ENRICHED = {
    "contents": {"type": "text", "fields": {"shingles": {"type": "text"}}},
    "sira_enrichment": {
        "properties": {
            "phrases": {"type": "text", "fields": {"shingles": {"type": "text"}}},
            "categories": {"type": "keyword", "fields": {"words": {"type": "text"}}},
        }
    },
}


def test_kept_phrases_become_a_weighted_clause(fake_backend: DFTableBackend) -> None:
    r = SiraRetriever(fake_backend, "idx", settings=SiraSettings(tau=0.1, weight=0.4))
    res = r.search("who directed Inception", phrases=["Christopher Nolan", "zzzxq"])
    assert not res.plain_bm25
    group = res.body["query"]["bool"]["should"][1]["bool"]
    assert group["boost"] == 0.4
    assert [c["match"]["contents"]["query"] for c in group["should"]] == ["Christopher Nolan"]
    assert [h.id for h in res.hits] == ["d1", "d2"] and res.hits[0].bm25_rank == 1
    assert fake_backend.searches[-1] == res.body
    assert res.timings.engine_ms >= res.timings.search_ms > 0
    assert [c.decision for c in res.candidates.candidates] == ["kept", "absent"]


def test_no_kept_phrase_means_plain_bm25(fake_backend: DFTableBackend) -> None:
    res = SiraRetriever(fake_backend, "idx").search("who", phrases=["zzzxq", "the"])
    assert res.plain_bm25
    assert res.body["query"] == {"match": {"contents": {"query": "who", "_name": "sira_original"}}}


def test_no_expander_is_plain_bm25_with_a_note(fake_backend: DFTableBackend) -> None:
    res = SiraRetriever(fake_backend, "idx").search("nolan films")
    assert res.plain_bm25 and res.notes and fake_backend.calls == []


def test_empty_and_long_queries(fake_backend: DFTableBackend) -> None:
    r = SiraRetriever(fake_backend, "idx", settings=SiraSettings(max_query_words=5))
    with pytest.raises(EmptyQueryError):
        r.search("  \n\t ")
    res = r.search("one two three four five six seven")
    assert res.query == "one two three four five" and "cut from 7 to 5" in res.notes[0]


def test_too_many_candidates_is_a_clear_error(fake_backend: DFTableBackend) -> None:
    r = SiraRetriever(fake_backend, "idx", settings=SiraSettings(max_candidates=3))
    with pytest.raises(TooManyCandidatesError, match="4 candidate phrases"):
        r.search("q", phrases=["a1", "a2", "a3", "a4"])


class RoundTripCounter(DFTableBackend):
    """The table double, also recording every search round trip in ``calls``.

    ``msearch`` is ONE entry (with its bodies), whatever it holds; a caller that loops over
    single ``search`` calls leaves one ``search`` entry per query instead.
    """

    def search(self, index, body, params=None):  # noqa: ANN001, ANN201
        self.calls.append(("search", dict(body)))
        return super().search(index, body, params)

    def msearch(self, index, bodies, params=None):  # noqa: ANN001, ANN201
        self.calls.append(("msearch", [dict(b) for b in bodies]))
        return [DFTableBackend.search(self, index, b, params) for b in bodies]


def test_search_many_uses_one_df_check_per_query_and_one_msearch_per_batch() -> None:
    backend = RoundTripCounter(DF, doc_count=1000)
    table = PrecomputedKeywords(
        by_id={"1": ["Christopher Nolan"], "2": ["Malayalam cinema"], "3": ["Kerala"]}
    )
    settings = SiraSettings(df_stats_max_age=3600)
    r = SiraRetriever(backend, "idx", expander=PrecomputedExpander(table), settings=settings)
    queries = [QueryInput(text=t, id=i) for i, t in (("1", "a"), ("2", "b"), ("3", "c"))]
    results = r.search_many(queries, batch=2)
    assert [x.query_id for x in results] == ["1", "2", "3"]
    names = [name for name, _ in backend.calls]
    # the index's counts and routing values once; per query one analysis-and-DF round trip;
    # the searches, batched
    assert names == ["index_doc_counts", "shard_routings"] + ["term_vectors"] * 3 + [
        "msearch",
        "msearch",
    ], names
    assert [x.candidates.round_trips for x in results] == [4, 1, 1]
    (_, first), (_, second) = backend.calls[-2:]
    assert [len(first), len(second)] == [2, 1]
    # each batch carries exactly the compiled bodies, in query order
    assert [*first, *second] == [x.body for x in results]
    assert not results[0].plain_bm25 and not results[1].plain_bm25 and results[2].plain_bm25


def test_profile_without_contents_or_index_is_a_clear_error(fake_backend: DFTableBackend) -> None:
    with pytest.raises(SiraIndexError, match="no `contents` field"):
        profile_from_mapping("x", {"x": {"mappings": {"properties": {"body": {"type": "text"}}}}})
    with pytest.raises(SiraIndexError, match="does not exist"):
        read_index_profile(fake_backend, "missing")


def test_enrichment_fields_count_only_when_populated() -> None:
    empty = read_index_profile(DFTableBackend(DF, properties=ENRICHED), "idx")
    assert not empty.has_enrichment and empty.category_field is None
    full = read_index_profile(
        DFTableBackend(
            DF,
            properties=ENRICHED,
            populated={"sira_enrichment.phrases", "sira_enrichment.categories"},
        ),
        "idx",
    )
    assert full.df_fields() == [
        "contents",
        "sira_enrichment.phrases",
        "contents.shingles",
        "sira_enrichment.phrases.shingles",
    ]
    assert full.category_field == "sira_enrichment.categories"


def test_original_query_also_searches_enrichment_phrases() -> None:
    backend = DFTableBackend(DF, properties=ENRICHED, populated={"sira_enrichment.phrases"})
    res = SiraRetriever(backend, "idx").search("nolan")
    mm = res.body["query"]["multi_match"]
    assert mm["fields"] == ["contents", "sira_enrichment.phrases"]
    assert mm["type"] == "most_fields"


def test_category_neighbours_rank_by_word_overlap() -> None:
    found = [
        "Indian film directors",
        "Film directors from Kerala",
        "Cricket",
        "Indian film directors",
    ]
    assert rank_neighbours("indian film directors", found)[0] == "Indian film directors"
    assert "Cricket" not in rank_neighbours("film director", found)


def test_category_grounding_exists_close_absent(fake_backend: DFTableBackend) -> None:
    from sira_seek.backend import SearchHit, SearchResult

    def msearch(index, bodies, params=None):  # noqa: ANN001, ANN202
        out = []
        for body in bodies:
            if "term" in body["query"]:
                value = body["query"]["term"]["sira_enrichment.categories"]
                out.append(SearchResult(hits=[], total=3 if value == "Films" else 0, took_ms=1))
            else:
                src = {"sira_enrichment": {"categories": ["Malayalam films", "Films"]}}
                words = body["query"]["match"]["sira_enrichment.categories.words"]
                hits = [SearchHit(id="d", score=1.0, source=src)] if "film" in words else []
                out.append(SearchResult(hits=hits, total=len(hits), took_ms=1))
        return out

    fake_backend.msearch = msearch  # type: ignore[method-assign]
    grounder = CategoryGrounder(fake_backend, "idx", "sira_enrichment.categories", use_close=True)
    films, malayalam, none = grounder.ground(["Films", "malayalam film", "Cricket"])
    assert films.decision == "exists" and films.use == "Films" and films.doc_count == 3
    assert malayalam.decision == "close_match" and malayalam.use == "Malayalam films"
    assert none.decision == "absent" and none.use is None


def test_named_query_scores_are_asked_for_and_explained(fake_backend: DFTableBackend) -> None:
    fake_backend.named_scores = True
    res = SiraRetriever(fake_backend, "idx").search("nolan")
    assert fake_backend.search_params[-1] == {
        "search_type": "dfs_query_then_fetch",
        "include_named_queries_score": "true",
    }
    assert res.explain().startswith(
        "GET idx/_search?search_type=dfs_query_then_fetch&include_named_queries_score=true\n"
    )
    fake_backend.named_scores = False
    res = SiraRetriever(fake_backend, "idx").search("nolan")
    assert fake_backend.search_params[-1] == {"search_type": "dfs_query_then_fetch"}
    assert res.explain().startswith("GET idx/_search?search_type=dfs_query_then_fetch\n")


def test_ngram_tier_adds_the_shingle_field_for_known_bigrams(fake_backend: DFTableBackend) -> None:
    phrases = ["Christopher Edward", "Nolan"]  # bigram "christopher edward" has DF 1
    on = SiraRetriever(fake_backend, "idx", settings=SiraSettings(ngram_tier=True))
    clauses = on.search("who", phrases=phrases).body["query"]["bool"]["should"][1]["bool"]
    first, second = clauses["should"]
    assert first["multi_match"]["fields"] == ["contents", "contents.shingles"]
    assert second == {"match": {"contents": {"query": "Nolan", "_name": "sira_expansion:Nolan"}}}
    off = SiraRetriever(fake_backend, "idx", settings=SiraSettings(ngram_tier=False))
    clauses = off.search("who", phrases=phrases).body["query"]["bool"]["should"][1]["bool"]
    assert all("match" in c for c in clauses["should"])


def test_original_ngrams_puts_the_shingle_tier_on_the_original_query(
    fake_backend: DFTableBackend,
) -> None:
    """Off: the original query is plain unigram BM25 (the classic baseline). On: its bigrams
    score too, as the reference sums both tiers for every query; expansions are unchanged."""
    off = SiraRetriever(fake_backend, "idx").search("who directed", phrases=["Nolan"])
    assert off.body["query"]["bool"]["should"][0] == {
        "match": {"contents": {"query": "who directed", "_name": "sira_original"}}
    }
    on_settings = SiraSettings(original_ngrams=True)
    on = SiraRetriever(fake_backend, "idx", settings=on_settings).search(
        "who directed", phrases=["Nolan"]
    )
    original, expansion = on.body["query"]["bool"]["should"]
    assert original["multi_match"]["fields"] == ["contents", "contents.shingles"]
    assert original["multi_match"]["_name"] == "sira_original"
    assert expansion == off.body["query"]["bool"]["should"][1]
    plain = SiraRetriever(fake_backend, "idx", settings=on_settings).search("who directed")
    assert plain.plain_bm25 and "multi_match" in plain.body["query"]


def test_expansions_keyed_by_text_match_whatever_the_whitespace(
    fake_backend: DFTableBackend,
) -> None:
    # The file was written from the raw query (a newline, a double space); SIRA searches the
    # collapsed text. Both sides are keyed alike, so the entry is found either way round.
    table = PrecomputedKeywords.from_records(
        [{"text": "who  directed\nInception ", "keywords": ["Christopher Nolan"]}]
    )
    r = SiraRetriever(fake_backend, "idx", expander=PrecomputedExpander(table))
    for typed in ("who directed Inception", "who directed\tInception\n"):
        res = r.search(typed)
        assert res.expansion.source == "precomputed", res.expansion.note
        assert [c.phrase for c in res.candidates.kept] == ["Christopher Nolan"]

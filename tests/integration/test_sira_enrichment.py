"""On an enriched index: enrichment fields join the DF check and the query; categories are
grounded (exists? close match?) before they enter it."""

from __future__ import annotations

import pytest

from sira_seek.backend import PartialUpdate, SearchBackend
from sira_seek.sira import SiraRetriever, SiraSettings

pytestmark = pytest.mark.integration

DOCS = [
    {"_id": "1", "title": "Christopher Nolan", "text": "British-American film director."},
    {"_id": "2", "title": "Sathish Kalathil", "text": "Indian documentary maker from Kerala."},
    {"_id": "3", "title": "Danube", "text": "A river flowing through Budapest and Vienna."},
    {"_id": "4", "title": "Tokaji", "text": "A sweet wine from the Tokaj region."},
]
ENRICHMENT = {
    "1": {"phrases": ["Gotham auteur", "Inception"], "categories": ["Film directors"]},
    "2": {"phrases": ["Malayalam cinema"], "categories": ["Film directors", "Malayalam people"]},
    "3": {"phrases": ["Black Sea"], "categories": ["Rivers of Europe"]},
}


@pytest.fixture
def enriched_index(backend: SearchBackend, index_name: str) -> str:
    backend.ensure_corpus_index(index_name)
    backend.bulk_upsert(index_name, DOCS)
    backend.bulk_partial_update(
        index_name, [PartialUpdate(id=i, doc={"sira_enrichment": e}) for i, e in ENRICHMENT.items()]
    )
    backend.refresh(index_name)
    return index_name


def test_enrichment_phrases_count_in_df_and_query(
    backend: SearchBackend, enriched_index: str
) -> None:
    retriever = SiraRetriever(backend, enriched_index, settings=SiraSettings(tau=0.5))
    assert retriever.profile.has_enrichment
    assert retriever.profile.category_field == "sira_enrichment.categories"
    res = retriever.search("who made this film", phrases=["Gotham auteur", "Nonexistentword"])
    gotham, missing = res.candidates.candidates
    assert gotham.decision == "kept" and gotham.doc_freq == 1  # only in enrichment phrases
    assert missing.decision == "absent"
    # the default layout copies phrases into contents: the query searches contents alone
    assert retriever.profile.enrichment_scoring == "in_contents"
    assert list(res.body["query"]["bool"]["should"][0]["match"]) == ["contents"]
    assert res.hits[0].id == "1"
    assert "sira_expansion:Gotham auteur" in (res.hits[0].matched_queries or [])


def test_categories_are_grounded_before_use(backend: SearchBackend, enriched_index: str) -> None:
    retriever = SiraRetriever(
        backend, enriched_index, settings=SiraSettings(use_close_categories=True)
    )
    res = retriever.search(
        "documentary maker", categories=["Film directors", "rivers of europe", "Cricketers"]
    )
    got = {c.category: (c.decision, c.use) for c in res.categories}
    assert got["Film directors"] == ("exists", "Film directors")
    assert got["rivers of europe"] == ("close_match", "Rivers of Europe")
    assert got["Cricketers"] == ("absent", None)
    cat_group = res.body["query"]["bool"]["should"][-1]["bool"]
    assert cat_group["boost"] == retriever.settings.category_weight
    assert [c["term"]["sira_enrichment.categories"]["value"] for c in cat_group["should"]] == [
        "Film directors",
        "Rivers of Europe",
    ]
    assert res.hits[0].id == "2"  # text match + category
    top = res.hits[0].matched_queries
    assert isinstance(top, dict) and "sira_category:Film directors" in top
    # The categories' part (derived from the clauses' scores) with the query's adds up.
    assert top["sira_categories"] == pytest.approx(
        retriever.settings.category_weight * top["sira_category:Film directors"]
    )
    assert top["sira_original"] + top["sira_categories"] == pytest.approx(res.hits[0].score, 1e-4)


def test_close_matches_are_only_reported_by_default(
    backend: SearchBackend, enriched_index: str
) -> None:
    res = SiraRetriever(backend, enriched_index).search("river", categories=["rivers of europe"])
    (decision,) = res.categories
    assert decision.decision == "close_match" and decision.use is None
    assert decision.neighbours == ["Rivers of Europe"]
    assert res.plain_bm25

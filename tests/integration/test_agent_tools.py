"""AgentTools on a real node (both engines), over an index enriched by a real sira-sync run.

Every tool answer is checked against something computed apart from the tools: the same search
run through the ``SiraSeek`` facade (what ``search --json`` prints), the corpus file, and the
categories in the enrichment pool sira-sync wrote.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_index_kit import EnrichedSlice, build_enriched_slice

from sira_seek.backend import SearchBackend
from sira_seek.client import SiraSeek
from sira_seek.workflows.agent_tools import AgentTools

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def enriched(
    backend: SearchBackend, wikimh_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EnrichedSlice]:
    index = f"test-agent-{uuid.uuid4().hex[:8]}"
    try:
        yield build_enriched_slice(backend, index, wikimh_dir, tmp_path_factory.mktemp("agent"))
    finally:
        backend.delete_index(index)


@pytest.fixture(scope="module")
def tools(backend: SearchBackend, enriched: EnrichedSlice) -> AgentTools:
    return AgentTools(backend, enriched.index)


def test_bm25_search_matches_the_facade_and_carries_titles_and_texts(
    backend: SearchBackend, enriched: EnrichedSlice, tools: AgentTools
) -> None:
    result = tools.search(enriched.query, k=5)
    direct = SiraSeek(backend).search(enriched.query, index=enriched.index, k=5)
    assert result.method == "bm25" and result.plain_bm25 and result.grounding == []
    assert [p.id for p in result.passages] == [h.id for h in direct.hits]
    assert [p.score for p in result.passages] == pytest.approx([h.score for h in direct.hits])
    assert len(result.passages) == 5
    for passage in result.passages:
        assert passage.title == enriched.docs[passage.id]["title"]
        assert passage.text == enriched.docs[passage.id]["text"]
    # both gold pages of this question (Nolan, Kalathil) are in the slice and found
    assert {"hp00010", "hp00015"} <= {p.id for p in result.passages}


def test_sira_search_grounds_the_agents_expansions(
    backend: SearchBackend, enriched: EnrichedSlice, tools: AgentTools
) -> None:
    phrases = [*enriched.expansions, "qqxvzzy unheardofword"]
    result = tools.search(enriched.query, phrases, k=10)
    direct = SiraSeek(backend).search(
        enriched.query,
        index=enriched.index,
        method="sira",
        expansions={enriched.query: phrases},
        k=10,
    )
    assert result.method == "sira"
    assert [p.id for p in result.passages] == [h.id for h in direct.hits]
    assert [g.phrase for g in result.grounding] == [c.phrase for c in direct.candidates.candidates]
    assert result.doc_count == 200 and result.max_doc_freq == pytest.approx(20.0)
    by_phrase = {g.phrase: g for g in result.grounding}
    absent = by_phrase["qqxvzzy unheardofword"]
    assert not absent.kept and absent.decision == "absent" and absent.df == 0
    kept = [g for g in result.grounding if g.kept]
    assert kept, "some strong-LLM expansion should be grounded in the slice"
    assert all(g.df is not None and 0 < g.df <= result.max_doc_freq for g in kept)
    assert not result.plain_bm25


def test_category_lookup_against_the_pool(enriched: EnrichedSlice, tools: AgentTools) -> None:
    counts = enriched.category_counts()
    shared, n = counts.most_common(1)[0]
    assert n >= 2, "the slice should share at least one category"
    found = tools.categories(shared, k=5)
    assert found.available and found.exists and found.doc_count == n
    assert shared not in found.nearest and len(found.nearest) <= 5
    assert all(c in counts for c in found.nearest)  # only categories the index holds

    # a near-miss (one word dropped or an extra word) is not a category, but leads to it
    near_miss = f"{shared} of Atlantis"
    assert near_miss not in counts
    miss = tools.categories(near_miss)
    assert not miss.exists and miss.doc_count == 0
    assert miss.nearest[0] == shared


def test_documents_in_a_category(enriched: EnrichedSlice, tools: AgentTools) -> None:
    shared, n = enriched.category_counts().most_common(1)[0]
    listed = tools.documents(shared, k=50)
    assert listed.total == n
    assert {d.id for d in listed.documents} == enriched.docs_in(shared)
    assert all(d.title == enriched.docs[d.id]["title"] for d in listed.documents)
    assert len(tools.documents(shared, k=1).documents) == 1


def test_fetch_returns_the_stored_document_and_its_enrichment(
    enriched: EnrichedSlice, tools: AgentTools
) -> None:
    doc_id = next(i for i, cats in enriched.categories.items() if cats)
    doc = tools.fetch(doc_id)
    assert doc is not None
    assert (doc.title, doc.text) == (enriched.docs[doc_id]["title"], enriched.docs[doc_id]["text"])
    assert doc.categories == enriched.categories[doc_id]
    assert doc.keywords, "sira-sync kept some of the pool's keywords"
    assert tools.fetch("hp-no-such-doc") is None

"""AgentTools over the in-memory ``SearchBackend`` double (above the protocol, no REST).

The double evaluates filters exactly (term, ids, match) and scores every hit 1.0, so these
tests pin what the tools decide and report; ranking on real analyzers is the integration
test's job (tests/integration/test_agent_tools.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from in_memory_backend import InMemoryBackend, default_properties

from sira_seek.backend import SearchHit
from sira_seek.workflows.agent_tools import MAX_K, AgentTools, open_agent_tools
from sira_seek.workflows.errors import InvalidInput, NotFound

ENRICHMENT = {
    "sira_enrichment": {
        "properties": {
            "phrases": {"type": "text", "fields": {"shingles": {"type": "text"}}},
            "categories": {"type": "keyword", "fields": {"words": {"type": "text"}}},
        }
    }
}

DOCS: dict[str, dict[str, Any]] = {
    "d1": {
        "title": "Arthur's Magazine",
        "text": "An American literary periodical published in Philadelphia.",
        "sira_enrichment": {
            "phrases": ["literary periodical"],
            "categories": ["American literary magazines", "Defunct magazines"],
        },
    },
    "d2": {
        "title": "First for Women",
        "text": "A woman's magazine published by Bauer Media Group.",
        "sira_enrichment": {"phrases": ["women's magazine"], "categories": ["Women's magazines"]},
    },
    "d3": {
        "title": "Philadelphia",
        "text": "The largest city in Pennsylvania.",
        "sira_enrichment": {"phrases": [], "categories": ["Cities in Pennsylvania"]},
    },
    "d4": {
        "title": "Godey's Lady's Book",
        "text": "A women's magazine published in Philadelphia.",
        "sira_enrichment": {"categories": ["Defunct magazines", "Women's magazines"]},
    },
}


def _tools(docs: dict[str, dict[str, Any]] = DOCS, **kw: Any) -> tuple[AgentTools, InMemoryBackend]:
    backend = InMemoryBackend(docs, properties={**default_properties(), **ENRICHMENT})
    return AgentTools(backend, "idx", **kw), backend


@pytest.mark.parametrize(
    ("index", "kw", "error", "words"),
    [
        ("Idx*", {}, InvalidInput, "index: 'Idx*' is not an index name"),
        ("gone", {}, NotFound, "index 'gone' does not exist"),
        ("idx", {"tau": 2.0}, InvalidInput, "tau: Input should be less than or equal to 1"),
        ("idx", {"tau": 0.0}, InvalidInput, "tau: Input should be greater than or equal to"),
        ("idx", {"weight": -1.0}, InvalidInput, "weight: Input should be greater than or equal"),
        ("idx", {"weight": float("nan")}, InvalidInput, "weight: Input should be a finite"),
    ],
)
def test_the_tools_refuse_at_start(
    index: str, kw: dict[str, Any], error: type[Exception], words: str
) -> None:
    """The MCP server and the agentic evaluation open the tools here: a bad index name, a
    missing index or an out-of-bounds tau/weight fails before serving (the search request's
    own words), and the malformed values before any engine call."""
    backend = InMemoryBackend(DOCS, properties={**default_properties(), **ENRICHMENT})
    with pytest.raises(error) as refused:
        open_agent_tools(backend, index, **kw)
    assert words in str(refused.value)
    if error is InvalidInput:
        assert backend.searches == [] and backend.calls == []


def test_the_tools_open_on_an_existing_index_with_its_settings() -> None:
    backend = InMemoryBackend(DOCS, properties={**default_properties(), **ENRICHMENT})
    tools = open_agent_tools(backend, "idx", tau=0.5, weight=1.0)
    assert (tools.index, tools._tau, tools._weight) == ("idx", 0.5, 1.0)


def test_category_lookup_exact_and_nearest() -> None:
    tools, _ = _tools()
    found = tools.categories("Defunct magazines")
    assert found.available and found.exists and found.doc_count == 2
    # shares one word of four with both (a Jaccard tie, broken by name); itself excluded
    assert found.nearest == ["American literary magazines", "Women's magazines"]


def test_category_lookup_absent_name_gets_neighbours_only() -> None:
    tools, _ = _tools()
    found = tools.categories("Pennsylvania cities")
    assert not found.exists and found.doc_count == 0
    assert found.nearest == ["Cities in Pennsylvania"]
    assert tools.categories("Opera houses").nearest == []


def test_category_lookup_nearest_is_cut_at_k() -> None:
    tools, _ = _tools()
    assert len(tools.categories("magazines", k=1).nearest) == 1
    assert len(tools.categories("magazines", k=10).nearest) == 3


def test_index_without_categories_says_so() -> None:
    plain = {i: {"title": d["title"], "text": d["text"]} for i, d in DOCS.items()}
    tools, _ = _tools(plain)
    lookup = tools.categories("Defunct magazines")
    assert lookup.available is False and lookup.exists is False
    assert tools.documents("Defunct magazines").documents == []


def test_documents_in_a_category() -> None:
    tools, backend = _tools()
    docs = tools.documents("Women's magazines", k=5)
    assert docs.total == 2
    assert [(d.id, d.title) for d in docs.documents] == [
        ("d2", "First for Women"),
        ("d4", "Godey's Lady's Book"),
    ]
    assert backend.searches[-1]["size"] == 5
    assert tools.documents("Women's magazines", k=1).total == 2
    assert len(tools.documents("Women's magazines", k=1).documents) == 1


def test_fetch_returns_enrichment_or_none() -> None:
    tools, _ = _tools()
    doc = tools.fetch("d1")
    assert doc is not None
    assert doc.title == "Arthur's Magazine"
    assert doc.text.startswith("An American literary periodical")
    assert doc.categories == ["American literary magazines", "Defunct magazines"]
    assert doc.keywords == ["literary periodical"]
    assert tools.fetch("nope") is None


def test_search_reports_bm25_without_expansions_and_fills_texts() -> None:
    tools, backend = _tools()
    backend.hits = [
        SearchHit(id="d4", score=3.0, source={"title": "Godey's Lady's Book", "text": "A women's"}),
        SearchHit(id="d2", score=1.5, source={"title": "First for Women", "text": "A woman's"}),
    ]
    result = tools.search("women's magazine Philadelphia", k=2)
    assert result.method == "bm25" and result.plain_bm25
    assert result.grounding == []
    assert [(p.id, p.title, p.score) for p in result.passages] == [
        ("d4", "Godey's Lady's Book", 3.0),
        ("d2", "First for Women", 1.5),
    ]
    assert result.passages[0].text == "A women's"
    ranked = backend.searches[0]
    assert ranked["size"] == 2


def test_search_grounds_every_expansion_and_names_the_method() -> None:
    tools, backend = _tools()
    backend.hits = [SearchHit(id="d1", score=2.0, source={"title": "Arthur's Magazine"})]
    result = tools.search(
        "Arthur's Magazine", expansions=["Philadelphia", "zzyzx unheard", "  "], k=3
    )
    assert result.method == "sira"
    decisions = {g.phrase: g for g in result.grounding}
    assert set(decisions) == {"Philadelphia", "zzyzx unheard"}  # the blank one is dropped
    assert decisions["zzyzx unheard"].kept is False
    assert decisions["zzyzx unheard"].decision == "absent"
    assert decisions["zzyzx unheard"].df == 0
    assert result.doc_count == 4


def test_search_rejects_bad_k() -> None:
    tools, _ = _tools()
    with pytest.raises(ValueError, match="k: must be"):
        tools.search("magazine", k=0)
    with pytest.raises(ValueError, match="k: must be"):
        tools.categories("magazines", k=MAX_K + 1)

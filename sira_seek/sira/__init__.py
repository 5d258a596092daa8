"""SIRA: LLM-predicted evidence vocabulary, grounded in the index's own document frequencies,
run as one transparent weighted BM25 query on the user's cluster. Engine-agnostic: it talks to
a ``SearchBackend`` only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .categories import CategoryDecision, CategoryGrounder
    from .df_check import CandidateDecision, CandidateTable, DocFrequencyChecker
    from .evaluation import evaluate_sira, sira_run
    from .expansions import (
        Expansion,
        LLMCall,
        LLMExpander,
        PrecomputedExpander,
        QueryExpander,
        QueryInput,
    )
    from .index_profile import IndexProfile, SiraIndexError, read_index_profile
    from .keyword_parsing import ParsedEnrichment, parse_enrichment
    from .prompts import enrichment_request
    from .rerank import LLMReranker
    from .results import SearchTimings, SiraHit, SiraResult, dev_tools_request
    from .retriever import EmptyQueryError, SiraRetriever
    from .settings import SiraSettings
    from .weighted_query import CategoryClause, TextClause, WeightedQuery

__all__ = [
    "CandidateDecision",
    "CandidateTable",
    "CategoryClause",
    "CategoryDecision",
    "CategoryGrounder",
    "DocFrequencyChecker",
    "EmptyQueryError",
    "Expansion",
    "IndexProfile",
    "LLMCall",
    "LLMExpander",
    "LLMReranker",
    "ParsedEnrichment",
    "PrecomputedExpander",
    "QueryExpander",
    "QueryInput",
    "SiraHit",
    "SiraIndexError",
    "SiraResult",
    "SiraRetriever",
    "SiraSettings",
    "TextClause",
    "SearchTimings",
    "WeightedQuery",
    "dev_tools_request",
    "enrichment_request",
    "evaluate_sira",
    "parse_enrichment",
    "read_index_profile",
    "sira_run",
]

_EXPORTS = {
    ".categories": (
        "CategoryDecision",
        "CategoryGrounder",
    ),
    ".df_check": (
        "CandidateDecision",
        "CandidateTable",
        "DocFrequencyChecker",
    ),
    ".evaluation": (
        "evaluate_sira",
        "sira_run",
    ),
    ".expansions": (
        "Expansion",
        "LLMCall",
        "LLMExpander",
        "PrecomputedExpander",
        "QueryExpander",
        "QueryInput",
    ),
    ".index_profile": (
        "IndexProfile",
        "SiraIndexError",
        "read_index_profile",
    ),
    ".keyword_parsing": (
        "ParsedEnrichment",
        "parse_enrichment",
    ),
    ".prompts": ("enrichment_request",),
    ".rerank": ("LLMReranker",),
    ".results": (
        "SiraHit",
        "SiraResult",
        "SearchTimings",
        "dev_tools_request",
    ),
    ".retriever": (
        "EmptyQueryError",
        "SiraRetriever",
    ),
    ".settings": ("SiraSettings",),
    ".weighted_query": (
        "CategoryClause",
        "TextClause",
        "WeightedQuery",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

"""LangChain's own standard retriever suite (langchain-tests), run on our retriever against a
real node: BM25, and SIRA with an expansions file. Written by the LangChain maintainers, it
checks what any LangChain user relies on (documents back from invoke/ainvoke, ``k`` in the
constructor and per call)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from sira_seek.integrations.langchain import SiraSeekLangChainRetriever

pytestmark = pytest.mark.integration

QUERY = "Which magazine was started first, Arthur's Magazine or First for Women?"
PHRASES = ["literary periodical", "Bauer Media Group", "1844"]


class TestBM25StandardRetriever(RetrieversIntegrationTests):
    _params: dict[str, Any] = {}

    @pytest.fixture(autouse=True)
    def _cluster(self, node_urls: dict[str, str], wikimh_indexes: dict[str, str]) -> None:
        type(self)._params = {
            "url": node_urls["opensearch"],
            "index": wikimh_indexes["opensearch"],
        }

    @property
    def retriever_constructor(self) -> type[SiraSeekLangChainRetriever]:
        return SiraSeekLangChainRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def retriever_query_example(self) -> str:
        return QUERY


class TestSiraStandardRetriever(TestBM25StandardRetriever):
    @pytest.fixture(autouse=True)
    def _cluster(
        self, node_urls: dict[str, str], wikimh_indexes: dict[str, str], tmp_path: Path
    ) -> None:
        expansions = tmp_path / "expansions.jsonl"
        expansions.write_text(json.dumps({"text": QUERY, "keywords": PHRASES}) + "\n")
        type(self)._params = {
            "url": node_urls["opensearch"],
            "index": wikimh_indexes["opensearch"],
            "method": "sira",
            "expansions": expansions,
        }

    def test_the_expansions_are_used_not_a_silent_bm25_fallback(self) -> None:
        retriever = SiraSeekLangChainRetriever(**self._params)
        docs = retriever.invoke(QUERY)
        assert docs and all(d.metadata["method"] == "sira" for d in docs)
        assert not any(d.metadata["fell_back_to_bm25"] for d in docs)
        assert any("sira_expansion:" in str(d.metadata["matched_queries"]) for d in docs)
        missed = retriever.invoke("a question the expansions file has no entry for")
        assert missed and all(d.metadata["fell_back_to_bm25"] for d in missed)

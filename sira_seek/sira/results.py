"""What a SIRA search returns: hits plus everything needed to see why they came back."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

import orjson
from pydantic import BaseModel, Field

from .categories import CategoryDecision
from .df_check import CandidateTable
from .expansions import Expansion, LLMCall


class SiraHit(BaseModel):
    id: str
    score: float
    title: str | None = None
    matched_queries: list[str] | dict[str, float] | None = None
    bm25_rank: int = Field(description="1-based rank from the weighted BM25 query.")
    rerank_score: float | None = None


class SearchTimings(BaseModel):
    """Milliseconds per stage; ``engine_ms`` is what the cluster work costs (no LLM)."""

    expansion_ms: float = 0.0
    df_check_ms: float = 0.0
    categories_ms: float = 0.0
    search_ms: float = 0.0
    rerank_ms: float = 0.0

    @property
    def engine_ms(self) -> float:
        return self.df_check_ms + self.categories_ms + self.search_ms

    @property
    def total_ms(self) -> float:
        return self.expansion_ms + self.engine_ms + self.rerank_ms


def dev_tools_request(
    index: str, body: dict[str, Any], params: dict[str, str] | None = None
) -> str:
    """The request in Kibana / Dashboards Dev Tools syntax: paste it there to get the same hits.

    Written by orjson (the json module's ``indent=2, ensure_ascii=False`` layout, a float
    only spelled shorter): every ``POST /search`` answer and ``search --json`` carries it,
    and the json module took 0.19 ms of a search's rendering against 0.003."""
    query = f"?{urlencode(params)}" if params else ""
    path = f"{quote(index, safe=',*')}/_search{query}"
    return f"GET {path}\n{orjson.dumps(body, option=orjson.OPT_INDENT_2).decode()}"


class SiraResult(BaseModel):
    """One SIRA search: hits, the compiled DSL, the candidate table, timings and LLM usage."""

    index: str
    query: str
    query_id: str | None = None
    hits: list[SiraHit] = Field(default_factory=list)
    total: int = 0
    body: dict[str, Any] = Field(description="The exact `_search` body that was sent.")
    params: dict[str, str] = Field(default_factory=dict, description="URL parameters sent.")
    plain_bm25: bool = Field(description="True when no phrase or category survived grounding.")
    expansion: Expansion
    candidates: CandidateTable
    categories: list[CategoryDecision] = Field(default_factory=list)
    timings: SearchTimings = Field(default_factory=SearchTimings)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    fell_back_to_bm25: bool = Field(
        default=False,
        description="A SIRA search that ran as plain BM25 because its phrase source (the LLM, "
        "a table) gave nothing for this query; a note says why.",
    )

    def explain(self) -> str:
        return dev_tools_request(self.index, self.body, self.params)

    def to_json_dict(self) -> dict[str, Any]:
        """The ``--json`` view: hits, the compiled query, and every candidate's decision."""
        return {
            "hits": [
                {
                    "_id": h.id,
                    "score": h.score,
                    "title": h.title,
                    "matched_queries": h.matched_queries,
                    "rerank_score": h.rerank_score,
                }
                for h in self.hits
            ],
            "query": self.body,
            "candidates": [c.model_dump(exclude={"windows"}) for c in self.candidates.candidates],
            "categories": [c.model_dump() for c in self.categories],
            "doc_count": self.candidates.doc_count,
            "max_doc_freq": self.candidates.max_doc_freq,
            "plain_bm25": self.plain_bm25,
            "expansion_source": self.expansion.source,
            # hyde / cot: the text the LLM wrote, in full (the query uses it cut to the
            # word budget: see the compiled ``query`` and ``notes``); null for other methods.
            "generated_text": (
                self.expansion.generated.model_dump() if self.expansion.generated else None
            ),
            "fell_back_to_bm25": self.fell_back_to_bm25,
            "timings_ms": {
                **self.timings.model_dump(),
                "engine_ms": self.timings.engine_ms,
                "total_ms": self.timings.total_ms,
            },
            "llm_calls": [c.model_dump() for c in self.llm_calls],
            "notes": self.notes,
        }

    def to_search_json(self) -> dict[str, Any]:
        """The document ``sira-seek search --json`` prints and ``POST /search`` returns.

        One function for both, so the HTTP API and the command line cannot drift apart:
        ``to_json_dict`` plus ``explain``, the Dev Tools request (always present, so the keys
        never depend on a flag).
        """
        return {**self.to_json_dict(), "explain": self.explain()}

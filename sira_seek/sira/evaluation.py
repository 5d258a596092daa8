"""SIRA runs scored with the same ir-measures code and keys as the BM25 baseline."""

from __future__ import annotations

from collections.abc import Mapping

from sira_seek.backend import SearchBackend
from sira_seek.corpus import Query
from sira_seek.evaluation.retrieval import Run, evaluate_run

from .expansions import QueryExpander, QueryInput
from .results import SiraResult
from .settings import SiraSettings

EVAL_DEPTH = 100


def sira_results(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    *,
    expander: QueryExpander | None,
    settings: SiraSettings | None = None,
) -> list[SiraResult]:
    """Full results (hits, DSL, candidates, timings, LLM calls) for the top 100 of every query."""
    from .retriever import SiraRetriever

    settings = (settings or SiraSettings()).model_copy(update={"size": EVAL_DEPTH})
    retriever = SiraRetriever(backend, index, settings=settings, expander=expander)
    return retriever.search_many([QueryInput(text=q.text, id=q.id) for q in queries])


def sira_run(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    *,
    expander: QueryExpander | None,
    settings: SiraSettings | None = None,
) -> Run:
    """qid -> {doc_id: score} for the top 100 of every query."""
    results = sira_results(backend, index, queries, expander=expander, settings=settings)
    return {q.id: {h.id: h.score for h in r.hits} for q, r in zip(queries, results, strict=True)}


def evaluate_sira(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    expander: QueryExpander | None,
    settings: SiraSettings | None = None,
) -> dict[str, float]:
    """nDCG@10, Recall@10, Recall@100 and the number of judged queries (as ``evaluate_bm25``)."""
    judged = [q for q in queries if q.id in qrels]
    run = sira_run(backend, index, judged, expander=expander, settings=settings)
    return {**evaluate_run(run, qrels), "queries": len(judged)}

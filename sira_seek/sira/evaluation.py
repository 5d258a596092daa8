"""The runs SIRA is measured by, and the BM25 baseline's: both scored with the same
ir-measures code and keys (``sira_seek.metrics.retrieval``), so their numbers compare."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ir_measures import Measure

from sira_seek.backend import SearchBackend
from sira_seek.bm25 import bm25_query
from sira_seek.corpus import Query
from sira_seek.documents import fetch_documents_many, field_text
from sira_seek.fields import TEXT, TITLE
from sira_seek.llm.pending import PendingRequests
from sira_seek.metrics.retrieval import Run, evaluate_run

from .expansions import (
    LLM_DOWN_KINDS,
    REPORTED_IN_RESULT,
    LLMCall,
    LLMCircuit,
    QueryExpander,
    QueryInput,
    llm_label,
)
from .index_profile import read_index_profile
from .rerank import LLMReranker, run_scores, unusable_note
from .results import SiraHit, SiraResult
from .retriever import SiraRetriever
from .settings import SiraSettings

EVAL_DEPTH = 100
logger = logging.getLogger(__name__)

QueryBuilder = Callable[[Query], Mapping[str, Any]]


def retrieve_run(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    build: QueryBuilder,
    *,
    k: int = EVAL_DEPTH,
    batch: int = 50,
) -> Run:
    """Search every query (``_msearch`` in batches) and return qid -> {doc_id: score}.

    Each inner dict keeps the engine's hit order, which is how ties stay in engine order when
    the run is written as a TREC file.
    """
    run: Run = {}
    for start in range(0, len(queries), batch):
        part = queries[start : start + batch]
        bodies = [{**build(q), "size": k, "_source": False} for q in part]
        for query, result in zip(part, backend.msearch(index, bodies), strict=True):
            run[query.id] = {h.id: h.score for h in result.hits}
    return run


def bm25_run(backend: SearchBackend, index: str, queries: list[Query]) -> Run:
    """The plain BM25 baseline's top 100 for every query (batched)."""
    return retrieve_run(backend, index, queries, lambda q: bm25_query(q.text))


def evaluate_bm25(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    qrels: Mapping[str, Mapping[str, int]],
    measures: Mapping[str, Measure] | None = None,
) -> dict[str, float]:
    """The plain BM25 baseline: metrics plus the number of evaluated queries."""
    judged = [q for q in queries if q.id in qrels]
    run = bm25_run(backend, index, judged)
    return {**evaluate_run(run, qrels, measures), "queries": len(judged)}


def sira_results(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    *,
    expander: QueryExpander | None,
    settings: SiraSettings | None = None,
    on_progress: Callable[[int], None] | None = None,
    method: str | None = None,
) -> list[SiraResult]:
    """Full results (hits, DSL, candidates, timings, LLM calls) for the top 100 of every query.

    ``on_progress(n)``: ``n`` more queries expanded (see ``SiraRetriever.search_many``).
    """
    settings = (settings or SiraSettings()).model_copy(update={"size": EVAL_DEPTH})
    retriever = SiraRetriever(backend, index, settings=settings, expander=expander, method=method)
    try:
        return retriever.search_many(
            [QueryInput(text=q.text, id=q.id) for q in queries], on_progress=on_progress
        )
    finally:
        if retriever.vectors is not None:  # the expander is the caller's
            retriever.vectors.close()


def sira_run(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    *,
    expander: QueryExpander | None,
    settings: SiraSettings | None = None,
    on_progress: Callable[[int], None] | None = None,
    method: str | None = None,
) -> Run:
    """qid -> {doc_id: score} for the top 100 of every query (``method``: with vectors for
    dense, hybrid, sira-hybrid; None is SIRA's BM25 side alone)."""
    results = sira_results(
        backend,
        index,
        queries,
        expander=expander,
        settings=settings,
        on_progress=on_progress,
        method=method,
    )
    return run_of(queries, results)


def run_of(queries: Sequence[Query], results: Sequence[SiraResult]) -> Run:
    """qid -> {doc_id: score} of results given in the order of their queries."""
    return {q.id: {h.id: h.score for h in r.hits} for q, r in zip(queries, results, strict=True)}


def evaluate_sira(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    expander: QueryExpander | None,
    settings: SiraSettings | None = None,
    measures: Mapping[str, Measure] | None = None,
) -> dict[str, float]:
    """``measures`` (default nDCG@10, Recall@10, Recall@100) and the number of judged queries.

    Scored exactly as ``evaluate_bm25``, so the two methods' numbers are comparable.
    """
    judged = [q for q in queries if q.id in qrels]
    run = sira_run(backend, index, judged, expander=expander, settings=settings)
    return {**evaluate_run(run, qrels, measures), "queries": len(judged)}


class RerankedRun(NamedTuple):
    """A run whose top ``top_n`` per query was reranked, what that cost per query, and a note
    when some answers were unusable (those documents kept their BM25 position)."""

    run: Run
    ms: dict[str, float]
    tokens: dict[str, int]
    notes: list[str]
    calls: int = 0
    unusable: int = 0


def fetch_documents(
    backend: SearchBackend, index: str, ranking: Mapping[str, Sequence[str]], *, batch: int = 50
) -> dict[str, dict[str, tuple[str, str]]]:
    """qid -> {doc id: (title, text)} for the ids of each query (``documents.fetch_documents_many``:
    ``batch`` queries per ``_msearch``); a document the index no longer holds is left out."""
    found = fetch_documents_many(backend, index, ranking, batch=batch)
    return {
        qid: {i: (field_text(s, TITLE), field_text(s, TEXT)) for i, s in docs.items()}
        for qid, docs in found.items()
    }


def rerank_run(
    backend: SearchBackend,
    index: str,
    queries: Sequence[Query],
    run: Run,
    reranker: LLMReranker,
    *,
    top_n: int,
    on_progress: Callable[[int], None] | None = None,
    batch: int = 50,
    stop_when_down: bool = True,
) -> RerankedRun:
    """``run`` with each query's top ``top_n`` reranked by relevance to the query (SIRA §3.1),
    for any method's run (BM25 or SIRA): the passages are fetched by id, the same
    ``LLMReranker`` as ``sira-seek search --rerank`` orders them, and the scores are rewritten
    so that scoring by score ranks in the new order (``rerank.run_scores``).

    ``on_progress(1)`` after each query. ``stop_when_down``: an LLM that is not there stops
    the run at the first query (``LLMDownError``) instead of leaving every list in BM25 order.
    Without it (a fallback run) a query whose every call found the LLM not there opens a
    circuit: the later queries keep their order without calling it (one query's retries, not
    one per query, as the expansions' ``FailurePolicy``), and a note says so.
    """
    out: Run = {qid: dict(ranked) for qid, ranked in run.items()}
    ms: dict[str, float] = {}
    tokens: dict[str, int] = {}
    calls: list[LLMCall] = []
    todo = [q for q in queries if run.get(q.id)]
    waiting = PendingRequests()  # offline batch rounds: every query's calls in one round
    circuit: LLMCircuit | None = None  # set once a query found the LLM not there
    for start in range(0, len(todo), batch):
        part = todo[start : start + batch]
        if circuit is not None:
            break
        docs = fetch_documents(backend, index, {q.id: list(run[q.id])[:top_n] for q in part})
        for query in part:
            if circuit is not None:
                break
            hits = [
                SiraHit(id=doc_id, score=score, bm25_rank=rank)
                for rank, (doc_id, score) in enumerate(run[query.id].items(), start=1)
            ]
            with waiting.collect():
                done = reranker.rerank(
                    query.text, hits, docs[query.id], top_n=top_n, stop_when_down=stop_when_down
                )
                out[query.id] = run_scores(done.hits, top_n)
                ms[query.id] = done.ms
                tokens[query.id] = sum(c.prompt_tokens + c.completion_tokens for c in done.calls)
                calls += done.calls
                if on_progress is not None:
                    on_progress(1)
                if done.calls and all(c.error_kind in LLM_DOWN_KINDS for c in done.calls):
                    error = llm_label(done.calls[0].error or "")
                    circuit = LLMCircuit(at_query=len(ms), error=error, later="kept their order")
    waiting.raise_if_any()
    notes = [note] if (note := unusable_note(calls)) else []
    if circuit is not None and len(ms) < len(todo):
        circuit.skipped = len(todo) - len(ms)
        notes.append(f"rerank: {circuit.describe()}")
    for note in notes:  # the run's notes carry them: logged once, not said twice
        logger.warning("%s (%s)", note, index, extra=REPORTED_IN_RESULT)
    if on_progress is not None and len(ms) < len(todo):
        on_progress(len(todo) - len(ms))
    unusable = sum(1 for c in calls if c.error)
    return RerankedRun(out, ms, tokens, notes, len(calls), unusable)


def evaluate_enrichment(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    expander: QueryExpander | None,
    settings: SiraSettings | None = None,
) -> dict[str, dict[str, float]]:
    """Before/after corpus-side enrichment, on one index, in one call.

    "before" searches only the source text (``contents``), exactly what the index offered
    before sira-sync; "after" adds the enrichment fields sira-sync filled. On an index whose
    layout copies enrichment into ``contents`` and that holds some, only "after" rows exist
    (measure "before" before the sync: on an unenriched index both sides are the same).
    Rows: BM25 and SIRA (when an expander is given), each without and with enrichment.
    """
    judged = [q for q in queries if q.id in qrels]
    after = read_index_profile(backend, index)
    before = after.model_copy(
        update={"phrase_field": None, "phrase_shingle_field": None, "category_field": None}
    )
    sides = [("before", before), ("after", after)]
    if after.contents_enriched:
        # The enrichment layout counts phrases in `contents` (mappings/enrichment_layouts.json):
        # the index cannot be searched without them any more, so no honest "before" exists.
        logger.warning(
            "%s counts its enrichment in contents: only the 'after' rows are measured; run "
            "`eval enrichment` before sira-sync for the 'before' ones",
            index,
        )
        sides = [("after", after)]
    settings = (settings or SiraSettings()).model_copy(update={"size": EVAL_DEPTH})
    enriched = backend.count(index, {"exists": {"field": "sira_enrichment.phrases"}})
    deleted = backend.deleted_docs(index)  # counted by DF/IDF until merged away
    rows: dict[str, dict[str, float]] = {}
    variants: list[tuple[str, QueryExpander | None]] = [("bm25", None)]
    if expander is not None:
        variants.append(("sira", expander))
    for name, exp in variants:
        for label, profile in sides:
            retriever = SiraRetriever(
                backend, index, settings=settings, expander=exp, profile=profile
            )
            results = retriever.search_many([QueryInput(text=q.text, id=q.id) for q in judged])
            run = run_of(judged, results)
            rows[f"{name} {label} enrichment"] = {
                **evaluate_run(run, qrels),
                "queries": len(judged),
                "enriched_docs": enriched,
                "deleted_docs": deleted,
            }
    return rows

"""Evaluation runs that keep what reports and the query log need (per query, timed).

The recorded path of ``workflows.evaluate`` (``--save-run``, ``--log-prefix``) and of the
demo; the batched path is ``sira_seek.sira.evaluation`` (``bm25_run``, ``sira_run``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from ir_measures import Measure

from sira_seek.backend import SearchBackend
from sira_seek.bm25 import bm25_query
from sira_seek.corpus import Query
from sira_seek.inspection.from_results import record_from_sira
from sira_seek.inspection.query_log import QueryLogger
from sira_seek.metrics.retrieval import Run
from sira_seek.metrics.run_record import RunRecord, build_run_record
from sira_seek.sira.evaluation import RerankedRun, sira_results
from sira_seek.sira.expansions import QueryExpander
from sira_seek.sira.results import SiraResult
from sira_seek.sira.settings import SiraSettings

from .methods import method_spec
from .progress import Progress, advancer
from .search import fell_back_to_bm25

DEPTH = 100


def recorded_run(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    method: str,
    expander: QueryExpander | None = None,
    settings: SiraSettings | None = None,
    name: str | None = None,
    log_prefix: str | None = None,
    measures: Mapping[str, Measure] | None = None,
    progress: Progress | None = None,
    rerank: Callable[[Run], RerankedRun] | None = None,
) -> RunRecord:
    """Run ``method`` query by query, timing each; log every query when given a log prefix.

    Slower than the batched ``evaluate_*`` functions (one request per query) but the per-query
    latencies are real, not a batch divided by its size. Scored by the same ``score_run`` as
    the batched path (``measures``: default nDCG@10, R@10, R@100).

    ``progress`` advances once per judged query (its ``start`` is the caller's): for
    SIRA as each expansion arrives (the slow LLM part), for BM25 after each search.
    ``rerank`` (``sira.evaluation.rerank_run`` bound to its model) reorders every query's top
    hits before scoring; its time and tokens count in each query's latency and tokens. The
    query log records the searches as they ran, before the rerank.
    """
    judged = [q for q in queries if q.id in qrels]
    if method_spec(method).through_retriever:  # all but bm25: through SIRA's retriever
        return _retriever_run(
            backend, index, judged, qrels, method=method, expander=expander,
            settings=settings or SiraSettings(), name=name, log_prefix=log_prefix,
            measures=measures, progress=progress, rerank=rerank,
        )  # fmt: skip
    return _bm25_run(
        backend, index, judged, qrels, name=name, measures=measures,
        progress=progress, rerank=rerank,
    )  # fmt: skip


def _retriever_run(
    backend: SearchBackend,
    index: str,
    judged: list[Query],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    method: str,
    expander: QueryExpander | None,
    settings: SiraSettings,
    name: str | None,
    log_prefix: str | None,
    measures: Mapping[str, Measure] | None,
    progress: Progress | None,
    rerank: Callable[[Run], RerankedRun] | None,
) -> RunRecord:
    """Every method but BM25 goes through SIRA's retriever, whose results carry their own
    timings, LLM calls and fallback, so the record takes them from there."""
    results = sira_results(
        backend, index, judged, expander=expander, settings=settings,
        on_progress=advancer(progress), method=method,
    )  # fmt: skip
    if log_prefix:
        _log_results(backend, log_prefix, results, settings, method)
    run: dict[str, dict[str, float]] = {}
    latencies: list[float] = []
    tokens: list[int] = []
    for query, result in zip(judged, results, strict=True):
        run[query.id] = {h.id: h.score for h in result.hits}
        latencies.append(result.timings.total_ms)
        tokens.append(sum(c.prompt_tokens + c.completion_tokens for c in result.llm_calls))
    run = _reranked(run, judged, latencies, tokens, rerank)
    record = build_run_record(
        name or method,
        method,
        run,
        qrels,
        latency_ms=latencies,
        llm_tokens=tokens,
        engine=backend.info.engine,
        index=index,
        measures=measures,
    )
    record.settings = {
        "expansion_weight": settings.weight,
        "max_df_ratio": settings.tau,
    }
    record.fallbacks = [
        q.id for q, r in zip(judged, results, strict=True) if fell_back_to_bm25(method, r)
    ]
    return record


def _log_results(
    backend: SearchBackend,
    log_prefix: str,
    results: list[SiraResult],
    settings: SiraSettings,
    method: str,
) -> None:
    """One query-log record per search, as it ran (before any rerank), flushed once at the end."""
    logger = QueryLogger(backend, prefix=log_prefix)
    for result in results:
        record = record_from_sira(result, weight=settings.weight, tau=settings.tau, method=method)
        logger.log(record)
    logger.flush()


def _bm25_run(
    backend: SearchBackend,
    index: str,
    judged: list[Query],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    name: str | None,
    measures: Mapping[str, Measure] | None,
    progress: Progress | None,
    rerank: Callable[[Run], RerankedRun] | None,
) -> RunRecord:
    """BM25 one search per query, timed here, since no retriever result carries a timing;
    it uses no LLM, so it has token counts only when a rerank spent some."""
    run: dict[str, dict[str, float]] = {}
    latencies: list[float] = []
    tokens: list[int] = []
    for query in judged:
        start = time.perf_counter()
        found = backend.search(index, {**bm25_query(query.text), "size": DEPTH, "_source": False})
        latencies.append((time.perf_counter() - start) * 1000)
        run[query.id] = {h.id: h.score for h in found.hits}
        if progress is not None:
            progress.advance()
    if rerank is not None:
        tokens = [0] * len(judged)
        run = _reranked(run, judged, latencies, tokens, rerank)
    return build_run_record(
        name or "bm25",
        "bm25",
        run,
        qrels,
        latency_ms=latencies,
        llm_tokens=tokens or None,
        engine=backend.info.engine,
        index=index,
        measures=measures,
    )


def _reranked(
    run: Run,
    judged: list[Query],
    latencies: list[float],
    tokens: list[int],
    rerank: Callable[[Run], RerankedRun] | None,
) -> Run:
    """``run`` reranked (unchanged without ``rerank``); each query's rerank time and tokens
    are added to its entry of ``latencies`` and ``tokens`` (in ``judged`` order)."""
    if rerank is None:
        return run
    done = rerank(run)
    for i, query in enumerate(judged):
        latencies[i] += done.ms.get(query.id, 0.0)
        tokens[i] += done.tokens.get(query.id, 0)
    return done.run

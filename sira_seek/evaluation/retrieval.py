"""Retrieval evaluation with ir-measures: runs come from the cluster, metrics are not ours."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import ir_measures
from ir_measures import Measure

from sira_seek.backend import SearchBackend
from sira_seek.corpus import Query

DEFAULT_MEASURES: dict[str, Measure] = {
    "ndcg@10": ir_measures.nDCG @ 10,
    "recall@10": ir_measures.R @ 10,
    "recall@100": ir_measures.R @ 100,
}

Run = dict[str, dict[str, float]]
QueryBuilder = Callable[[Query], Mapping[str, Any]]


def retrieve_run(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    build: QueryBuilder,
    *,
    k: int = 100,
    batch: int = 50,
) -> Run:
    """Search every query (``_msearch`` in batches) and return qid -> {doc_id: score}."""
    run: Run = {}
    for start in range(0, len(queries), batch):
        part = queries[start : start + batch]
        bodies = [{**build(q), "size": k, "_source": False} for q in part]
        for query, result in zip(part, backend.msearch(index, bodies), strict=True):
            run[query.id] = {h.id: h.score for h in result.hits}
    return run


def evaluate_run(
    run: Run, qrels: Mapping[str, Mapping[str, int]], measures: Mapping[str, Measure] | None = None
) -> dict[str, float]:
    """Mean of each measure over the queries that have judgements (as BEIR reports)."""
    measures = measures or DEFAULT_MEASURES
    judged = {q: dict(r) for q, r in qrels.items() if q in run}
    # Queries with judgements but no hits count as zero, not as missing.
    full_run = {q: run.get(q) or {"__none__": 0.0} for q in judged}
    agg = ir_measures.calc_aggregate(list(measures.values()), judged, full_run)
    out = {name: round(float(agg[m]), 4) for name, m in measures.items()}
    return out


def per_query(
    run: Run, qrels: Mapping[str, Mapping[str, int]], measure: Measure
) -> dict[str, float]:
    judged = {q: dict(r) for q, r in qrels.items() if q in run}
    full_run = {q: run.get(q) or {"__none__": 0.0} for q in judged}
    return {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], judged, full_run)}


def evaluate_bm25(
    backend: SearchBackend, index: str, queries: list[Query], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, float]:
    """The plain BM25 baseline: metrics plus the number of evaluated queries."""
    from sira_seek.bm25 import bm25_query

    judged = [q for q in queries if q.id in qrels]
    run = retrieve_run(backend, index, judged, lambda q: bm25_query(q.text))
    return {**evaluate_run(run, qrels), "queries": len(judged)}

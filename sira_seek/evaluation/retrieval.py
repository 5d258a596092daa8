"""Retrieval evaluation with ir-measures: runs come from the cluster, metrics are not ours.

There is one scoring path, :func:`score_run`: the JSON metrics of ``eval retrieval``, the saved
runs behind ``sira-seek report`` and the significance tests all read its means and per-query
values, so a report can never disagree with the numbers printed for the same run.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

import ir_measures
from ir_measures import Measure
from pydantic import BaseModel

from sira_seek.backend import SearchBackend
from sira_seek.corpus import Query

logger = logging.getLogger(__name__)

DEFAULT_MEASURES: dict[str, Measure] = {
    "ndcg@10": ir_measures.nDCG @ 10,
    "recall@10": ir_measures.R @ 10,
    "recall@100": ir_measures.R @ 100,
}

Run = dict[str, dict[str, float]]
QueryBuilder = Callable[[Query], Mapping[str, Any]]

# Commas separate measures, except inside parameters: "nDCG(dcg='exp-log2')@10,P(rel=2)@5".
_TOP_LEVEL_COMMA = re.compile(r",(?![^()]*\))")


def parse_measures(spec: str) -> dict[str, Measure]:
    """ir-measures measure strings ("nDCG@10,R@100,P@5,AP") keyed by their canonical names.

    Raises ValueError naming the first string ir-measures cannot parse, so a typo fails before
    any query is sent rather than after a full run.
    """
    out: dict[str, Measure] = {}
    for raw in _TOP_LEVEL_COMMA.split(spec):
        text = raw.strip()
        if not text:
            continue
        try:
            measure = ir_measures.parse_measure(text)
        except (ValueError, NameError, SyntaxError) as exc:
            raise ValueError(f"unknown or malformed measure {text!r}: {exc}") from None
        out[str(measure)] = measure
    if not out:
        raise ValueError(f"no measure in {spec!r}")
    return out


class RunScores(BaseModel):
    """Means and per-query values of one run, from a single ir-measures pass."""

    means: dict[str, float]
    per_query: dict[str, dict[str, float]]


def _judged_run(
    run: Run, qrels: Mapping[str, Mapping[str, int]]
) -> tuple[dict[str, dict[str, int]], Run]:
    judged = {q: dict(r) for q, r in qrels.items() if q in run}
    # Queries with judgements but no hits count as zero, not as missing.
    full_run = {q: run.get(q) or {"__none__": 0.0} for q in judged}
    return judged, full_run


def score_run(
    run: Run, qrels: Mapping[str, Mapping[str, int]], measures: Mapping[str, Measure] | None = None
) -> RunScores:
    """Score a run over the queries that have judgements (as BEIR reports).

    ``ir_measures.calc`` yields the per-query values and aggregates them with each measure's own
    aggregator in the same pass, so the means are exactly the means of ``per_query``.
    """
    measures = measures or DEFAULT_MEASURES
    judged, full_run = _judged_run(run, qrels)
    result = ir_measures.calc(list(set(measures.values())), judged, full_run)
    aggregated = result.aggregated
    assert isinstance(aggregated, dict)
    names: dict[Measure, list[str]] = {}
    for name, measure in measures.items():
        names.setdefault(measure, []).append(name)
    per_query: dict[str, dict[str, float]] = {}
    for metric in result.per_query:
        for name in names[metric.measure]:
            per_query.setdefault(metric.query_id, {})[name] = float(metric.value)
    means = {name: float(aggregated[m]) for name, m in measures.items()}
    return RunScores(means=means, per_query=per_query)


def evaluate_run(
    run: Run, qrels: Mapping[str, Mapping[str, int]], measures: Mapping[str, Measure] | None = None
) -> dict[str, float]:
    """Mean of each measure, rounded to 4 digits for printing and pinning (see ``score_run``)."""
    return {name: round(v, 4) for name, v in score_run(run, qrels, measures).means.items()}


def per_query(
    run: Run, qrels: Mapping[str, Mapping[str, int]], measure: Measure
) -> dict[str, float]:
    """qid -> value of one measure (the per-query half of ``score_run``)."""
    scores = score_run(run, qrels, {"m": measure})
    return {qid: values["m"] for qid, values in scores.per_query.items()}


def retrieve_run(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    build: QueryBuilder,
    *,
    k: int = 100,
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
    from sira_seek.bm25 import bm25_query

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

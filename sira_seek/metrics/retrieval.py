"""Retrieval metrics with ir-measures: a run (qid -> {doc_id: score}) and judgements in,
figures out; the metrics themselves are ir-measures', not ours.

There is one scoring path, :func:`score_run`: the JSON metrics of ``eval retrieval``, the saved
runs behind ``sira-seek report`` and the significance tests all read its means and per-query
values, so a report can never disagree with the numbers printed for the same run. The runs
come from elsewhere: ``sira_seek.bm25.bm25_run`` and ``sira_seek.sira.evaluation.sira_run``
query a backend.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import ir_measures
from ir_measures import Measure
from pydantic import BaseModel

from sira_seek.input_errors import InputError

DEFAULT_MEASURES: dict[str, Measure] = {
    "ndcg@10": ir_measures.nDCG @ 10,
    "recall@10": ir_measures.R @ 10,
    "recall@100": ir_measures.R @ 100,
}

Run = dict[str, dict[str, float]]
"""qid -> {doc_id: score}, each inner dict in the engine's hit order."""

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
            raise InputError(f"unknown or malformed measure {text!r}: {exc}") from None
        out[str(measure)] = measure
    if not out:
        raise InputError(f"no measure in {spec!r}")
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

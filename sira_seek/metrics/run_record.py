"""A saved evaluation run: what `sira-seek report` compares.

Keeps per-query numbers (not only means) so a report can show where one method wins or loses
against another, plus latency and LLM token samples for distributions.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import ir_measures
from ir_measures import Measure
from pydantic import BaseModel, Field

from sira_seek.input_errors import InputError
from sira_seek.redaction import write_masked_text

from .retrieval import DEFAULT_MEASURES, Run, score_run

RECALL_CUTOFFS = (1, 2, 3, 5, 10, 20, 50, 100)


class RunRecord(BaseModel):
    name: str
    method: str
    dataset: str = ""
    index: str = ""
    engine: str = ""
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    metrics: dict[str, float] = Field(default_factory=dict)
    per_query: dict[str, dict[str, float]] = Field(default_factory=dict)
    recall_curve: dict[int, float] = Field(default_factory=dict)
    latency_ms: list[float] = Field(default_factory=list)
    llm_tokens: list[int] = Field(default_factory=list)
    settings: dict[str, float | str | None] = Field(default_factory=dict)
    # The queries that ran as plain BM25 because the LLM (the phrase source) gave nothing:
    # their figures are BM25's, so the report shows how many and which beside the metrics.
    fallbacks: list[str] = Field(default_factory=list)
    # The ranking itself (qid -> {doc_id: score}, engine order), for `--run-file`; not saved:
    # the TREC run file is the interchange format for rankings.
    ranking: Run = Field(default_factory=dict, exclude=True)

    def save(self, path: Path) -> None:
        """The run as JSON, masked (``write_masked_text``): its settings name the LLM spec."""
        write_masked_text(path, self.model_dump_json(indent=1))

    def with_measure_keys(self) -> RunRecord:
        """A copy whose metric keys are ``measure_key`` names, so runs saved with and without
        ``--measures`` line up in one report ("nDCG@10" and "ndcg@10" are one column)."""
        return self.model_copy(
            update={
                "metrics": {measure_key(k): v for k, v in self.metrics.items()},
                "per_query": {
                    q: {measure_key(k): v for k, v in values.items()}
                    for q, values in self.per_query.items()
                },
            }
        )

    @classmethod
    def load(cls, path: Path) -> RunRecord:
        try:
            return cls.model_validate_json(Path(path).read_text())
        except ValueError as exc:
            raise InputError(f"{path} is not a sira-seek run file: {str(exc)[:300]}") from None


_DEFAULT_KEYS = {str(m): name for name, m in DEFAULT_MEASURES.items()}


def measure_key(name: str) -> str:
    """One name per measure: the default JSON key ("ndcg@10") for the default measures, else
    ir-measures' canonical name; a key ir-measures cannot parse is kept as it is."""
    if name in DEFAULT_MEASURES:
        return name
    try:
        canonical = str(ir_measures.parse_measure(name))
    except (ValueError, NameError, SyntaxError):
        return name
    return _DEFAULT_KEYS.get(canonical, canonical)


def build_run_record(
    name: str,
    method: str,
    run: Run,
    qrels: Mapping[str, Mapping[str, int]],
    *,
    latency_ms: list[float] | None = None,
    llm_tokens: list[int] | None = None,
    measures: Mapping[str, Measure] | None = None,
    **meta: str,
) -> RunRecord:
    """Metrics, per-query values and a recall@k curve for one run.

    Metrics and per-query values come from ``score_run``, the function behind ``evaluate_run``
    and the printed JSON, so a saved run and the batched evaluation of the same ranking agree.
    """
    scores = score_run(run, qrels, measures or DEFAULT_MEASURES)
    curve = score_run(run, qrels, {str(k): ir_measures.R @ k for k in RECALL_CUTOFFS}).means
    return RunRecord.model_validate(
        {
            "name": name,
            "method": method,
            "metrics": {n: round(v, 4) for n, v in scores.means.items()},
            "per_query": scores.per_query,
            "recall_curve": {int(k): round(v, 4) for k, v in curve.items()},
            "latency_ms": latency_ms or [],
            "llm_tokens": llm_tokens or [],
            "ranking": run,
            **meta,
        }
    )

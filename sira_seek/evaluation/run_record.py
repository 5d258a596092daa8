"""A saved evaluation run: what `sira-seek report` compares.

Keeps per-query numbers (not only means) so a report can show where one method wins or loses
against another, plus latency and LLM token samples for distributions.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import ir_measures
from pydantic import BaseModel, Field

from .retrieval import DEFAULT_MEASURES, Run

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

    def save(self, path: Path) -> None:
        path.write_text(self.model_dump_json(indent=1))

    @classmethod
    def load(cls, path: Path) -> RunRecord:
        try:
            return cls.model_validate_json(Path(path).read_text())
        except ValueError as exc:
            raise ValueError(f"{path} is not a sira-seek run file: {str(exc)[:300]}") from None


def build_run_record(
    name: str,
    method: str,
    run: Run,
    qrels: Mapping[str, Mapping[str, int]],
    *,
    latency_ms: list[float] | None = None,
    llm_tokens: list[int] | None = None,
    **meta: str,
) -> RunRecord:
    """Metrics, per-query values and a recall@k curve for one run (ir-measures computes all)."""
    judged = {q: dict(r) for q, r in qrels.items() if q in run}
    full_run = {q: run.get(q) or {"__none__": 0.0} for q in judged}
    measures = dict(DEFAULT_MEASURES)
    curve = {k: ir_measures.R @ k for k in RECALL_CUTOFFS}
    all_measures = [*measures.values(), *curve.values()]
    agg = ir_measures.calc_aggregate(all_measures, judged, full_run)
    per_query: dict[str, dict[str, float]] = {}
    names = {str(m): n for n, m in measures.items()}
    for metric in ir_measures.iter_calc(list(measures.values()), judged, full_run):
        per_query.setdefault(metric.query_id, {})[names[str(metric.measure)]] = float(metric.value)
    return RunRecord.model_validate(
        {
            "name": name,
            "method": method,
            "metrics": {n: round(float(agg[m]), 4) for n, m in measures.items()},
            "per_query": per_query,
            "recall_curve": {k: round(float(agg[m]), 4) for k, m in curve.items()},
            "latency_ms": latency_ms or [],
            "llm_tokens": llm_tokens or [],
            **meta,
        }
    )

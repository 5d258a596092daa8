"""Paired significance of each run against a baseline, per measure, over the same queries.

The test is the two-sided paired Student t-test from ``scipy.stats.ttest_rel``. Why this one:
Smucker, Allan and Carterette (CIKM 2007) found the paired t-test agrees with the randomization
test on IR measures, and it is deterministic (no resampling, so no seed to report). Why scipy
rather than ranx's ``compare``: scipy is already installed with ir-measures (pytrec_eval needs
it) and is tiny next to ranx, which brings numba and llvmlite and would compute the same test.
No multiple-comparison correction is applied; the report says so.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Mapping

from pydantic import BaseModel
from scipy import stats

from sira_seek.metrics.run_record import RunRecord

logger = logging.getLogger(__name__)

ALPHA = 0.05


class PairedTest(BaseModel):
    """One run against the baseline on one measure."""

    run: str
    baseline: str
    measure: str
    queries: int
    mean_delta: float
    t_statistic: float | None
    p_value: float | None  # None when fewer than two shared queries: nothing to test

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA


def paired_t_test(
    run: Mapping[str, float], baseline: Mapping[str, float]
) -> tuple[int, float, float | None, float | None]:
    """(queries, mean difference, t, p) over the queries both runs scored.

    Identical per-query values are reported as t = 0, p = 1 (no evidence of a difference);
    scipy would return NaN there because the differences have zero variance.
    """
    shared = sorted(run.keys() & baseline.keys())
    if len(run) != len(baseline) or len(shared) != len(run):
        logger.warning(
            "runs scored different queries (%d vs %d); testing the %d they share",
            len(run),
            len(baseline),
            len(shared),
        )
    diffs = [run[q] - baseline[q] for q in shared]
    if len(diffs) < 2:
        return len(diffs), (diffs[0] if diffs else 0.0), None, None
    mean = statistics.fmean(diffs)
    if all(d == 0 for d in diffs):
        return len(diffs), 0.0, 0.0, 1.0
    result = stats.ttest_rel([run[q] for q in shared], [baseline[q] for q in shared])
    t, p = float(result.statistic), float(result.pvalue)
    return len(diffs), mean, (None if math.isnan(t) else t), (None if math.isnan(p) else p)


def compare_with_baseline(runs: list[RunRecord], baseline: RunRecord) -> list[PairedTest]:
    """Every other run against ``baseline`` on every measure both have per-query values for
    (keys normalised by ``RunRecord.with_measure_keys``, so "nDCG@10" pairs with "ndcg@10")."""
    out: list[PairedTest] = []
    base = baseline.with_measure_keys()
    base_measures = {m for values in base.per_query.values() for m in values}
    for record in runs:
        if record is baseline:
            continue
        run = record.with_measure_keys()
        measures = sorted(base_measures & {m for v in run.per_query.values() for m in v})
        for measure in measures:
            n, delta, t, p = paired_t_test(
                {q: v[measure] for q, v in run.per_query.items() if measure in v},
                {q: v[measure] for q, v in base.per_query.items() if measure in v},
            )
            out.append(
                PairedTest(
                    run=run.name,
                    baseline=base.name,
                    measure=measure,
                    queries=n,
                    mean_delta=delta,
                    t_statistic=t,
                    p_value=p,
                )
            )
    return out

"""Scores, measures and run records a front end renders or names in its flags.

Re-exported from ``sira_seek.metrics`` (loaded on first use, PEP 562) so the command line
depends on the workflows, not on how the metrics package is laid out: the evaluation workflows
return these types, and the flags' choices (measures, answer extractions, DIG edges) are the
metrics' own constants, written once there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sira_seek.metrics.information_gain import DEFAULT_DIG_EDGES, DIG_EDGES, DigParameters
    from sira_seek.metrics.llm_cost import llm_cost
    from sira_seek.metrics.qa import ANSWER_EXTRACTIONS, METRIC_NAMES, QAScores, cover_em
    from sira_seek.metrics.retrieval import parse_measures
    from sira_seek.metrics.run_record import RunRecord
    from sira_seek.metrics.seek_answer_analyses import AnalysisCost
    from sira_seek.metrics.seek_diagnostics import SeekDiagnostics

__all__ = [
    "ANSWER_EXTRACTIONS",
    "AnalysisCost",
    "DEFAULT_DIG_EDGES",
    "DIG_EDGES",
    "DigParameters",
    "METRIC_NAMES",
    "QAScores",
    "RunRecord",
    "SeekDiagnostics",
    "cover_em",
    "llm_cost",
    "parse_measures",
]

_EXPORTS = {
    "sira_seek.metrics.retrieval": ("parse_measures",),
    "sira_seek.metrics.seek_answer_analyses": ("AnalysisCost",),
    "sira_seek.metrics.seek_diagnostics": ("SeekDiagnostics",),
    "sira_seek.metrics.information_gain": (
        "DEFAULT_DIG_EDGES",
        "DIG_EDGES",
        "DigParameters",
    ),
    "sira_seek.metrics.llm_cost": ("llm_cost",),
    "sira_seek.metrics.qa": (
        "ANSWER_EXTRACTIONS",
        "METRIC_NAMES",
        "QAScores",
        "cover_em",
    ),
    "sira_seek.metrics.run_record": ("RunRecord",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

"""``eval qa --diagnostics``: the SEEK paper's analyses of a finished run, printed and reported.

Kept apart from ``eval_qa_cmd`` so that command only gains a few lines; the analyses
themselves are `sira_seek.evaluation.seek_diagnostics`.
"""

from __future__ import annotations

from pathlib import Path

import click

from sira_seek.corpus import ReadReport, read_qrels
from sira_seek.evaluation.information_gain import InformationGains
from sira_seek.evaluation.seek_diagnostics import SeekDiagnostics, seek_diagnostics
from sira_seek.reporting.html_report import render_seek_report
from sira_seek.seek.batch import BatchReport

from .exit_codes import BadInput
from .options import echo_skipped


def read_diagnostic_qrels(path: Path | None, *, strict: bool) -> dict[str, dict[str, int]] | None:
    """``--qrels`` read before any question is asked, so a bad file costs no LLM call."""
    if path is None:
        return None
    skipped = ReadReport()
    qrels = read_qrels(path, skipped, strict=strict)
    echo_skipped(skipped)
    if not qrels:
        raise BadInput(f"{path}: no usable judgement (query-id corpus-id score)")
    return qrels


def run_diagnostics(
    report: BatchReport,
    qrels: dict[str, dict[str, int]] | None,
    *,
    html: Path | None,
    name: str,
    gains: InformationGains | None,
) -> SeekDiagnostics:
    """The analyses of ``report``; also written as an HTML report when ``html`` is given."""
    found = seek_diagnostics(
        report.results,
        qrels,
        wall_s=report.wall_s,
        run_questions=report.answered + report.failed,
        gains=gains,
    )
    if html is not None:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(render_seek_report({name: found}), encoding="utf-8")
    return found


def format_diagnostics(found: SeekDiagnostics) -> str:
    """A few lines for people; ``--json`` carries every figure and the per-question rows."""

    def show(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    gists = ", ".join(f"{k}: {v}" for k, v in found.gist_counts.items()) or "n/a"
    return "\n".join(
        [
            f"sub-query diversity        {show(found.subquery_diversity)} "
            f"({found.diversity_questions} questions with 2+ sub-queries)",
            f"new-document share         {show(found.new_document_share)}",
            f"DIG                        {show(found.dig)} ({found.dig_questions} questions"
            + (f"; unavailable: {found.dig_unavailable})" if found.dig_unavailable else ")"),
            f"best sub-query Recall@5    {show(found.best_subquery_recall_at_5)} "
            f"({found.recall_questions} judged questions)",
            f"sub-queries per question   {show(found.subqueries_per_question)}",
            f"gists per question         {show(found.gists_per_question)} (by count {gists})",
            f"seconds per question       {show(found.seconds_per_question)} "
            f"(median {show(found.seconds_per_question_p50)}, "
            f"amortised {show(found.amortised_seconds_per_question)})",
        ]
    )


def echo_diagnostics(found: SeekDiagnostics) -> None:
    click.echo(format_diagnostics(found))

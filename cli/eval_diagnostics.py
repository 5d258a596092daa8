"""``eval qa --diagnostics``: the SEEK paper's analyses of a finished run, as lines for people.

The analyses themselves are computed by the QA evaluation workflow
(`sira_seek.workflows.evaluate_qa`, over `sira_seek.metrics.seek_diagnostics`).
"""

from __future__ import annotations

import click

from sira_seek.metrics.seek_diagnostics import SeekDiagnostics


def format_diagnostics(found: SeekDiagnostics) -> str:
    """A few lines for people; ``--json`` carries every figure and the per-question rows."""

    def show(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    gists = ", ".join(f"{k}: {v}" for k, v in found.gist_counts.items()) or "n/a"
    dig_with = "n/a" if found.dig_parameters is None else found.dig_parameters.describe()
    return "\n".join(
        [
            f"sub-query diversity        {show(found.subquery_diversity)} "
            f"({found.diversity_questions} questions with 2+ sub-queries)",
            f"new-document share         {show(found.new_document_share)}",
            f"DIG                        {show(found.dig)} ({found.dig_questions} questions"
            + (f"; unavailable: {found.dig_unavailable})" if found.dig_unavailable else ")"),
            f"DIG parameters (Eq. 14-15) {dig_with}",
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

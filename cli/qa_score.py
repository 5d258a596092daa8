"""``sira-seek eval qa-score``: score an existing prediction file with the papers' metrics.

Kept thin on purpose: reading and scoring are the QA evaluation workflow's
(`sira_seek.workflows.evaluate_qa`, over `sira_seek.metrics.qa`), so the numbers printed here
are the ones the Python API and ``eval qa`` produce.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.evaluate_qa import score_prediction_file
from sira_seek.workflows.scores import METRIC_NAMES, QAScores

from .exit_codes import BadInput
from .options import friendly_errors, json_option


def qa_json(scores: QAScores) -> dict[str, float | int]:
    """The JSON both QA commands print: ``no_gold`` is always there (0 when every question
    had a gold answer), so the keys never depend on the data."""
    return {**scores.as_report(), "no_gold": scores.no_gold}


def format_table(scores: QAScores) -> str:
    """A two-column table for people; ``--json`` is the machine-readable form."""
    rows = [(name, f"{getattr(scores, name):.3f}") for name in METRIC_NAMES]
    rows.append(("questions", str(scores.questions)))
    if scores.no_gold:
        rows.append(("no_gold", str(scores.no_gold)))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value:>6}" for name, value in rows)


@click.command("qa-score")
@click.option(
    "--predictions",
    "predictions_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL file with gold answers (`answer` or `golden_answers`) and predictions "
    "(`pred_ans` or `prediction`).",
)
@json_option("Print the scores as one JSON object.")
@friendly_errors
def qa_score(predictions_path: Path, as_json: bool) -> None:
    """Score a prediction file with Cover-EM, EM and token F1, equal to the SEEK authors' scorer.

    Predictions are scored as written (their ``pred_ans`` is already the extracted answer).
    """
    try:
        scores = score_prediction_file(predictions_path)
    except InvalidInput as exc:
        raise BadInput(str(exc)) from None
    if as_json:
        click.echo(json.dumps(qa_json(scores)))
    else:
        click.echo(format_table(scores))

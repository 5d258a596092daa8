"""``sira-seek eval qa``: answer a QA file with SEEK or a baseline and print the papers' scores.

Runs resumably: with ``--checkpoint FILE`` every finished question is appended to FILE at
once, and a re-run with the same FILE asks only the questions not yet answered.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click

from sira_seek.corpus import ReadReport
from sira_seek.evaluation.information_gain import InformationGains, information_gains
from sira_seek.evaluation.qa_metrics import (
    ANSWER_EXTRACTIONS,
    AnswerExtraction,
    QAScores,
    score_predictions,
)
from sira_seek.llm.scoring import find_scorer
from sira_seek.llm.settings import LLMSettings
from sira_seek.seek.batch import BatchReport
from sira_seek.seek.checkpoint import CheckpointMismatchError
from sira_seek.seek.questions import read_questions

from .eval_diagnostics import echo_diagnostics, read_diagnostic_qrels, run_diagnostics
from .exit_codes import BadInput, PartialFailure
from .options import (
    cluster_options,
    echo_skipped,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
    strict_option,
)
from .progress import QuestionBar
from .qa_score import format_table, qa_json
from .seek_options import SeekChoices, index_option, seek_options


@click.command("qa")
@index_option
@click.option(
    "--qa",
    "qa_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL questions with `golden_answers` or `answer`.",
)
@seek_options
@click.option("--limit", type=int, default=None, help="Only the first N questions.")
@click.option(
    "--checkpoint",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSONL of finished questions: appended as they finish, reused on re-run.",
)
@click.option("--concurrency", type=int, default=4, show_default=True, help="Questions in flight.")
@click.option(
    "--predictions",
    "predictions_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write every result (answer, sketch, sub-queries, usage) as JSONL.",
)
@click.option(
    "--extraction",
    type=click.Choice(ANSWER_EXTRACTIONS),
    default="tagged",
    show_default=True,
    help="How the scored answer is read from the model's text: `tagged` as the SEEK authors "
    "(no <answer> tag scores as <None>), `lenient` also takes an Answer: line or the last line.",
)
@click.option(
    "--diagnostics",
    is_flag=True,
    help="Also report the SEEK paper's analyses: sub-query diversity, new-document share, DIG "
    "(gold-answer confidence with the gathered knowledge minus without; scored by the same LLM, "
    "which must return token log-probabilities), best sub-query Recall@5 (with --qrels), gists "
    "and seconds per question.",
)
@click.option(
    "--qrels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Judgements (query-id corpus-id score; ids = question ids) for best sub-query "
    "Recall@5; implies --diagnostics.",
)
@click.option(
    "--report",
    "report_html",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the analyses as an HTML report; implies --diagnostics.",
)
@strict_option
@json_option("Print the scores and the run's counts as one JSON object.")
@no_progress_option
@click.option("--quiet", is_flag=True, hidden=True, help="Old spelling of --no-progress.")
@cluster_options
@friendly_errors
def eval_qa(
    index: str | None,
    qa_path: Path,
    seek: SeekChoices,
    limit: int | None,
    checkpoint: Path | None,
    concurrency: int,
    predictions_out: Path | None,
    extraction: AnswerExtraction,
    diagnostics: bool,
    qrels: Path | None,
    report_html: Path | None,
    strict: bool,
    as_json: bool,
    no_progress: bool,
    quiet: bool,
    **cluster: Any,
) -> None:
    """Answer --qa questions with METHOD and score them (Cover-EM, EM, token F1).

    Exits 3 (after printing the scores) when some questions failed.
    """
    progress = show_progress(no_progress=no_progress or quiet, as_json=as_json)
    skipped = ReadReport()
    # A bad line is a BadInputLineError (a ValueError): friendly_errors makes it exit 2.
    questions = read_questions(qa_path, limit=limit, strict=strict, report=skipped)
    echo_skipped(skipped)
    if not questions:
        raise BadInput(f"{qa_path}: no usable question (a JSON object with `question`)")
    diagnostics = diagnostics or qrels is not None or report_html is not None
    judgements = read_diagnostic_qrels(qrels, strict=strict)
    settings = seek.settings()
    capped = LLMSettings().in_flight_cap(concurrency)
    if capped is not None:
        click.echo(f"warning: {capped}", err=True)
    found = seek.make_retriever(index, cluster)

    async def run(bar: QuestionBar) -> tuple[BatchReport, dict[str, Any], InformationGains | None]:
        session = seek.open_session(found, settings)
        try:
            # The bar (rate, ETA, failed=N) replaces a line per question; failures still get
            # their own line above it.
            report = await session.answer_many(
                questions,
                concurrency=concurrency,
                checkpoint=checkpoint,
                on_result=bar.result if progress else None,
                on_start=bar.start if progress else None,
            )
            usage = dict(session.ledger.summary())  # the method's cost, not DIG's scoring
            gains = (
                await information_gains(
                    find_scorer(session.llm),
                    report.results,
                    settings,
                    concurrency=concurrency,
                    backend=session.llm.backend,
                )
                if diagnostics
                else None
            )
        finally:
            await session.aclose()
        return report, usage, gains

    try:
        with QuestionBar(desc="eval qa", total=len(questions), enabled=progress) as bar:
            report, usage, gains = asyncio.run(run(bar))
    except CheckpointMismatchError as exc:
        raise BadInput(str(exc)) from None
    # After the bar is closed, so the summary gets a line of its own.
    click.echo(
        f"{report.answered} answered ({report.failed} failed), {report.resumed} resumed "
        f"from checkpoint, {report.wall_s:.1f}s; LLM calls {usage['calls']}, "
        f"completion tokens {usage['completion_tokens']}",
        err=True,
    )
    if predictions_out is not None:
        predictions_out.parent.mkdir(parents=True, exist_ok=True)
        with predictions_out.open("w", encoding="utf-8") as handle:
            for result in report.results:
                handle.write(result.model_dump_json() + "\n")
    scores: QAScores = score_predictions(r.prediction_record(extraction) for r in report.results)
    analyses = (
        run_diagnostics(report, judgements, html=report_html, name=seek.method, gains=gains)
        if diagnostics
        else None
    )
    if as_json:
        counts = {"answered": report.answered, "failed": report.failed, "resumed": report.resumed}
        extra = {"diagnostics": None if analyses is None else analyses.as_report()}
        click.echo(json.dumps({**qa_json(scores), **counts, **extra}))
    else:
        click.echo(format_table(scores))
        if analyses is not None:
            echo_diagnostics(analyses)
    sys.stdout.flush()
    if report.failed:
        raise PartialFailure(
            f"{report.failed} of {len(report.results)} questions failed (scored as <None>)"
        )

"""The QA evaluation workflow: what ``eval qa`` does, for every front end.

Reads the questions (and the judgements the diagnostics use) before any LLM call, answers
them with SEEK or a baseline (resumably, with a checkpoint), scores the answers as the
papers do (Cover-EM, EM, token F1), and, when asked, computes the SEEK paper's analyses
and DIG, writes the predictions and the HTML report.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from sira_seek.corpus import ReadReport, read_qrels
from sira_seek.llm.batch_rounds import batch_round
from sira_seek.metrics.information_gain import DigParameters, InformationGains
from sira_seek.metrics.qa import AnswerExtraction, QAScores, score_predictions
from sira_seek.metrics.seek_diagnostics import SeekDiagnostics
from sira_seek.redaction import write_masked_text
from sira_seek.seek.batch import BatchReport
from sira_seek.seek.settings import SeekSettings

from .ask import retriever_for
from .errors import InvalidInput, classified
from .progress import Progress, QuestionProgress, note_skipped
from .request_base import WorkflowRequest
from .seek_analyses import (
    AnalysisAnswers,
    answer_closed_book,
    ask_analysis_answers,
    diagnose,
    read_closed_book,
    retrieved_passages,
)
from .sira_setup import BackendSource, RetrievalMethod

logger = logging.getLogger(__name__)


class QAEvaluationRequest(WorkflowRequest):
    """A QA evaluation: the questions, the method and its settings, and which outputs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    questions: Path
    index: str | None = None
    settings: SeekSettings = Field(default_factory=SeekSettings)
    llm: str | None = None
    retriever: RetrievalMethod = "bm25"
    expansions: Path | None = None
    embedder: str | None = None
    """The embedder spec: --retriever dense/hybrid embed sub-queries with it, and the
    analyses' sub-query similarity is its cosine (the SEEK paper's §5.3 reading; without one,
    the named token-overlap fallback)."""
    use_cache: bool | None = None
    limit: StrictInt | None = Field(default=None, ge=1)
    strict: bool = True
    concurrency: StrictInt = Field(default=4, ge=1, le=1024)
    checkpoint: Path | None = None
    predictions: Path | None = None
    extraction: AnswerExtraction = "tagged"
    diagnostics: bool = False
    dig: DigParameters = Field(default_factory=DigParameters)
    qrels: Path | None = None
    report_html: Path | None = None
    per_iteration: bool = False
    slot_ablation: bool = False
    slot_ablation_slots: StrictInt | None = Field(default=None, ge=1)
    closed_book_predictions: Path | None = None
    """SEEK Table 3: a closed-book run's answers (``eval qa --method vanilla-llm
    --predictions``) deciding the knowledge conflict / utilization populations."""
    closed_book: bool = False
    """SEEK Table 3 with the closed-book answers asked on the spot (vanilla LLM, same LLM)."""
    judge_llm: str | None = None
    """SEEK §5.4: the judge LLM spec rating each knowledge context 0-5 (batch: included)."""

    def checked(self) -> QAEvaluationRequest:
        """Qrels, an HTML report, per-iteration answers and the slot ablation are parts or
        outputs of the analyses: asking for one asks for them."""
        if (
            self.qrels is not None
            or self.report_html is not None
            or (self.per_iteration or self.slot_ablation)
            or (self.closed_book or self.judge_llm is not None)
            or self.closed_book_predictions is not None
        ):
            return self.model_copy(update={"diagnostics": True})
        return self


class QAEvaluation(BaseModel):
    """The run (every result), its LLM usage, the scores and the analyses (when asked)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    report: BatchReport
    usage: dict[str, Any]
    scores: QAScores
    diagnostics: SeekDiagnostics | None = None
    skipped: list[str] = Field(default_factory=list)


def evaluate_qa(
    source: BackendSource | None,
    request: QAEvaluationRequest,
    *,
    progress: Progress | None = None,
) -> QAEvaluation:
    """Answer and score ``request.questions``.

    ``progress`` hears the bad lines a lenient read skipped (before any LLM call), the
    questions in all once the checkpoint is read (those it holds as resumed), then each
    finished question, a failed one with its error. ``source`` may be ``None`` for
    closed-book methods. Failed questions are in the report (``report.failed``) and score as
    ``<None>``; they do not raise.

    With ``llm="batch:DIR#MODEL"`` the run goes in offline rounds (``llm.batch_rounds``):
    while some question waits for an answer, the round's requests are written and
    ``WaitingForBatch`` raised, naming the file (finished questions are checkpointed as
    usual); the same call once the round's output is there goes on from there.
    """
    from sira_seek.llm.settings import LLMSettings
    from sira_seek.seek.questions import read_questions

    skipped = ReadReport()
    questions = read_questions(
        request.questions, limit=request.limit, strict=request.strict, report=skipped
    )
    qrels = _read_qrels(request.qrels, strict=request.strict, report=skipped)
    note_skipped(progress, [str(bad) for bad in skipped.bad])
    if not questions:
        raise InvalidInput("no usable question (a JSON object with `question`)", field="questions")
    if request.closed_book and request.closed_book_predictions is not None:
        raise InvalidInput(
            "give the closed-book answers as a file or ask them on the spot, not both",
            field="closed_book",
        )
    closed = (
        None
        if request.closed_book_predictions is None
        else read_closed_book(request.closed_book_predictions, request.extraction)
    )
    capped = LLMSettings().in_flight_cap(request.concurrency)
    if capped is not None:
        logger.warning("%s", capped)
    judge_spec = request.judge_llm if request.diagnostics else None
    with batch_round(request.llm), batch_round(judge_spec), classified():
        retriever = retriever_for(
            source,
            method=request.settings.method,
            index=request.index,
            retriever=request.retriever,
            llm=request.llm,
            expansions=request.expansions,
            embedder=request.embedder,
        )
        report, usage, gains, answers = asyncio.run(
            _answer(request, retriever, questions, progress)
        )
        if answers is not None:
            answers.passages = retrieved_passages(source, request.index, report.results)
            if closed is not None and request.closed_book_predictions is not None:
                answers.closed_book = closed
                answers.closed_book_source = request.closed_book_predictions.name
    return _outputs(request, report, usage, gains, qrels, skipped, answers)


def _read_qrels(
    path: Path | None, *, strict: bool, report: ReadReport
) -> dict[str, dict[str, int]] | None:
    """The diagnostics' judgements, read before any question is asked."""
    if path is None:
        return None
    qrels = read_qrels(path, report, strict=strict)
    if not qrels:
        raise InvalidInput("no usable judgement (query-id corpus-id score)", field="qrels")
    return qrels


async def _answer(
    request: QAEvaluationRequest,
    retriever: Any,
    questions: list[Any],
    progress: Progress | None,
) -> tuple[BatchReport, dict[str, Any], InformationGains | None, AnalysisAnswers | None]:
    from sira_seek.llm.scoring import find_scorer
    from sira_seek.seek.api import open_session
    from sira_seek.seek.checkpoint import CheckpointMismatchError
    from sira_seek.seek.information_gain import information_gains
    from sira_seek.seek.knowledge_judge import judge_run

    session = open_session(
        retriever=retriever,
        llm_spec=request.llm,
        settings=request.settings,
        use_cache=request.use_cache,
        record_iterations=request.per_iteration,
    )
    shown = QuestionProgress(progress) if progress is not None else None
    try:
        try:
            report, closed = await asyncio.gather(
                session.answer_many(
                    questions,
                    concurrency=request.concurrency,
                    checkpoint=request.checkpoint,
                    on_result=shown.result if shown is not None else None,
                    on_start=shown.start if shown is not None else None,
                ),
                _closed_book(request, questions),
            )
        except CheckpointMismatchError as exc:
            raise InvalidInput(str(exc), field="checkpoint") from None
        usage = dict(session.ledger.summary())  # the method's cost, not DIG's scoring
        gains = None
        if request.diagnostics and not report.waiting:
            gains = await information_gains(
                find_scorer(session.llm),
                report.results,
                request.settings,
                concurrency=request.concurrency,
                backend=session.llm.backend,
                parameters=request.dig,
            )
        answers = None
        if gains is not None and not (closed is not None and closed.waiting):
            answers = await ask_analysis_answers(session, report.results, request)
            if closed is not None:
                answers.closed_book = [
                    r.prediction_record(request.extraction) for r in closed.results
                ]
                answers.closed_book_source = "vanilla-llm run on the spot with the same LLM"
            if request.judge_llm is not None:
                answers.judgement = await judge_run(
                    request.judge_llm,
                    report.results,
                    concurrency=request.concurrency,
                    use_cache=request.use_cache,
                )
    finally:
        await session.aclose()
    return report, usage, gains, answers


async def _closed_book(request: QAEvaluationRequest, questions: list[Any]) -> BatchReport | None:
    """The on-the-spot closed-book answers of Table 3 (None: not asked), beside the run."""
    if not (request.closed_book and request.diagnostics):
        return None
    return await answer_closed_book(request, questions)


def _outputs(
    request: QAEvaluationRequest,
    report: BatchReport,
    usage: dict[str, Any],
    gains: InformationGains | None,
    qrels: dict[str, dict[str, int]] | None,
    skipped: ReadReport,
    answers: AnalysisAnswers | None = None,
) -> QAEvaluation:
    """Scores, the predictions file, and the analyses (with their HTML report)."""
    from sira_seek.reporting.html_report import render_seek_report

    if request.predictions is not None:
        request.predictions.parent.mkdir(parents=True, exist_ok=True)
        write_masked_text(  # a failed question's error may name the LLM's or cluster's URL
            request.predictions, "".join(r.model_dump_json() + "\n" for r in report.results)
        )
    scores = score_predictions(r.prediction_record(request.extraction) for r in report.results)
    found = None
    if request.diagnostics:
        found = diagnose(request, report, qrels, gains, answers)
        if request.report_html is not None:
            request.report_html.parent.mkdir(parents=True, exist_ok=True)
            name = request.settings.method
            write_masked_text(request.report_html, render_seek_report({name: found}))
    return QAEvaluation(
        report=report,
        usage=usage,
        scores=scores,
        diagnostics=found,
        skipped=[str(b) for b in skipped.bad],
    )


def score_prediction_file(path: Path) -> QAScores:
    """``eval qa-score``: a prediction file scored as written (its ``pred_ans`` is already the
    extracted answer), or ``InvalidInput`` naming the file (and the line) that cannot be."""
    from sira_seek.metrics.qa import PredictionFileError, read_predictions

    try:
        records = read_predictions(path)
    except PredictionFileError as err:
        raise InvalidInput(str(err)) from None
    except OSError as err:
        raise InvalidInput(f"cannot read {path}: {err}") from None
    if not records:
        raise InvalidInput(f"{path}: no predictions to score")
    return score_predictions(records)

"""The SEEK paper's analyses of an ``eval qa`` run, wired: what they need beyond the run.

The analyses are pure functions over plain traces (`sira_seek.metrics.seek_diagnostics`,
`sira_seek.metrics.seek_answer_analyses`); this module gathers their inputs and calls them:

* the texts of the documents the run retrieved (A.5's Recall@5 counts those containing a gold
  answer), fetched from the index afterwards, as ``eval retrieval --qa`` fetches its passages
  (`evaluate.fetch_ranked_passages`);
* the opt-in answers of the per-iteration analysis and the slot ablation
  (`sira_seek.seek.analysis_answers`), asked with the run's own LLM and answer prompt;
* the traces, with those answers, for `seek_diagnostics`;
* SEEK's Table 3 (`sira_seek.metrics.seek_knowledge`): the closed-book answers that decide
  the knowledge conflict / utilization populations, read from a predictions file
  (`read_closed_book`) or answered on the spot by the vanilla LLM with the run's LLM
  (`answer_closed_book`);
* §5.4's judge of the knowledge contexts (`sira_seek.seek.knowledge_judge`);
* the sub-query similarity: the cosine of the request's embedder (``--embedder``), as §5.3
  measures it with Qwen3-Embedding-0.6B, else the named token-overlap fallback
  (`TokenJaccard`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sira_seek.metrics.information_gain import InformationGains
from sira_seek.metrics.qa import AnswerExtraction, PredictionRecord, record_from_mapping
from sira_seek.metrics.seek_answer_analyses import AnalysisCost
from sira_seek.metrics.seek_diagnostics import (
    RECALL_DEPTH,
    TOKEN_JACCARD,
    EmbeddingCosine,
    QuestionTrace,
    SeekDiagnostics,
    SubQuerySimilarity,
    seek_diagnostics,
    sub_queries,
)
from sira_seek.metrics.seek_knowledge import (
    KnowledgeJudgement,
    KnowledgeSplit,
    closed_book_correct,
    knowledge_split,
)
from sira_seek.seek.batch import BatchReport
from sira_seek.seek.results import SeekResult

from .sira_setup import BackendSource, backend_of

if TYPE_CHECKING:
    from .evaluate_qa import QAEvaluationRequest

IDS_PER_FETCH = 500
"""Documents fetched per ``ids`` query (well under the engines' 10,000-hit window)."""


@dataclass
class AnalysisAnswers:
    """The opt-in answers (None: not asked) and what they cost."""

    by_iteration: dict[str, list[str]] | None = None
    by_iteration_cost: AnalysisCost | None = None
    slot_ablation: dict[str, tuple[list[str], str]] | None = None
    slot_ablation_cost: AnalysisCost | None = None
    passages: dict[str, str] | None = None
    judgement: KnowledgeJudgement | None = None
    closed_book: list[PredictionRecord] | None = None
    closed_book_source: str | None = None


async def ask_analysis_answers(
    session: Any, results: Sequence[SeekResult], request: QAEvaluationRequest
) -> AnalysisAnswers:
    """The answers ``--per-iteration`` and ``--slot-ablation`` need, with the session's LLM
    and prompts (the run's own answer prompt)."""
    from sira_seek.seek.analysis_answers import iteration_answers, slot_ablation_answers

    found = AnalysisAnswers()
    llm, prompts = session.llm, session.pipeline.prompts
    n, extraction = request.concurrency, request.extraction
    if request.per_iteration:
        found.by_iteration, found.by_iteration_cost = await iteration_answers(
            llm, prompts, results, concurrency=n, extraction=extraction
        )
    if request.slot_ablation:
        found.slot_ablation, found.slot_ablation_cost = await slot_ablation_answers(
            llm,
            prompts,
            results,
            concurrency=n,
            extraction=extraction,
            seed_slots=request.slot_ablation_slots,
        )
    return found


def read_closed_book(path: Path, extraction: AnswerExtraction) -> list[PredictionRecord]:
    """A closed-book run's answers: the JSONL ``eval qa --method vanilla-llm --predictions``
    writes (one `SeekResult` a line, re-scored with ``extraction``, a failed question as
    ``<None>``), or a ``qa-score`` predictions file (``id``, ``golden_answers``, ``pred``).
    An unusable file is ``InvalidInput`` naming it and the line, before any LLM call."""
    from .errors import InvalidInput

    records: list[PredictionRecord] = []
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise InvalidInput(f"cannot read {path}: {err}", field="closed_book_predictions") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if isinstance(data, dict) and "method" in data:
                records.append(SeekResult.model_validate(data).prediction_record(extraction))
            else:
                records.append(record_from_mapping(data))
        except (ValueError, TypeError) as err:
            raise InvalidInput(
                f"{path} line {number}: not a prediction ({err})", field="closed_book_predictions"
            ) from None
    if not records:
        raise InvalidInput(f"{path}: no closed-book predictions", field="closed_book_predictions")
    return records


async def answer_closed_book(request: QAEvaluationRequest, questions: Sequence[Any]) -> BatchReport:
    """The vanilla LLM (closed-book) over the same questions with the run's LLM spec and
    settings: the run's "same model" of Table 3. In batch rounds its requests join the run's
    rounds (the caller gathers it with the run)."""
    from sira_seek.seek.api import open_session

    settings = request.settings.model_copy(update={"method": "vanilla-llm"})
    session = open_session(
        retriever=None, llm_spec=request.llm, settings=settings, use_cache=request.use_cache
    )
    try:
        return await session.answer_many(questions, concurrency=request.concurrency)
    finally:
        await session.aclose()


def split_of(
    answers: AnalysisAnswers, report: BatchReport, request: QAEvaluationRequest
) -> KnowledgeSplit | None:
    """Table 3 over this run's answers, when closed-book answers were given or asked."""
    if answers.closed_book is None:
        return None
    return knowledge_split(
        (r.prediction_record(request.extraction) for r in report.results),
        closed_book_correct(answers.closed_book),
        answers.closed_book_source or "closed-book run",
    )


def retrieved_passages(
    source: BackendSource | None, index: str | None, results: Sequence[SeekResult]
) -> dict[str, str] | None:
    """doc id -> "title text" of every document in an answered question's top
    ``RECALL_DEPTH`` per step (a document the index no longer holds is ""); None for a run
    without a cluster (closed-book)."""
    from .evaluate import fetch_ranked_passages

    if source is None or index is None:
        return None
    ids = list(
        dict.fromkeys(
            doc
            for result in results
            if result.ok
            for step in result.steps
            for doc in step.retrieved_ids[:RECALL_DEPTH]
        )
    )
    chunks = {str(i): ids[i : i + IDS_PER_FETCH] for i in range(0, len(ids), IDS_PER_FETCH)}
    if not chunks:
        return {}
    texts = fetch_ranked_passages(backend_of(source), index, chunks, depth=IDS_PER_FETCH, batch=10)
    return {
        doc: text
        for key, part in chunks.items()
        for doc, text in zip(part, texts[key], strict=True)
    }


def subquery_similarity_measure(
    embedder_spec: str | None, traces: Sequence[QuestionTrace]
) -> SubQuerySimilarity:
    """The embedder's cosine when one is given (every sub-query embedded in one batch, the
    embedder closed after), named ``embedding_cosine:MODEL``; else `TOKEN_JACCARD`."""
    if embedder_spec is None:
        return TOKEN_JACCARD
    from sira_seek.embed import make_embedder

    texts = list(dict.fromkeys(q for trace in traces if trace.ok for q in sub_queries(trace)))
    embedder = make_embedder(embedder_spec)
    try:
        vectors = dict(zip(texts, embedder.embed_queries(texts) if texts else [], strict=True))
        model = embedder.model
    finally:
        embedder.close()
    return EmbeddingCosine(vectors.__getitem__, name=f"embedding_cosine:{model}")


def diagnose(
    request: QAEvaluationRequest,
    report: BatchReport,
    qrels: dict[str, dict[str, int]] | None,
    gains: InformationGains | None,
    answers: AnalysisAnswers | None,
) -> SeekDiagnostics:
    """`seek_diagnostics` over the run's traces, with every input gathered for it."""
    answers = answers or AnalysisAnswers()
    traces = []
    for result in report.results:
        trace = result.trace(request.extraction)
        update: dict[str, Any] = {}
        if answers.by_iteration is not None:
            update["answers_by_iteration"] = answers.by_iteration.get(result.id)
        if answers.slot_ablation is not None and result.id in answers.slot_ablation:
            removed, without = answers.slot_ablation[result.id]
            update["slot_ablation_answers"] = removed
            update["answer_without_sketch"] = without
        traces.append(trace.model_copy(update=update) if update else trace)
    found = seek_diagnostics(
        traces,
        qrels,
        similarity=subquery_similarity_measure(request.embedder, traces),
        passages=answers.passages,
        wall_s=report.wall_s,
        run_questions=report.answered + report.failed,
        gains=gains,
        per_iteration_cost=answers.by_iteration_cost,
        slot_ablation_cost=answers.slot_ablation_cost,
        seed_slots=request.slot_ablation_slots,
    )
    return found.model_copy(
        update={
            "knowledge_split": split_of(answers, report, request),
            "knowledge_judge": answers.judgement,
        }
    )

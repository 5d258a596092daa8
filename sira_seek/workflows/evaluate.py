"""The retrieval evaluation workflow: what ``eval retrieval`` and ``SiraSeek.evaluate`` do.

One definition of the evaluation outputs: the batched path (a few requests in all) or the
recorded path (query by query, timed, for ``sira-seek report`` and the query log), the
ir_measures metrics, answer coverage@5/@10 against a QA file, and the TREC run file. Inputs
are read and refused here, before any query is sent.

``evaluate_enrichment`` (``eval enrichment``) measures BM25 and SIRA on one index before and
after sira-sync's enrichment, from the same request.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ir_measures import Measure
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
)

from sira_seek.backend import SearchBackend
from sira_seek.corpus import BadInputLineError, Query, ReadReport, read_qrels, read_queries
from sira_seek.documents import fetch_documents_many, missing_ids
from sira_seek.llm.batch_rounds import batch_round
from sira_seek.metrics.coverage import (
    COVERAGE_CUTOFFS,
    answer_coverage,
    coverage_key,
    passage_text,
)
from sira_seek.metrics.retrieval import DEFAULT_MEASURES, Run, evaluate_run, parse_measures
from sira_seek.metrics.run_record import RunRecord
from sira_seek.metrics.trec_run import write_trec_run
from sira_seek.sira.evaluation import RerankedRun, bm25_run, rerank_run, sira_run
from sira_seek.sira.evaluation import evaluate_enrichment as enrichment_rows
from sira_seek.sira.expansions import REPORTED_IN_RESULT, QueryExpander
from sira_seek.sira.rerank import LLMReranker
from sira_seek.sira.settings import MAX_RERANK, SiraSettings, Task

from .errors import InvalidInput, NotFound, classified
from .fields import EMBEDDER_HELP, NUM_CANDIDATES_HELP, NumCandidates, Tau, Weight
from .methods import method_spec
from .progress import Progress, advancer, note_skipped
from .recorded import recorded_run
from .request_base import ON_LLM_FAILURE_HELP, OnLLMFailure
from .search import failure_policy, fallback_note
from .sira_setup import (
    BackendSource,
    Expansions,
    RetrievalMethod,
    SiraRequest,
    backend_of,
    choose_expander,
    choose_reranker,
)

Judgements = Mapping[str, Mapping[str, int]]
logger = logging.getLogger(__name__)


class RetrievalEvaluationRequest(SiraRequest):
    """An evaluation: which index and method, the judged queries, and which outputs."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    index: str
    queries: Path | list[Query]
    qrels: Path | dict[str, dict[str, int]]
    method: RetrievalMethod = "bm25"
    expansions: Path | dict[str, list[str]] | None = None
    llm: str | None = None
    tau: Tau | None = None
    weight: Weight | None = None
    task: Task | None = None
    rerank: StrictInt | None = Field(
        default=None,
        ge=0,
        le=MAX_RERANK,
        description="LLM-rerank every query's top N by relevance to the query before scoring "
        "(needs llm); 0 = off; unset: method sira with llm reranks the top 10 (SIRA §3.1), "
        "anything else reranks nothing.",
    )
    measures: str | None = Field(
        default=None, description='ir_measures strings, e.g. "nDCG@10,R@100" (default 3).'
    )
    answers: Path | dict[str, list[str]] | None = Field(
        default=None, description="Gold answers (a QA JSONL or a table) for coverage@5/@10."
    )
    strict: bool = True
    name: str | None = None
    save_run: Path | None = None
    run_file: Path | None = None
    log_prefix: str | None = None
    on_llm_failure: OnLLMFailure = Field(default="error", description=ON_LLM_FAILURE_HELP)
    num_candidates: NumCandidates | None = Field(default=None, description=NUM_CANDIDATES_HELP)
    embedder: str | None = Field(default=None, description=EMBEDDER_HELP)

    @classmethod
    def coerce(cls, values: dict[str, Any]) -> dict[str, Any]:
        """Mappings and sequences of any kind become the fields' dicts and lists."""
        for key in ("expansions", "answers"):
            if isinstance(values.get(key), Mapping):
                values[key] = {str(k): list(v) for k, v in values[key].items()}
        if isinstance(values.get("qrels"), Mapping):
            values["qrels"] = {q: dict(d) for q, d in values["qrels"].items()}
        if values.get("queries") is not None and not isinstance(values["queries"], Path):
            values["queries"] = list(values["queries"])
        return values

    @property
    def run_name(self) -> str:
        return self.name or self.method

    def measure_map(self) -> dict[str, Measure]:
        if self.measures is None:
            return dict(DEFAULT_MEASURES)
        try:
            return parse_measures(self.measures)
        except ValueError as exc:
            raise InvalidInput(str(exc), field="measures") from None


class RetrievalEvaluation(BaseModel):
    """The metrics (ir_measures canonical names, ``coverage@5/@10`` null without answers,
    ``queries``, ``fallbacks``: the SIRA queries that ran as plain BM25 because their phrase
    source gave nothing, 0 for BM25), and the input lines a lenient read skipped."""

    metrics: dict[str, float | int | None]
    skipped: list[str] = Field(default_factory=list)
    run_file_lines: int | None = None
    notes: list[str] = Field(
        default_factory=list, description="E.g. rerank answers that could not be used."
    )


def read_inputs(
    request: RetrievalEvaluationRequest, report: ReadReport
) -> tuple[list[Query], dict[str, dict[str, int]], dict[str, list[str]] | None]:
    """Queries, judgements and answers, or ``InvalidInput`` before any query is sent.

    Files are read whole first, so one error names every bad line of both. Strict: any bad
    line stops. Lenient: bad lines land in ``report``. Nothing left to evaluate (no query, no
    judgement, no query with a judgement) is an error too: a mean over nothing is NaN.
    """
    found: list[Query]
    if isinstance(request.queries, Path):
        found = read_queries(request.queries, report, strict=False)
    else:
        found = list(request.queries)
    if isinstance(request.qrels, Path):
        judgements = read_qrels(request.qrels, report, strict=False)
    else:
        judgements = {q: dict(d) for q, d in request.qrels.items()}
    if request.strict and report.bad:
        error = BadInputLineError(report.bad)
        raise InvalidInput(f"{error}\nnothing was evaluated; --no-strict skips bad lines")
    if not found:
        raise InvalidInput("no usable query (a JSON object with `_id` and `text`)", field="queries")
    if not judgements:
        raise InvalidInput("no usable judgement (query-id corpus-id score)", field="qrels")
    if not any(q.id in judgements for q in found):
        raise InvalidInput(
            f"none of the {len(found)} queries has a judgement in the qrels", field="qrels"
        )
    answers = _read_answers(request, report)
    judged = [q for q in found if q.id in judgements]
    if answers is not None and not any(answers.get(q.id) for q in judged):
        raise InvalidInput(
            "no evaluated query has a gold answer here (ids must match)", field="answers"
        )
    return found, judgements, answers


def _read_answers(
    request: RetrievalEvaluationRequest, report: ReadReport
) -> dict[str, list[str]] | None:
    from sira_seek.seek.questions import read_questions

    if request.answers is None:
        return None
    if not isinstance(request.answers, Path):
        return {k: list(v) for k, v in request.answers.items()}
    questions = read_questions(request.answers, strict=request.strict, report=report)
    if not questions:
        raise InvalidInput("no usable question (a JSON object with `question`)", field="answers")
    return {q.id: list(q.golden_answers) for q in questions}


def finite_metrics(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """``metrics`` unchanged, or ``InvalidInput`` when a value is NaN or infinite: JSON must
    stay valid, and a NaN mean only ever comes from scoring nothing."""
    broken = [k for k, v in metrics.items() if isinstance(v, float) and not math.isfinite(v)]
    if broken:
        raise InvalidInput(
            f"no score for {', '.join(broken)}: nothing in the inputs could be scored"
        )
    return dict(metrics)


def evaluate_retrieval(
    source: BackendSource,
    request: RetrievalEvaluationRequest,
    *,
    progress: Progress | None = None,
) -> RetrievalEvaluation:
    """Evaluate ``request.method`` on ``request.index``; with ``request.rerank`` N, every
    query's top N is reranked by the LLM before scoring (``sira.evaluation.rerank_run``).

    ``progress`` hears the bad lines a lenient read skipped (before any query runs), then,
    where the queries go one at a time (an LLM per query, a recorded run, a rerank: worth a
    bar), the judged queries' count and each finished query; a batched run without an LLM
    takes a few requests in all and reports no count.

    With ``llm="batch:DIR#MODEL"`` the LLM calls go in offline rounds (``llm.batch_rounds``):
    every query's expansion in one round, then every query's rerank; ``WaitingForBatch``
    names each round's file, and the same call once its output is there goes on.
    """
    with batch_round(request.llm):
        return _evaluate_retrieval(source, request, progress)


def _evaluate_retrieval(
    source: BackendSource,
    request: RetrievalEvaluationRequest,
    progress: Progress | None,
) -> RetrievalEvaluation:
    report = ReadReport()
    measures = request.measure_map()
    settings = request.settings()
    all_queries, judgements, answers = read_inputs(request, report)
    expansions: Expansions | None = request.expansions
    expander = choose_expander(
        request.method,
        expansions=expansions,
        llm=request.llm,
        task=settings.task,
        strict=request.strict,
        report=report,
        allow_both=settings.rerank_top_n > 0,
    )
    note_skipped(progress, [str(bad) for bad in report.bad])
    models = _Models(expander, request)
    try:
        with classified():
            backend = backend_of(source)
            _require_index(backend, request.index)
            models.reranker = choose_reranker(request.llm, settings.rerank_top_n)
            inputs = (all_queries, judgements, answers)
            return _evaluate(
                backend, request, inputs, models, settings, measures, report, progress
            )  # fmt: skip
    finally:
        models.close()


class _Models:
    """The LLM-backed pieces an evaluation owns: the phrase source (``expander``, run under the
    request's policy for a failing LLM as ``policy``, which counts the fallbacks) and the
    reranking model."""

    def __init__(self, expander: QueryExpander | None, request: RetrievalEvaluationRequest) -> None:
        self.expander = expander
        self.policy = failure_policy(expander, request.on_llm_failure, request.llm)
        self.stop_when_down = request.on_llm_failure == "error"
        self.reranker: LLMReranker | None = None

    @property
    def fallbacks(self) -> int:
        return self.policy.fallbacks if self.policy is not None else 0

    def close(self) -> None:
        if self.expander is not None:
            self.expander.close()
        if self.reranker is not None:
            self.reranker.close()


def _batched_run(
    backend: SearchBackend,
    request: RetrievalEvaluationRequest,
    judged: list[Query],
    models: _Models,
    settings: SiraSettings,
    progress: Progress | None,
) -> Run:
    """Every judged query's top 100, batched: through SIRA's retriever when the method
    expands the query or uses vectors, else plain BM25 in ``_msearch`` batches."""
    if models.policy is None and method_spec(request.method).vectors == "none":
        return bm25_run(backend, request.index, judged)
    return sira_run(
        backend,
        request.index,
        judged,
        expander=models.policy,
        settings=settings,
        on_progress=advancer(progress),
        method=request.method,
    )


def _require_index(backend: SearchBackend, index: str) -> None:
    if not backend.index_exists(index):
        raise NotFound(
            f"index {index!r} does not exist: ingest a corpus into it first", field="index"
        )


def _evaluate(
    backend: SearchBackend,
    request: RetrievalEvaluationRequest,
    inputs: tuple[list[Query], dict[str, dict[str, int]], dict[str, list[str]] | None],
    models: _Models,
    settings: SiraSettings,
    measures: dict[str, Measure],
    report: ReadReport,
    progress: Progress | None,
) -> RetrievalEvaluation:
    all_queries, judgements, answers = inputs
    judged = [q for q in all_queries if q.id in judgements]
    recorded = request.save_run is not None or request.log_prefix is not None
    reranker = models.reranker
    one_by_one = method_spec(request.method).calls_llm or recorded or reranker is not None
    counted = progress if one_by_one else None
    if counted is not None:
        counted.start(len(judged))
    # With a rerank the bar counts reranked queries (the slow part), not expansions.
    retrieval_progress = counted if reranker is None else None
    rerank = None
    if reranker is not None:
        rerank = _RerankStage(
            backend, request.index, judged, reranker, settings, counted, models.stop_when_down
        )
    run, record, metrics = _retrieve(
        backend, request, inputs, models, settings, measures, recorded, retrieval_progress, rerank
    )
    notes: list[str] = []
    if models.fallbacks:
        notes.append(_fallback_note(request, models, len(judged)))
    if rerank is not None:
        notes.append(rerank_ran_note(request.rerank, settings.rerank_top_n))
        notes += rerank.notes
    # Which stages ran is part of the figures: a reranked run and a plain one differ.
    metrics["rerank"] = settings.rerank_top_n if rerank is not None else 0
    coverage = _coverage(backend, request.index, run, answers)
    metrics.update(coverage)
    metrics = finite_metrics(metrics)
    if record is not None and request.save_run is not None:
        record.metrics.update({k: v for k, v in coverage.items() if v is not None})
        record.save(request.save_run)
    return RetrievalEvaluation(
        metrics=metrics,
        skipped=[str(b) for b in report.bad],
        run_file_lines=_write_run_file(run, request),
        notes=notes,
    )


def _retrieve(
    backend: SearchBackend,
    request: RetrievalEvaluationRequest,
    inputs: tuple[list[Query], dict[str, dict[str, int]], dict[str, list[str]] | None],
    models: _Models,
    settings: SiraSettings,
    measures: dict[str, Measure],
    recorded: bool,
    retrieval_progress: Progress | None,
    rerank: _RerankStage | None,
) -> tuple[Run, RunRecord | None, dict[str, Any]]:
    """The (reranked) run, its record when one is kept, and its scores: query by query when
    the run is saved or logged (real per-query latencies), else batched (faster)."""
    all_queries, judgements, _ = inputs
    if recorded:
        record = recorded_run(
            backend,
            request.index,
            all_queries,
            judgements,
            method=request.method,
            expander=models.policy,
            settings=settings,
            name=request.run_name,
            log_prefix=request.log_prefix,
            measures=measures,
            progress=retrieval_progress,
            rerank=rerank,
        )
        metrics: dict[str, Any] = {
            **record.metrics,
            "queries": len(record.per_query),
            "fallbacks": models.fallbacks,
        }
        return record.ranking, record, metrics
    judged = [q for q in all_queries if q.id in judgements]
    run = _batched_run(backend, request, judged, models, settings, retrieval_progress)
    if rerank is not None:
        run = rerank(run).run
    metrics = {
        **evaluate_run(run, judgements, measures),
        "queries": len(judged),
        "fallbacks": models.fallbacks,
    }
    return run, None, metrics


def _fallback_note(request: RetrievalEvaluationRequest, models: _Models, judged: int) -> str:
    """The note (also logged) that some queries fell back to BM25, so their figures are not
    the method's; it names the circuit breaker's state when one tripped."""
    note = (
        f"{fallback_note(request.method)} for {models.fallbacks} of {judged} queries: "
        "their figures are BM25's (the LLM failed or the phrase source had no entry)"
    )
    if models.policy is not None and models.policy.circuit is not None:
        note += f"; {models.policy.circuit.describe()}"
    logger.warning("%s (%s)", note, request.index, extra=REPORTED_IN_RESULT)
    return note


def _write_run_file(run: Run, request: RetrievalEvaluationRequest) -> int | None:
    """The TREC run file when asked (its line count), an unwritable path as bad input."""
    if request.run_file is None:
        return None
    try:
        return write_trec_run(run, request.run_file, tag=request.run_name)
    except ValueError as exc:
        raise InvalidInput(str(exc), field="run_file") from None


def rerank_ran_note(asked: int | None, depth: int) -> str:
    """The note saying every query's top ``depth`` was reranked, and why (asked, or SIRA's
    default pipeline when the request named no depth)."""
    why = (
        "asked (--rerank / rerank)"
        if asked is not None
        else "SIRA's default with an LLM (§3.1); --rerank 0 / rerank=0 turns it off"
    )
    return (
        f"LLM rerank of every query's top {depth} by relevance to the query before scoring: {why}"
    )


class _RerankStage:
    """``run -> reranked run`` for the evaluated queries, keeping the notes it produced."""

    def __init__(
        self,
        backend: SearchBackend,
        index: str,
        queries: list[Query],
        reranker: LLMReranker,
        settings: SiraSettings,
        progress: Progress | None,
        stop_when_down: bool,
    ) -> None:
        self.backend, self.index, self.queries = backend, index, queries
        self.reranker, self.top_n, self.progress = reranker, settings.rerank_top_n, progress
        self.stop_when_down = stop_when_down
        self.notes: list[str] = []

    def __call__(self, run: Run) -> RerankedRun:
        done = rerank_run(
            self.backend, self.index, self.queries, run, self.reranker,
            top_n=self.top_n, on_progress=advancer(self.progress),
            stop_when_down=self.stop_when_down,
        )  # fmt: skip
        self.notes += done.notes
        return done


def _coverage(
    backend: SearchBackend,
    index: str,
    run: Mapping[str, Mapping[str, float]],
    answers: dict[str, list[str]] | None,
) -> dict[str, float | None]:
    """``coverage@5``/``coverage@10`` of the run's rankings (null without answers: the keys
    never depend on the inputs)."""
    if answers is None:
        return {coverage_key(k): None for k in COVERAGE_CUTOFFS}
    ranked = {qid: list(hits) for qid, hits in run.items() if qid in answers}
    if not any(answers[qid] for qid in ranked):
        raise InvalidInput(
            "no evaluated query has a gold answer in the answers (ids must match)",
            field="answers",
        )
    found = answer_coverage(fetch_ranked_passages(backend, index, ranked), answers)
    return dict(found.as_metrics())


def fetch_ranked_passages(
    backend: SearchBackend,
    index: str,
    ranking: Mapping[str, Sequence[str]],
    *,
    depth: int = max(COVERAGE_CUTOFFS),
    batch: int = 50,
) -> dict[str, list[str]]:
    """qid -> the texts of its top ``depth`` hits, in the ranking's order (what coverage reads).

    Runs are scored without ``_source``, so the texts are fetched afterwards: one ``ids`` query
    per question, ``batch`` questions per ``_msearch``. A hit the index no longer holds counts
    as an empty passage (it keeps its rank, so later passages do not move up a place).
    """
    ids_per_query = {qid: list(ids)[:depth] for qid, ids in ranking.items()}
    found = fetch_documents_many(backend, index, ids_per_query, batch=batch)
    out: dict[str, list[str]] = {}
    for qid, ids in ids_per_query.items():
        missing = missing_ids(ids, found[qid])
        if missing:
            logger.warning("%s: %d ranked document(s) not found in %s", qid, len(missing), index)
        out[qid] = [passage_text(found[qid].get(i)) for i in ids]
    return out


class EnrichmentEvaluation(BaseModel):
    """BM25 (and SIRA, with an expander) on one index before and after enrichment: one row of
    metrics per ``"<method> <side> enrichment"`` label, and the index's counts."""

    index: str
    enriched_docs: int = Field(description="Documents that carry enrichment phrases.")
    deleted_docs: int = Field(description="Deleted copies still counted in term statistics.")
    rows: dict[str, dict[str, float | int]]
    skipped: list[str] = Field(default_factory=list)
    fallbacks: int = Field(
        default=0,
        description="SIRA searches (one per query and side) that ran as plain BM25 because "
        "their phrase source gave nothing.",
    )

    def to_json(self) -> dict[str, Any]:
        """``eval enrichment --json``: one row per (method, side) instead of labels as keys."""
        out_rows = []
        for label, metrics in self.rows.items():
            method, side, _ = label.split(" ", 2)  # "bm25 before enrichment"
            values = {k: v for k, v in metrics.items() if k not in _COUNTS}
            out_rows.append({"method": method, "enrichment": side, **values})
        return {
            "index": self.index,
            "enriched_docs": self.enriched_docs,
            "deleted_docs": self.deleted_docs,
            "fallbacks": self.fallbacks,
            "rows": out_rows,
        }


_COUNTS = ("enriched_docs", "deleted_docs")


def evaluate_enrichment(
    source: BackendSource,
    request: RetrievalEvaluationRequest,
    *,
    progress: Progress | None = None,
) -> EnrichmentEvaluation:
    """BM25 and SIRA on ``request.index`` searching the source text only ("before") and with
    the enrichment fields ("after"); SIRA rows need ``request.method == "sira"`` (phrases
    from ``request.expansions`` or ``request.llm``).

    ``progress`` hears the bad lines a lenient read skipped, before any query runs.
    """
    if request.rerank:
        raise InvalidInput("eval enrichment measures retrieval without a rerank", field="rerank")
    if request.method not in ("bm25", "sira"):
        raise InvalidInput("eval enrichment compares BM25 and SIRA only", field="method")
    report = ReadReport()
    found, judgements, _ = read_inputs(request, report)
    settings = request.settings()
    expander = choose_expander(
        request.method,
        expansions=request.expansions,
        llm=request.llm,
        task=settings.task,
        strict=request.strict,
        report=report,
    )
    note_skipped(progress, [str(bad) for bad in report.bad])
    policy = failure_policy(expander, request.on_llm_failure, request.llm)
    try:
        with classified():
            rows = enrichment_rows(
                backend_of(source), request.index, found, judgements,
                expander=policy, settings=settings,
            )  # fmt: skip
    finally:
        if expander is not None:
            expander.close()
    for metrics in rows.values():
        finite_metrics(metrics)
    first = next(iter(rows.values()))
    return EnrichmentEvaluation(
        index=request.index,
        enriched_docs=int(first["enriched_docs"]),
        deleted_docs=int(first["deleted_docs"]),
        rows=rows,
        skipped=[str(bad) for bad in report.bad],
        fallbacks=policy.fallbacks if policy is not None else 0,
    )

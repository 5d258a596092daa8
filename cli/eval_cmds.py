"""`sira-seek eval ...`: retrieval metrics (ir-measures) and QA scores."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click
from ir_measures import Measure

from sira_seek.corpus import BadInputLineError, Query, ReadReport, read_qrels, read_queries
from sira_seek.evaluation.coverage import (
    COVERAGE_CUTOFFS,
    answer_coverage,
    coverage_key,
    fetch_ranked_passages,
)
from sira_seek.evaluation.recorded import recorded_run
from sira_seek.evaluation.retrieval import (
    DEFAULT_MEASURES,
    Run,
    bm25_run,
    evaluate_run,
    parse_measures,
)
from sira_seek.evaluation.run_record import RunRecord
from sira_seek.evaluation.trec_run import write_trec_run
from sira_seek.seek.questions import read_questions
from sira_seek.sira.evaluation import evaluate_enrichment, sira_run

from .exit_codes import BadInput
from .options import (
    backend_from_options,
    cluster_options,
    echo_skipped,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
    strict_option,
)
from .progress import progress_bar
from .search_cmd import build_expander, sira_options, sira_settings


def _measures_option(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> dict[str, Measure]:
    """Parse --measures at the command line, so a typo fails before any query is sent."""
    if value is None:
        return dict(DEFAULT_MEASURES)
    try:
        return parse_measures(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


@click.group("eval")
def eval_group() -> None:
    """Evaluate retrieval or answers."""


def read_evaluation_inputs(
    queries: Path, qrels: Path, *, strict: bool
) -> tuple[list[Query], dict[str, dict[str, int]]]:
    """Queries and judgements, or a clear stop before any query is sent.

    Both files are read whole first, so one error names every bad line of both. Strict: any
    bad line stops the command (exit 2). Lenient: bad lines are listed on stderr and skipped.
    Either way, nothing left to evaluate (no query, no judgement, or no query with a
    judgement) is exit 2: a mean over nothing would print NaN, which is not even JSON.
    """
    skipped = ReadReport()
    found = read_queries(queries, skipped, strict=False)
    judgements = read_qrels(qrels, skipped, strict=False)
    if strict and skipped.bad:
        error = BadInputLineError(skipped.bad)
        raise BadInput(f"{error}\nnothing was evaluated; --no-strict skips bad lines") from error
    echo_skipped(skipped)
    if not found:
        raise BadInput(f"{queries}: no usable query (a JSON object with `_id` and `text`)")
    if not judgements:
        raise BadInput(f"{qrels}: no usable judgement (query-id corpus-id score)")
    if not any(q.id in judgements for q in found):
        raise BadInput(f"none of the {len(found)} queries in {queries} has a judgement in {qrels}")
    return found, judgements


def finite_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """``metrics`` unchanged, or exit 2 when a value is NaN or infinite: --json must stay
    valid JSON, and a NaN mean only ever comes from scoring nothing."""
    broken = [k for k, v in metrics.items() if isinstance(v, float) and not math.isfinite(v)]
    if broken:
        raise BadInput(f"no score for {', '.join(broken)}: nothing in the inputs could be scored")
    return metrics


@eval_group.command("retrieval")
@click.option("--index", required=True)
@click.option("--queries", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--qrels", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--method", type=click.Choice(["bm25", "sira"]), default="bm25", show_default=True)
@sira_options
@strict_option
@json_option("Print the metrics (and `queries`) as one JSON object.")
@no_progress_option
@click.option(
    "--save-run",
    type=click.Path(path_type=Path),
    default=None,
    help="Write per-query results, latencies and LLM tokens for `sira-seek report`.",
)
@click.option("--name", "run_name", default=None, help="Run name in reports (default: METHOD).")
@click.option(
    "--run-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the ranking as a six-column TREC run (qid Q0 docid rank score tag; "
    "tag = --name or METHOD) for trec_eval, ir_measures or ranx.",
)
@click.option(
    "--measures",
    "measure_map",
    default=None,
    callback=_measures_option,
    help='ir_measures measure strings, e.g. "nDCG@10,R@100,P@5,AP" (JSON keys are their '
    "canonical names). Default: ndcg@10, recall@10, recall@100.",
)
@click.option(
    "--qa",
    "qa_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="QA JSONL (`golden_answers` or `answer`, ids = query ids): also report answer "
    "coverage@5/@10, the share of questions with a gold answer in the top 5/10 passages.",
)
@click.option(
    "--log-queries", is_flag=True, help="Record every query in the sira-seek-log-* index."
)
@click.option("--log-prefix", default="sira-seek-log-", show_default=True, hidden=True)
@cluster_options
@friendly_errors
def eval_retrieval(
    index: str,
    queries: Path,
    qrels: Path,
    method: str,
    llm_spec: str | None,
    expansions: Path | None,
    tau: float | None,
    weight: float | None,
    task: str | None,
    strict: bool,
    as_json: bool,
    no_progress: bool,
    save_run: Path | None,
    run_name: str | None,
    run_file: Path | None,
    measure_map: dict[str, Measure],
    qa_path: Path | None,
    log_queries: bool,
    log_prefix: str,
    **kw: Any,
) -> None:
    """nDCG@10, Recall@10 and Recall@100 (or --measures) of METHOD over BEIR queries and qrels.

    `--method sira` needs candidate phrases from --expansions FILE or --llm SPEC.
    """
    if method == "bm25" and (llm_spec or expansions):
        raise click.UsageError("--llm / --expansions apply to --method sira only")
    settings = sira_settings(tau, weight, task)
    all_queries, judgements = read_evaluation_inputs(queries, qrels, strict=strict)
    answers = _read_answers(qa_path, strict=strict)
    expander = (
        build_expander(llm_spec, expansions, settings.task, strict=strict)
        if method == "sira"
        else None
    )
    if method == "sira" and expander is None:
        raise click.UsageError("--method sira needs --expansions FILE or --llm SPEC")
    judged = [q for q in all_queries if q.id in judgements]
    if answers is not None and not any(answers.get(q.id) for q in judged):
        raise BadInput(f"{qa_path}: no evaluated query has a gold answer here (ids must match)")
    bar: Any = None
    try:
        backend = backend_from_options(kw)
        if not backend.index_exists(index):
            raise click.ClickException(
                f"index {index!r} does not exist: run `sira-seek ingest` first"
            )
        # A bar where queries go one by one (SIRA's LLM calls, a recorded run); the batched
        # BM25 run takes a few requests in all.
        bar = progress_bar(
            desc=run_name or method,
            total=len(judged),
            unit="query",
            enabled=show_progress(no_progress=no_progress, as_json=as_json)
            and (method == "sira" or save_run is not None or log_queries),
        )
        run: Run
        record: RunRecord | None = None
        if save_run is not None or log_queries:
            record = recorded_run(
                backend,
                index,
                all_queries,
                judgements,
                method=method,
                expander=expander,
                settings=settings,
                name=run_name or method,
                log_prefix=log_prefix if log_queries else None,
                measures=measure_map,
                on_progress=bar.update,
            )
            bar.close()
            metrics: dict[str, Any] = {**record.metrics, "queries": len(record.per_query)}
            run = record.ranking
        else:
            if expander is not None:
                run = sira_run(
                    backend,
                    index,
                    judged,
                    expander=expander,
                    settings=settings,
                    on_progress=bar.update,
                )
                bar.close()
            else:
                run = bm25_run(backend, index, judged)
            metrics = {**evaluate_run(run, judgements, measure_map), "queries": len(judged)}
        coverage = _coverage(backend, index, run, answers)
        metrics.update(coverage)
        if record is not None and save_run is not None:
            record.metrics.update({k: v for k, v in coverage.items() if v is not None})
            record.save(save_run)
        if run_file is not None:
            try:
                write_trec_run(run, run_file, tag=run_name or method)
            except ValueError as exc:
                raise BadInput(str(exc)) from None
    finally:
        if bar is not None:
            bar.close()
        if expander is not None:
            expander.close()
    metrics = finite_metrics(metrics)
    if as_json:
        click.echo(json.dumps(metrics, allow_nan=False))
    else:
        for name, value in metrics.items():
            if value is not None:
                click.echo(f"{name:12s} {value}")


def _read_answers(qa_path: Path | None, *, strict: bool) -> dict[str, list[str]] | None:
    """qid -> gold answers from ``--qa``, read (and refused) before any query is sent."""
    if qa_path is None:
        return None
    skipped = ReadReport()
    questions = read_questions(qa_path, strict=strict, report=skipped)
    echo_skipped(skipped)
    if not questions:
        raise BadInput(f"{qa_path}: no usable question (a JSON object with `question`)")
    return {q.id: list(q.golden_answers) for q in questions}


def _coverage(
    backend: Any, index: str, run: Run, answers: dict[str, list[str]] | None
) -> dict[str, float | None]:
    """``coverage@5``/``coverage@10`` of the run's rankings (null without ``--qa``: JSON keys
    never depend on flags); exit 2 when no evaluated query has a gold answer in the file."""
    if answers is None:
        return {coverage_key(k): None for k in COVERAGE_CUTOFFS}
    ranked = {qid: list(hits) for qid, hits in run.items() if qid in answers}
    if not any(answers[qid] for qid in ranked):
        raise BadInput("no evaluated query has a gold answer in the --qa file (ids must match)")
    found = answer_coverage(fetch_ranked_passages(backend, index, ranked), answers)
    return dict(found.as_metrics())


@eval_group.command("enrichment")
@click.option("--index", required=True)
@click.option("--queries", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--qrels", type=click.Path(exists=True, path_type=Path), required=True)
@sira_options
@strict_option
@json_option("Print the index's counts and one row per method and side as JSON.")
@cluster_options
@friendly_errors
def eval_enrichment(
    index: str,
    queries: Path,
    qrels: Path,
    llm_spec: str | None,
    expansions: Path | None,
    tau: float | None,
    weight: float | None,
    task: str | None,
    strict: bool,
    as_json: bool,
    **kw: Any,
) -> None:
    """BM25 and SIRA on INDEX before and after sira-sync's enrichment, side by side.

    "before" searches only the source text; "after" adds the enrichment fields. Give
    --expansions or --llm for the SIRA rows (BM25 rows alone otherwise).
    """
    settings = sira_settings(tau, weight, task)
    found, judgements = read_evaluation_inputs(queries, qrels, strict=strict)
    expander = build_expander(llm_spec, expansions, settings.task, strict=strict)
    try:
        backend = backend_from_options(kw)
        rows = evaluate_enrichment(
            backend,
            index,
            found,
            judgements,
            expander=expander,
            settings=settings,
        )
    finally:
        if expander is not None:
            expander.close()
    first = next(iter(rows.values()))
    for metrics in rows.values():
        finite_metrics(metrics)
    if as_json:
        click.echo(json.dumps(enrichment_json(index, rows), allow_nan=False))
        return
    click.echo(f"{index}: {int(first['enriched_docs'])} documents carry enrichment")
    if first["deleted_docs"]:
        click.echo(
            f"note: {int(first['deleted_docs'])} deleted copies (left by updates) still count in "
            f"term statistics; `POST {index}/_forcemerge?only_expunge_deletes=true` (or a sync "
            "run with --expunge-deletes) removes them",
            err=True,
        )
    width = max(len(n) for n in rows)
    click.echo(f"{'method':{width}s} {'ndcg@10':>8s} {'recall@10':>10s} {'recall@100':>11s}")
    for name, m in rows.items():
        click.echo(
            f"{name:{width}s} {m['ndcg@10']:8.4f} {m['recall@10']:10.4f} {m['recall@100']:11.4f}"
        )


def enrichment_json(index: str, rows: dict[str, dict[str, float]]) -> dict[str, Any]:
    """`eval enrichment --json`: one row per (method, side) instead of display labels as keys."""
    first = next(iter(rows.values()))
    out_rows = []
    for label, metrics in rows.items():
        method, side, _ = label.split(" ", 2)  # "bm25 before enrichment"
        values = {k: v for k, v in metrics.items() if k not in ("enriched_docs", "deleted_docs")}
        out_rows.append({"method": method, "enrichment": side, **values})
    return {
        "index": index,
        "enriched_docs": int(first["enriched_docs"]),
        "deleted_docs": int(first["deleted_docs"]),
        "rows": out_rows,
    }

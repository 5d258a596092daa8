"""`sira-seek eval ...`: retrieval metrics (ir-measures) and QA scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from sira_seek.workflows.evaluate import (
    EnrichmentEvaluation,
    RetrievalEvaluation,
    RetrievalEvaluationRequest,
    evaluate_enrichment,
    evaluate_retrieval,
)
from sira_seek.workflows.scores import parse_measures

from .options import (
    CLUSTER_KEYS,
    LazyBackend,
    cluster_options,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
    strict_option,
)
from .progress import WorkflowProgress
from .search_cmd import method_option, rerank_option, sira_options, vector_knobs


def _measures_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check --measures as the command line is parsed, so a typo is a usage error naming the
    flag; the workflow reads the same string."""
    if value is not None:
        try:
            parse_measures(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return value


@click.command("retrieval")
@click.option("--index", required=True)
@click.option("--queries", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--qrels", type=click.Path(exists=True, path_type=Path), required=True)
@method_option(inferred=False)
@sira_options
@rerank_option
@strict_option
@json_option("Print the metrics (and `queries`) as one JSON object.")
@no_progress_option
@click.option(
    "--save-run",
    type=click.Path(path_type=Path),
    default=None,
    help="Write per-query results, latencies and LLM tokens for `sira-seek report`.",
)
@click.option("--name", default=None, help="Run name in reports (default: METHOD).")
@click.option(
    "--run-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the ranking as a six-column TREC run (qid Q0 docid rank score tag; "
    "tag = --name or METHOD) for trec_eval, ir_measures or ranx.",
)
@click.option(
    "--measures",
    default=None,
    callback=_measures_option,
    help='ir_measures measure strings, e.g. "nDCG@10,R@100,P@5,AP" (JSON keys are their '
    "canonical names). Default: ndcg@10, recall@10, recall@100.",
)
@click.option(
    "--qa",
    "answers",
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
    as_json: bool, no_progress: bool, log_queries: bool, log_prefix: str, **options: Any
) -> None:
    """nDCG@10, Recall@10 and Recall@100 (or --measures) of METHOD over BEIR queries and qrels.

    `--method sira` needs candidate phrases from --expansions FILE or --llm SPEC;
    `--method hyde` / `cot` (the SIRA paper's LLM baselines) need --llm SPEC;
    `--rerank N --llm SPEC` reranks every query's top N by relevance before scoring.
    """
    cluster = {k: options.pop(k) for k in list(options) if k in CLUSTER_KEYS}
    request = RetrievalEvaluationRequest.build(
        llm=options.pop("llm_spec"),
        log_prefix=log_prefix if log_queries else None,
        **options.pop("on_llm_failure"),
        **vector_knobs(options),
        **options,
    )
    enabled = show_progress(no_progress=no_progress, as_json=as_json)
    # The workflow sizes the bar only where queries go one by one (an LLM per query, a
    # recorded run); the batched BM25 run takes a few requests in all.
    with WorkflowProgress(desc=request.run_name, unit="query", enabled=enabled) as progress:
        result = evaluate_retrieval(LazyBackend(cluster), request, progress=progress)
    _render_retrieval(result, as_json)


def _render_retrieval(result: RetrievalEvaluation, as_json: bool) -> None:
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps(result.metrics, allow_nan=False))
    else:
        for name, value in result.metrics.items():
            if value is not None:
                click.echo(f"{name:12s} {value}")


@click.command("enrichment")
@click.option("--index", required=True)
@click.option("--queries", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--qrels", type=click.Path(exists=True, path_type=Path), required=True)
@sira_options
@strict_option
@json_option("Print the index's counts and one row per method and side as JSON.")
@cluster_options
@friendly_errors
def eval_enrichment(as_json: bool, **options: Any) -> None:
    """BM25 and SIRA on INDEX before and after sira-sync's enrichment, side by side.

    "before" searches only the source text; "after" adds the enrichment fields. Give
    --expansions or --llm for the SIRA rows (BM25 rows alone otherwise).
    """
    cluster = {k: options.pop(k) for k in list(options) if k in CLUSTER_KEYS}
    llm = options.pop("llm_spec")
    method = "sira" if (llm or options["expansions"]) else "bm25"
    policy = {**options.pop("on_llm_failure"), **vector_knobs(options)}
    request = RetrievalEvaluationRequest.build(method=method, llm=llm, **policy, **options)
    skipped = WorkflowProgress(desc="eval enrichment", unit="query", enabled=False)
    done = evaluate_enrichment(LazyBackend(cluster), request, progress=skipped)
    _render_enrichment(done, as_json)


def _render_enrichment(done: EnrichmentEvaluation, as_json: bool) -> None:
    """The JSON object, or the counts (a note about deleted copies on stderr) and a table."""
    if as_json:
        click.echo(json.dumps(done.to_json(), allow_nan=False))
        return
    index, rows = done.index, done.rows
    click.echo(f"{index}: {done.enriched_docs} documents carry enrichment")
    if done.fallbacks:
        click.echo(
            f"note: {done.fallbacks} SIRA searches (one per query and side) ran as plain BM25: "
            "the phrase source gave nothing for them",
            err=True,
        )
    if done.deleted_docs:
        click.echo(
            f"note: {done.deleted_docs} deleted copies (left by updates) still count in "
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

"""`sira-seek eval ...`: retrieval metrics (ir-measures) and QA scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from sira_seek.corpus import ReadReport
from sira_seek.metrics.retrieval import parse_measures
from sira_seek.sira.evaluation import evaluate_enrichment
from sira_seek.workflows.evaluate import (
    RetrievalEvaluationRequest,
    evaluate_retrieval,
    finite_metrics,
    read_inputs,
)
from sira_seek.workflows.sira_setup import choose_expander, sira_settings

from .options import (
    LazyBackend,
    backend_from_options,
    cluster_options,
    echo_lines,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
    strict_option,
)
from .progress import progress_bar
from .search_cmd import sira_options


def _measures_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check --measures as the command line is parsed, so a typo is a usage error naming the
    flag; the workflow reads the same string."""
    if value is not None:
        try:
            parse_measures(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return value


@click.group("eval")
def eval_group() -> None:
    """Evaluate retrieval or answers."""


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
    "measure_spec",
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
    measure_spec: str | None,
    qa_path: Path | None,
    log_queries: bool,
    log_prefix: str,
    **kw: Any,
) -> None:
    """nDCG@10, Recall@10 and Recall@100 (or --measures) of METHOD over BEIR queries and qrels.

    `--method sira` needs candidate phrases from --expansions FILE or --llm SPEC.
    """
    request = RetrievalEvaluationRequest.build(
        index=index,
        queries=queries,
        qrels=qrels,
        method=method,
        expansions=expansions,
        llm=llm_spec,
        tau=tau,
        weight=weight,
        task=task,
        measures=measure_spec,
        answers=qa_path,
        strict=strict,
        name=run_name,
        save_run=save_run,
        run_file=run_file,
        log_prefix=log_prefix if log_queries else None,
    )
    bars: list[Any] = []

    def start(total: int, one_by_one: bool) -> None:
        # A bar where queries go one by one (SIRA's LLM calls, a recorded run); the batched
        # BM25 run takes a few requests in all.
        enabled = show_progress(no_progress=no_progress, as_json=as_json) and one_by_one
        bars.append(progress_bar(desc=request.run_name, total=total, unit="query", enabled=enabled))

    try:
        result = evaluate_retrieval(
            LazyBackend(kw),
            request,
            on_start=start,
            on_progress=lambda n: bars[0].update(n),
            on_skipped=echo_lines,
        )
    finally:
        for bar in bars:
            bar.close()
    if as_json:
        click.echo(json.dumps(result.metrics, allow_nan=False))
    else:
        for name, value in result.metrics.items():
            if value is not None:
                click.echo(f"{name:12s} {value}")


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
    request = RetrievalEvaluationRequest.build(
        index=index, queries=queries, qrels=qrels, tau=tau, weight=weight, task=task,
        strict=strict,
    )  # fmt: skip
    report = ReadReport()
    found, judgements, _ = read_inputs(request, report)
    settings = sira_settings(tau=tau, weight=weight, task=task)
    expander = choose_expander(
        "sira" if (llm_spec or expansions) else "bm25",
        expansions=expansions,
        llm=llm_spec,
        task=settings.task,
        strict=strict,
        report=report,
    )
    echo_lines([str(bad) for bad in report.bad])
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

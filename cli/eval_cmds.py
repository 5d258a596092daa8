"""`sira-seek eval ...`: retrieval metrics (ir-measures) and QA scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from sira_seek.corpus import read_qrels, read_queries
from sira_seek.evaluation.recorded import recorded_run
from sira_seek.evaluation.retrieval import evaluate_bm25
from sira_seek.sira.evaluation import evaluate_enrichment, evaluate_sira

from .options import backend_from_options, cluster_options, friendly_errors
from .search_cmd import build_expander, sira_options, sira_settings


@click.group("eval")
def eval_group() -> None:
    """Evaluate retrieval or answers."""


@eval_group.command("retrieval")
@click.option("--index", required=True)
@click.option("--queries", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--qrels", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--method", type=click.Choice(["bm25", "sira"]), default="bm25", show_default=True)
@sira_options
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--save-run",
    type=click.Path(path_type=Path),
    default=None,
    help="Write per-query results, latencies and LLM tokens for `sira-seek report`.",
)
@click.option("--name", "run_name", default=None, help="Run name in reports (default: METHOD).")
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
    as_json: bool,
    save_run: Path | None,
    run_name: str | None,
    log_queries: bool,
    log_prefix: str,
    **kw: Any,
) -> None:
    """nDCG@10, Recall@10 and Recall@100 of METHOD over BEIR queries and qrels.

    `--method sira` needs candidate phrases from --expansions FILE or --llm SPEC.
    """
    if method == "bm25" and (llm_spec or expansions):
        raise click.UsageError("--llm / --expansions apply to --method sira only")
    settings = sira_settings(tau, weight, task)
    expander = build_expander(llm_spec, expansions, settings.task) if method == "sira" else None
    if method == "sira" and expander is None:
        raise click.UsageError("--method sira needs --expansions FILE or --llm SPEC")
    try:
        backend = backend_from_options(kw)
        if not backend.index_exists(index):
            raise click.ClickException(
                f"index {index!r} does not exist: run `sira-seek ingest` first"
            )
        if save_run is not None or log_queries:
            record = recorded_run(
                backend,
                index,
                read_queries(queries),
                read_qrels(qrels),
                method=method,
                expander=expander,
                settings=settings,
                name=run_name or method,
                log_prefix=log_prefix if log_queries else None,
            )
            metrics = {**record.metrics, "queries": len(record.per_query)}
            if save_run is not None:
                record.save(save_run)
        elif expander is not None:
            metrics = evaluate_sira(
                backend,
                index,
                read_queries(queries),
                read_qrels(qrels),
                expander=expander,
                settings=settings,
            )
        else:
            metrics = evaluate_bm25(backend, index, read_queries(queries), read_qrels(qrels))
    finally:
        if expander is not None:
            expander.close()
    if as_json:
        click.echo(json.dumps(metrics))
    else:
        for name, value in metrics.items():
            click.echo(f"{name:12s} {value}")


@eval_group.command("enrichment")
@click.option("--index", required=True)
@click.option("--queries", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--qrels", type=click.Path(exists=True, path_type=Path), required=True)
@sira_options
@click.option("--json", "as_json", is_flag=True)
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
    as_json: bool,
    **kw: Any,
) -> None:
    """BM25 and SIRA on INDEX before and after sira-sync's enrichment, side by side.

    "before" searches only the source text; "after" adds the enrichment fields. Give
    --expansions or --llm for the SIRA rows (BM25 rows alone otherwise).
    """
    settings = sira_settings(tau, weight, task)
    expander = build_expander(llm_spec, expansions, settings.task)
    try:
        backend = backend_from_options(kw)
        rows = evaluate_enrichment(
            backend,
            index,
            read_queries(queries),
            read_qrels(qrels),
            expander=expander,
            settings=settings,
        )
    finally:
        if expander is not None:
            expander.close()
    if as_json:
        click.echo(json.dumps(rows))
        return
    first = next(iter(rows.values()))
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

"""`sira-seek demo`: the main job on the embedded defaults, start to finish."""

from __future__ import annotations

import json
from pathlib import Path

import click
from tqdm import tqdm

from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.esplugin.local_node import LocalNode
from sira_seek.esplugin.registry import connect
from sira_seek.evaluation.retrieval import evaluate_bm25
from sira_seek.ingest import ingest_corpus

from .options import default_data_dir, friendly_errors


@click.command()
@click.option("--engine", type=click.Choice(["opensearch", "elasticsearch"]), default="opensearch")
@click.option("--url", envvar="SIRA_SEEK_URL", default=None, help="Use this cluster instead.")
@click.option("--data", type=click.Path(path_type=Path), default=None, help="wikimh folder.")
@click.option("--index", default="sira-demo-wikimh", show_default=True)
@click.option("--json", "as_json", is_flag=True)
@friendly_errors
def demo(engine: str, url: str | None, data: Path | None, index: str, as_json: bool) -> None:
    """Start a local node, ingest wikimh, and evaluate BM25 on its HotpotQA questions."""
    data = data or default_data_dir() / "wikimh"
    if not (data / "corpus.jsonl").exists():
        raise click.ClickException(
            f"wikimh data not found at {data}: pass --data or SIRA_SEEK_DATA"
        )
    if url is None:
        click.echo(f"[1/3] starting a local {engine} node ...", err=True)
        url = LocalNode(NodeSettings(), engine).up().url
    backend = connect(ClusterSettings(url=url))
    click.echo(f"      {backend.info.engine} {backend.info.version} at {url}", err=True)
    click.echo(f"[2/3] ingesting {data} into {index} ...", err=True)
    with tqdm(desc="ingest", unit="doc") as bar:
        report = ingest_corpus(backend, index, data, on_progress=bar.update)
    click.echo(
        f"      {report.written} written, {report.unchanged} unchanged, "
        f"{len(report.bad_records)} bad records",
        err=True,
    )
    click.echo("[3/3] BM25 retrieval on the 100 HotpotQA questions ...", err=True)
    metrics = evaluate_bm25(
        backend,
        index,
        read_queries(data / "queries-hotpotqa.jsonl"),
        read_qrels(data / "qrels-hotpotqa.tsv"),
    )
    if as_json:
        click.echo(json.dumps({"bm25": metrics}))
        return
    click.echo(f"\n{'method':8s} {'ndcg@10':>8s} {'recall@10':>10s} {'recall@100':>11s}")
    click.echo(
        f"{'bm25':8s} {metrics['ndcg@10']:8.4f} {metrics['recall@10']:10.4f} "
        f"{metrics['recall@100']:11.4f}"
    )
    click.echo(f"\nThe node keeps running at {url}; stop it with `sira-seek node down`.")

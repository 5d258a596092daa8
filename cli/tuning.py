"""`python -m sira_seek.cli.tuning`: connect to the clusters and run SIRA's tau/w tuning.

The choice itself (dev split, admissibility against weak expansions, the report) is
``sira_seek.sira.tuning.tune``; this command only reads the files, connects to each ``--url``
and prints the report as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.workflows.clusters import connect
from sira_seek.workflows.method_parts import QueryExpander, tune
from sira_seek.workflows.sira_setup import choose_expander

from .options import friendly_errors


@click.command()
@click.option("--url", "urls", multiple=True, required=True)
@click.option("--index", required=True)
@click.option("--data", type=click.Path(path_type=Path), required=True)
@click.option("--queries", "query_file", default="queries-hotpotqa.jsonl")
@click.option("--qrels", "qrels_file", default="qrels-hotpotqa.tsv")
@click.option(
    "--expansions",
    "exp_file",
    default="expansions-hotpotqa.strong-llm.jsonl",
    help="Strong expansions (relative to --data, or a path).",
)
@click.option(
    "--weak-expansions",
    "weak_files",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Expansions of a weak model that must not hurt.",
)
@click.option("--dev", type=int, default=50, show_default=True)
@click.option("--max-loss", type=float, default=0.01, show_default=True)
@friendly_errors  # the --url values may carry user-info: every line it prints is masked
def main(
    urls: tuple[str, ...],
    index: str,
    data: Path,
    query_file: str,
    qrels_file: str,
    exp_file: str,
    weak_files: tuple[Path, ...],
    dev: int,
    max_loss: float,
) -> None:
    queries = read_queries(data / query_file)
    qrels = read_qrels(data / qrels_file)
    strong = _precomputed(data / exp_file)
    weak = {p.name: _precomputed(p) for p in weak_files}
    backends: dict[str, SearchBackend] = {}
    for url in urls:
        backend = connect(ClusterSettings(url=url))
        backends[backend.info.engine] = backend
    report = tune(backends, index, queries, qrels, strong, weak, dev=dev, max_loss=max_loss)
    click.echo(json.dumps(report, indent=1))


def _precomputed(path: Path) -> QueryExpander:
    """SIRA's expander for an expansions file, as every command chooses it."""
    expander = choose_expander("sira", expansions=path)
    assert expander is not None  # "sira" always has one
    return expander


if __name__ == "__main__":
    main()

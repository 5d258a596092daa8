"""`sira-seek ingest PATH --index NAME`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sira_seek.corpus import ReadReport, corpus_file, read_corpus
from sira_seek.ingest import IngestReport
from sira_seek.workflows import validation
from sira_seek.workflows.ingesting import delete_for_recreate, ingest_corpus

if TYPE_CHECKING:
    from sira_seek.workflows.ingesting import Embedder

from .exit_codes import BadInput, PartialFailure
from .options import (
    backend_from_options,
    cluster_options,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
)
from .progress import WorkflowProgress


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--index", required=True, help="Index to create or update.")
@click.option(
    "--shards",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Primary shards of a new index (DF stays exact on any layout).",
)
@click.option(
    "--replicas",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Replica copies per shard of a new index (1+ survives losing a node of a cluster).",
)
@click.option(
    "--recreate",
    is_flag=True,
    help="Delete the index first (by its own name: not a pattern, list or alias).",
)
@click.option(
    "--embed",
    is_flag=True,
    help="Also give every document the vector of its title and text (for --method dense, "
    "hybrid, sira-hybrid); a re-run embeds only new or changed documents.",
)
@click.option(
    "--embedder",
    "embedder_spec",
    metavar="SPEC",
    default=None,
    help="With --embed: cpu (the default, all-MiniLM-L6-v2 in-process) or openai:URL#MODEL. "
    "Recorded in the index; searches must use the same model.",
)
@json_option("Print the report as JSON.")
@no_progress_option
@cluster_options
@friendly_errors
def ingest(
    path: Path,
    index: str,
    shards: int,
    replicas: int,
    recreate: bool,
    embed: bool,
    embedder_spec: str | None,
    as_json: bool,
    no_progress: bool,
    **kw: Any,
) -> None:
    """Load a BEIR corpus (folder or corpus.jsonl) into INDEX; safe to re-run.

    Malformed records are skipped and listed, and do not change the exit code; a file with
    no valid record at all exits 2 before touching the cluster (nothing is created or
    written). Exits 3 (after the report) when the cluster refused some documents.
    """
    validation.index_name(index)  # exit 2 before the file is read or the cluster reached
    if embedder_spec is not None and not embed:
        raise BadInput("--embedder applies with --embed only")
    _require_one_valid_record(path)
    embedder = _embedder(embedder_spec) if embed else None
    backend = backend_from_options(kw)
    if recreate:  # refused or done before the progress bar shows
        delete_for_recreate(backend, index)
    progress = show_progress(no_progress=no_progress, as_json=as_json)
    with WorkflowProgress(desc=f"ingest {index}", unit="doc", enabled=progress) as bar:
        try:
            report = ingest_corpus(
                backend,
                index,
                path,
                shards=shards,
                replicas=replicas,
                progress=bar if progress else None,  # no line count when nothing shows
                embedder=embedder,
            )
        finally:
            if embedder is not None:
                embedder.close()
    _render(report, index, as_json)


def _embedder(spec: str | None) -> Embedder:
    from sira_seek.workflows.ingesting import make_embedder

    return make_embedder(spec)


def _render(report: IngestReport, index: str, as_json: bool) -> None:
    """The report: JSON, or the skipped/failed records and one summary line; exit 3 when the
    cluster refused documents."""
    if as_json:
        click.echo(json.dumps(report.model_dump(mode="json"), indent=2))
        _fail_on_refused(report.failed)
        return
    for bad in report.bad_records[:50]:
        click.echo(f"skipped {bad}", err=True)
    if len(report.bad_records) > 50:
        click.echo(f"... and {len(report.bad_records) - 50} more bad records", err=True)
    for err in report.failed[:20]:
        click.echo(f"failed {err.id}: {err.reason}", err=True)
    click.echo(
        f"{index}: {report.written} written, {report.unchanged} unchanged, "
        + (f"{report.embedded} embedded ({report.embedder}), " if report.embedder else "")
        + f"{len(report.bad_records)} bad records skipped, {len(report.failed)} failed "
        f"({report.seconds:.1f}s)"
    )
    _fail_on_refused(report.failed)


def _require_one_valid_record(path: Path) -> None:
    """Exit 2, naming the bad lines, when ``path`` holds no usable record.

    Reads up to the first good record only (a cheap pre-pass), so a file that is not a
    corpus at all (``/etc/passwd``) neither creates an index nor reports success.
    """
    bad = ReadReport()
    if next(read_corpus(path, bad), None) is not None:
        return
    where = corpus_file(path)
    if not bad.bad:
        raise BadInput(f"{where}: no records (the file is empty); nothing written")
    lines = "\n".join(f"  {b}" for b in bad.bad[:10])
    more = f"\n  ... and {len(bad.bad) - 10} more" if len(bad.bad) > 10 else ""
    raise BadInput(
        f"{where}: none of its {len(bad.bad)} records is valid (each needs `_id` and a "
        f"title or text); nothing written:\n{lines}{more}"
    )


def _fail_on_refused(failed: list[Any]) -> None:
    if failed:
        raise PartialFailure(f"the cluster refused {len(failed)} documents")

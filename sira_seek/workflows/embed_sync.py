"""``sira-sync --index I --embed``: the vectors of an index you already run, checked once here.

The run itself is ``sync.embed_runner.EmbedRunner``; this workflow checks the request before
any request reaches the cluster (the index name, the slice, the embedder spec), builds the
embedder and closes it when the run ends, so the CLI and the library share one path. A
``batch:DIR#MODEL`` spec makes no embedder: ``sync.embed_batch.BatchEmbedRunner`` imports the
batch job's vectors and writes the requests still missing, and raises ``WaitingForEmbeddings``
(a ``WaitingForBatch``: exit 75 on the command line) while any are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sira_seek.backend import SearchBackend
from sira_seek.sync.embed_runner import EmbedReport, EmbedRunner
from sira_seek.sync.settings import SyncSettings
from sira_seek.sync.slicing import SliceSpec

from . import validation
from .progress import PageProgress, Progress


def embed_index(
    backend: SearchBackend,
    index: str,
    *,
    embedder_spec: str | None = None,
    fields: str | None = None,
    slice: str | None = None,
    resume: bool = False,
    dry_run: bool = False,
    page_size: int | None = None,
    state_dir: Path | None = None,
    progress: Progress | None = None,
) -> EmbedReport:
    """Give every document of ``index`` (of the slice) whose vector is missing or stale one.

    ``embedder_spec``: ``cpu`` (None: the CPU default), ``openai:URL#MODEL`` or
    ``batch:DIR#MODEL``; the index's recorded embedder must be the same model. ``progress``
    hears the index's document count, then each page's scanned documents and counts."""
    from sira_seek.embed import make_embedder, parse_embedder_spec
    from sira_seek.llm.spec import BatchBackendSpec

    validation.index_name(index)
    slice_spec = SliceSpec.parse(slice)
    overrides: dict[str, Any] = {"fields": fields, "page_size": page_size, "state_dir": state_dir}
    settings = SyncSettings(**{k: v for k, v in overrides.items() if v is not None})
    spec = parse_embedder_spec(embedder_spec)
    on_page = None
    if progress is not None:
        progress.start(backend.count(index) if backend.index_exists(index) else 0)
        on_page = PageProgress(progress)
    if isinstance(spec, BatchBackendSpec):
        from sira_seek.sync.embed_batch import BatchEmbedRunner

        batch = BatchEmbedRunner(
            backend,
            index,
            spec,
            settings,
            slice_spec=slice_spec,
            dry_run=dry_run,
            resume=resume,
            on_page=on_page,
        )
        return batch.run()
    embedder = make_embedder(spec)
    try:
        runner = EmbedRunner(
            backend,
            index,
            embedder,
            settings,
            slice_spec=slice_spec,
            dry_run=dry_run,
            resume=resume,
            on_page=on_page,
        )
        return runner.run()
    finally:
        embedder.close()

"""The scan a run reads its slice with: what a resumed scan leaves out, and how a scan whose
point in time expired starts again.

Kept apart from the runner because this is the part that depends on how the engines scan
(point in time, scroll contexts and the errors they fail with), while the runner only decides
what to do with each page.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sira_seek.backend import ScanContextLostError, SearchBackend, SearchHit

from .checkpoint import Checkpoint
from .run_report import RunCounts

#: Restarts in a row that read no page before losing the context again; one more is an error.
MAX_STALLED_RESTARTS = 3
#: Seconds waited before the n-th such restart, times n (the cluster recovering shard copies).
STALLED_WAIT_S = 2.0

T = TypeVar("T")
_END: Any = object()


def read_ahead(items: Iterator[T]) -> Generator[T, None, None]:
    """What ``items`` yields, in order, with the next item fetched in a thread while the
    caller works on the current one.

    A scan page is a point-in-time read, so reading it early returns exactly what reading it
    later would; the run's DF filter and client work then no longer wait for the page
    request (0.7 s of a 5.8 s apply in benchmarks/sync_apply.py on Elasticsearch). An error
    of a fetch (a lost scan context) is raised where that item would have been, after every
    item before it. Closing this generator waits for the fetch in flight, then closes
    ``items`` on the caller's thread (its ``finally`` closes the point in time)."""
    with ThreadPoolExecutor(1, thread_name_prefix="sira-sync-scan") as pool:
        fetch = pool.submit(next, items, _END)
        try:
            while True:
                item = fetch.result()
                if item is _END:
                    return
                fetch = pool.submit(next, items, _END)
                yield item
        finally:
            # A generator cannot be closed while another thread runs it.
            concurrent.futures.wait([fetch])
            close = getattr(items, "close", None)
            if close is not None:
                close()


def processed_by_run_query(checkpoint: Checkpoint) -> dict[str, Any]:
    """Documents this run already wrote (enriched or failed): left out of a resumed scan."""
    fp = checkpoint.fingerprint
    return {
        "bool": {
            "must_not": [
                {
                    "bool": {
                        "filter": [
                            {"range": {"sira_sync.enriched_at": {"gte": checkpoint.started_at}}},
                            {"term": {"sira_sync.model": fp.model}},
                            {"term": {"sira_sync.prompt_id": fp.prompt_id}},
                            {"term": {"sira_sync.enrichment_version": fp.enrichment_version}},
                        ]
                    }
                }
            ]
        }
    }


def scan_pages(
    backend: SearchBackend,
    index: str,
    checkpoint: Checkpoint,
    *,
    fields: list[str],
    page_size: int,
    exclude_done: bool,
    restartable: bool,
    counts: RunCounts,
    before_restart: Callable[[], None] | None = None,
    meta_field: str = "sira_sync",
    done_query: Callable[[Checkpoint], dict[str, Any]] = processed_by_run_query,
) -> Generator[list[SearchHit], None, None]:
    """Scan pages; when the point in time expires (an LLM page outlasted its keep-alive),
    scan again leaving out what this run already wrote, as a resume does.

    Only a run that writes is ``restartable``: a dry run marks nothing as done, so a second
    scan could not leave out what the first one read. A scan that loses its context again
    before its first page (in a rolling restart the next member goes down right after the
    previous one is back) waits a little longer each time and gives up after
    ``MAX_STALLED_RESTARTS`` such restarts in a row, so a cluster that stays broken still
    stops the run. Each restart is counted in ``counts``. ``before_restart`` runs first (the
    runner finishes a write still in flight, so the new scan sees it as done).
    ``meta_field`` is the per-document record read with the fields and ``done_query`` what
    this run wrote (enrichment's by default; ``sira-sync --embed`` passes its own).
    """
    stalled = 0
    while True:
        query = done_query(checkpoint) if exclude_done else None
        progressed = False
        try:
            for page in read_ahead(
                backend.scan(index, query=query, page_size=page_size, source=[*fields, meta_field])
            ):
                yield page
                progressed = True
            return
        except ScanContextLostError:
            stalled = 0 if progressed else stalled + 1
            if not restartable or stalled > MAX_STALLED_RESTARTS:
                raise
        if before_restart is not None:
            before_restart()
        counts.add("scan_restarts")
        if stalled:
            time.sleep(STALLED_WAIT_S * stalled)
        backend.refresh(index)
        exclude_done = True

"""One sira-sync run over one slice of one index: scan, decide, propose, filter, write.

The write is the only step with side effects and it is idempotent: a document is written only
when it is not current, with its hash and fingerprint, guarded by ``if_seq_no`` and
``if_primary_term``. A document changed by someone else since it was read answers 409; it is
re-read and re-done from its new text, never overwritten from the old one.

This module holds the run loop, the decision which documents need enriching, and the
checkpoint; the scan lives in ``resumable_scan`` and the guarded write in ``page_enricher``.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from sira_seek.backend import BulkResult, SearchBackend, SearchHit
from sira_seek.gc_settings import fewer_gc_passes

from .checkpoint import Checkpoint, RunStateStore, resume_or_start
from .corpus_df_filter import CorpusDFFilter
from .freshness import doc_state
from .mapping import EnrichmentLayout, ensure_enrichment_mapping
from .page_enricher import PageEnricher, PreparedPage
from .phrase_sources import PhraseSource
from .records import EnrichmentFingerprint, SyncMetadata, utc_now_ms
from .resumable_scan import scan_pages
from .run_report import RunCounts, RunReport
from .settings import SyncSettings
from .slicing import SliceSpec
from .source_text import document_text, source_hash
from .work_items import WorkItem

ProgressCallback = Callable[[int, RunCounts], None]


@dataclass
class _PendingPage:
    """A page whose write may still be running: its size, its tallies so far, the write."""

    size: int
    counts: RunCounts
    prepared: PreparedPage | None
    write: Future[BulkResult] | None


class SyncRunner:
    """Enriches the documents of one slice that are not current; see the module docstring."""

    def __init__(
        self,
        backend: SearchBackend,
        index: str,
        source: PhraseSource,
        settings: SyncSettings | None = None,
        *,
        slice_spec: SliceSpec | None = None,
        dry_run: bool = False,
        resume: bool = False,
        on_page: ProgressCallback | None = None,
    ) -> None:
        self.backend = backend
        self.index = index
        self.source = source
        self.settings = settings or SyncSettings()
        self.slice = slice_spec or SliceSpec()
        self.dry_run = dry_run
        self.resume = resume
        self.on_page = on_page
        self.fingerprint = EnrichmentFingerprint(
            model=source.model,
            prompt_id=source.prompt_id,
            enrichment_version=self.settings.enrichment_version,
        )
        self.store = RunStateStore(self.settings.state_dir, index, self.slice)
        self.counts = RunCounts()
        self.df: CorpusDFFilter  # set by run(): |C| is read when the run starts
        self.run_started_at = "9999"  # set by run(); nothing is "written by this run" before
        self._seen_before = 0  # docs counted by the run this one resumes

    # -- run -----------------------------------------------------------------------------
    def run(self) -> RunReport:
        """Scan, decide, propose, filter and write every page of the slice; the report."""
        with fewer_gc_passes():
            return self._run()

    def _run(self) -> RunReport:
        started = time.perf_counter()
        fields = list(self.settings.fields)
        layout = ensure_enrichment_mapping(self.backend, self.index, fields, dry_run=self.dry_run)
        checkpoint, resumed = self._checkpoint()
        self.counts = RunCounts(**checkpoint.counts) if resumed else RunCounts()
        self._seen_before = self.counts.seen
        doc_count = self.backend.count(self.index)
        self.df = CorpusDFFilter(
            self.backend,
            layout,
            tau=self.settings.tau,
            doc_count=doc_count,
            max_phrase_words=self.settings.max_phrase_words,
        )
        self.run_started_at = checkpoint.started_at
        if not self.dry_run:
            self.store.save(checkpoint)
        # Recent writes (a killed run's last page, a user's edits) must be visible to the scan.
        self.backend.refresh(self.index)
        enricher = PageEnricher(
            backend=self.backend,
            index=self.index,
            source=self.source,
            df=self.df,
            fingerprint=self.fingerprint,
            store=self.store,
            counts=self.counts,
            max_conflict_retries=self.settings.max_conflict_retries,
            reread=functools.partial(self._work_item, count=False),
        )
        # A page's write runs beside the next page's scan, proposals and DF filter (two cores
        # instead of one); it is joined, tallied and checkpointed before the next one starts.
        pending: list[_PendingPage] = []

        def finish_pending() -> None:
            while pending:
                self._finish(pending.pop(), enricher, checkpoint)

        # Closed here when a page fails: left to garbage collection, the scan (and its point
        # in time) outlives the error, and closing it at interpreter exit can hang sira-sync.
        with (
            ThreadPoolExecutor(1) as writer,
            contextlib.closing(
                self._pages(checkpoint, exclude_done=resumed, before_restart=finish_pending)
            ) as pages,
        ):
            try:
                for page in pages:
                    page_counts, prepared = self._prepare(page, enricher)
                    finish_pending()
                    write = writer.submit(enricher.write, prepared) if prepared else None
                    pending.append(_PendingPage(len(page), page_counts, prepared, write))
            except BaseException:
                # The page already sent is written: tally and checkpoint it, as a run that
                # fails between pages would have, then fail with the original error.
                with contextlib.suppress(Exception):
                    finish_pending()
                raise
            finish_pending()
        if not self.dry_run:
            # What the command reports as written is searchable when it returns.
            self.backend.refresh(self.index)
            checkpoint.finished = True
            checkpoint.counts = self.counts.model_dump()
            self.store.save(checkpoint)
        seconds = time.perf_counter() - started
        return self._report(
            checkpoint, layout, resumed, doc_count, seconds, enricher.write_error_samples
        )

    def _prepare(
        self, page: list[SearchHit], enricher: PageEnricher
    ) -> tuple[RunCounts, PreparedPage | None]:
        """Decide, propose and filter one page, tallied apart from the run's counts: they are
        merged when the page's write is done, so a checkpoint never counts a page it has not
        written."""
        run_counts = self.counts
        self.counts = enricher.counts = RunCounts()
        try:
            items = self._plan(page)
            prepared = enricher.prepare(items) if items and not self.dry_run else None
            return self.counts, prepared
        finally:
            self.counts = enricher.counts = run_counts

    def _finish(self, done: _PendingPage, enricher: PageEnricher, checkpoint: Checkpoint) -> None:
        """Join one page's write, tally it (re-doing documents changed meanwhile), checkpoint."""
        result = done.write.result() if done.write is not None else None
        for name, value in done.counts.model_dump().items():
            if value:
                self.counts.add(name, value)
        if done.prepared is not None and result is not None:
            enricher.finish(done.prepared, result)
        if not self.dry_run:
            checkpoint.pages += 1
            checkpoint.counts = self.counts.model_dump()
            self.store.save(checkpoint)
        if self.on_page:
            self.on_page(done.size, self.counts)

    def _pages(
        self,
        checkpoint: Checkpoint,
        *,
        exclude_done: bool,
        before_restart: Callable[[], None] | None = None,
    ) -> Generator[list[SearchHit], None, None]:
        return scan_pages(
            self.backend,
            self.index,
            checkpoint,
            fields=list(self.settings.fields),
            page_size=self.settings.page_size,
            exclude_done=exclude_done,
            restartable=not self.dry_run,
            counts=self.counts,
            before_restart=before_restart,
        )

    def _checkpoint(self) -> tuple[Checkpoint, bool]:
        fresh = Checkpoint(
            index=self.index,
            slice=self.slice,
            fields=list(self.settings.fields),
            fingerprint=self.fingerprint,
        )
        return resume_or_start(
            self.store,
            fresh,
            resume=self.resume,
            run="a run",
            describe=lambda fingerprint: fingerprint.model_dump(),
        )

    # -- decide ----------------------------------------------------------------------------
    def _work_item(self, hit: SearchHit, *, count: bool = True) -> WorkItem | None:
        """None when the document is current; else what to enrich. States are counted once,
        when the scan first reads the document (not again after a 409 re-read)."""
        fields = self.settings.fields
        digest = source_hash(hit.source, fields)
        meta = SyncMetadata.from_source(hit.source)
        state = doc_state(meta, digest, self.fingerprint)
        if state == "failed" and self._written_by_this_run(meta):
            state = "current"  # failed earlier in this (resumed) run: retried by the next run
        if count:
            self.counts.add("failed_before" if state == "failed" else state)
        if state == "current":
            return None
        return WorkItem(
            doc_id=hit.id,
            text=document_text(hit.source, fields, self.settings.text_budget_chars),
            source_hash=digest,
            state=state,
            seq_no=hit.seq_no,
            primary_term=hit.primary_term,
        )

    def _written_by_this_run(self, meta: SyncMetadata | None) -> bool:
        return (
            meta is not None
            and meta.fingerprint() == self.fingerprint
            and (meta.enriched_at or "") >= self.run_started_at
        )

    def _plan(self, page: Iterable[SearchHit]) -> list[WorkItem]:
        items = []
        for hit in page:
            if not self.slice.owns(hit.id):
                continue
            self.counts.seen += 1
            item = self._work_item(hit)
            if item is not None:
                items.append(item)
        return items

    def pending_items(self, limit: int) -> list[WorkItem]:
        """The first ``limit`` documents of this slice that are not current (no writes)."""
        return list(itertools.islice(self.iter_pending(), limit))

    def iter_pending(self) -> Iterator[WorkItem]:
        """Every document of this slice that is not current, decided as a run decides, one
        page in memory at a time (``sira-sync export-requests`` streams these to a file)."""
        fields = list(self.settings.fields)
        for page in self.backend.scan(
            self.index, page_size=self.settings.page_size, source=[*fields, "sira_sync"]
        ):
            for hit in page:
                if self.slice.owns(hit.id):
                    item = self._work_item(hit, count=False)
                    if item is not None:
                        yield item

    # -- report ----------------------------------------------------------------------------
    def _report(
        self,
        checkpoint: Checkpoint,
        layout: EnrichmentLayout,
        resumed: bool,
        doc_count: int,
        seconds: float,
        write_error_samples: list[str],
    ) -> RunReport:
        return RunReport(
            index=self.index,
            slice=str(self.slice),
            run_id=checkpoint.run_id,
            fingerprint=self.fingerprint,
            fields=list(self.settings.fields),
            tau=self.settings.tau,
            doc_count=doc_count,
            dry_run=self.dry_run,
            resumed=resumed,
            mapping_fields_added=layout.added_fields,
            started_at=checkpoint.started_at,
            finished_at=utc_now_ms(),
            seconds=round(seconds, 3),
            docs_per_s=round((self.counts.seen - self._seen_before) / seconds, 1)
            if seconds > 0
            else 0.0,
            counts=self.counts,
            df_round_trips=self.df.round_trips,
            failures_file=str(self.store.failures_path)
            if self.store.failures_path.exists()
            else None,
            write_error_samples=write_error_samples,
        )

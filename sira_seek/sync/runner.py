"""One sira-sync run over one slice of one index: scan, decide, propose, filter, write.

The write is the only step with side effects and it is idempotent: a document is written only
when it is not current, with its hash and fingerprint, guarded by ``if_seq_no`` and
``if_primary_term``. A document changed by someone else since it was read answers 409; it is
re-read and re-done from its new text, never overwritten from the old one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sira_seek.backend import PartialUpdate, SearchBackend, SearchHit
from sira_seek.fields import CATEGORIES, PHRASES

from .checkpoint import Checkpoint, RunStateStore
from .corpus_df_filter import CorpusDFFilter
from .freshness import doc_state
from .mapping import EnrichmentLayout, ensure_enrichment_mapping
from .phrase_sources import PhraseSource
from .records import (
    EnrichmentFingerprint,
    FailureRecord,
    PhraseProposal,
    ProposalFailure,
    SyncMetadata,
    utc_now_ms,
)
from .run_report import RunCounts, RunReport
from .settings import SyncSettings
from .slicing import SliceSpec
from .source_text import document_text, source_hash
from .work_items import WorkItem

ProgressCallback = Callable[[int, RunCounts], None]


class ResumeMismatchError(ValueError):
    """``--resume`` was asked for a checkpoint written by a differently configured run."""


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


def point_in_time_expired(exc: BaseException) -> bool:
    """Both engines name an expired point in time / scroll context this way."""
    text = str(exc)
    return "search_context_missing" in text or "No search context found" in text


def _sub(name: str) -> str:
    return name.split(".", 1)[1]


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
        self._write_error_samples: list[str] = []
        self._seen_before = 0  # docs counted by the run this one resumes

    # -- run -----------------------------------------------------------------------------
    def run(self) -> RunReport:
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
        for page in self._pages(checkpoint, exclude_done=resumed):
            items = self._plan(page)
            if items and not self.dry_run:
                self._enrich(items, attempt=0)
            if not self.dry_run:
                checkpoint.pages += 1
                checkpoint.counts = self.counts.model_dump()
                self.store.save(checkpoint)
            if self.on_page:
                self.on_page(len(page), self.counts)
        if not self.dry_run:
            checkpoint.finished = True
            checkpoint.counts = self.counts.model_dump()
            self.store.save(checkpoint)
        return self._report(checkpoint, layout, resumed, doc_count, time.perf_counter() - started)

    def _pages(self, checkpoint: Checkpoint, *, exclude_done: bool) -> Iterator[list[SearchHit]]:
        """Scan pages; when the point in time expires (an LLM page outlasted its keep-alive),
        scan again leaving out what this run already wrote, as a resume does."""
        fields = list(self.settings.fields)
        while True:
            query = processed_by_run_query(checkpoint) if exclude_done else None
            progressed = False
            try:
                for page in self.backend.scan(
                    self.index,
                    query=query,
                    page_size=self.settings.page_size,
                    source=[*fields, "sira_sync"],
                ):
                    yield page
                    progressed = True
                return
            except Exception as exc:
                if self.dry_run or not progressed or not point_in_time_expired(exc):
                    raise
            self.counts.add("scan_restarts")
            self.backend.refresh(self.index)
            exclude_done = True

    def _checkpoint(self) -> tuple[Checkpoint, bool]:
        fresh = Checkpoint(
            index=self.index,
            slice=self.slice,
            fields=list(self.settings.fields),
            fingerprint=self.fingerprint,
        )
        if not self.resume:
            return fresh, False
        saved = self.store.load()
        if saved is None or saved.finished:
            return fresh, False
        if saved.fingerprint != self.fingerprint or saved.fields != fresh.fields:
            raise ResumeMismatchError(
                f"the checkpoint at {self.store.checkpoint_path} belongs to a run with "
                f"{saved.fingerprint.model_dump()} over fields {saved.fields}; this run has "
                f"{self.fingerprint.model_dump()} over {fresh.fields}. Run without --resume."
            )
        saved.resumes += 1
        return saved, True

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
        out: list[WorkItem] = []
        fields = list(self.settings.fields)
        for page in self.backend.scan(
            self.index, page_size=self.settings.page_size, source=[*fields, "sira_sync"]
        ):
            for hit in page:
                if self.slice.owns(hit.id):
                    item = self._work_item(hit, count=False)
                    if item is not None:
                        out.append(item)
                        if len(out) >= limit:
                            return out
        return out

    # -- enrich and write ------------------------------------------------------------------
    def _metadata(self, item: WorkItem, status: str, now: str) -> dict[str, Any]:
        return {
            "source_hash": item.source_hash,
            "enrichment_version": self.fingerprint.enrichment_version,
            "model": self.fingerprint.model,
            "prompt_id": self.fingerprint.prompt_id,
            "enriched_at": now,
            "status": status,
        }

    def _enrich(self, items: list[WorkItem], attempt: int) -> None:
        outcomes = self.source.propose(items)
        proposals = [o for o in outcomes if isinstance(o, PhraseProposal)]
        # One DF round trip for the whole page; the per-document lookups below hit this memo.
        memo = self.df.verdicts([p for prop in proposals for p in prop.phrases])
        now = utc_now_ms()
        updates: list[PartialUpdate] = []
        failures: list[FailureRecord] = []
        enriched_ids: set[str] = set()
        for item, outcome in zip(items, outcomes, strict=True):
            if outcome is None:
                self.counts.add("no_input")
                continue
            if isinstance(outcome, ProposalFailure):
                failures.append(
                    FailureRecord(
                        **outcome.model_dump(),
                        index=self.index,
                        source_hash=item.source_hash,
                        model=self.fingerprint.model,
                        prompt_id=self.fingerprint.prompt_id,
                    )
                )
                updates.append(
                    PartialUpdate(
                        id=item.doc_id,
                        doc={"sira_sync": self._metadata(item, "failed", now)},
                        if_seq_no=item.seq_no,
                        if_primary_term=item.primary_term,
                    )
                )
                continue
            self.counts.add("phrases_proposed", len(outcome.phrases))
            self.counts.add("prompt_tokens", outcome.prompt_tokens)
            self.counts.add("completion_tokens", outcome.completion_tokens)
            kept = []
            for phrase in outcome.phrases:
                verdict = memo[phrase]
                if verdict.kept:
                    kept.append(phrase)
                else:
                    self.counts.add(f"phrases_{verdict.reason}")
            self.counts.add("phrases_kept", len(kept))
            enriched_ids.add(item.doc_id)
            updates.append(
                PartialUpdate(
                    id=item.doc_id,
                    doc={
                        "sira_enrichment": {
                            _sub(PHRASES): kept,
                            _sub(CATEGORIES): outcome.categories,
                        },
                        "sira_sync": self._metadata(item, "enriched", now),
                    },
                    if_seq_no=item.seq_no,
                    if_primary_term=item.primary_term,
                )
            )
        # Failures are on disk before the index says "failed": a kill in between loses nothing.
        self.store.record_failures(failures)
        result = self.backend.bulk_partial_update(self.index, updates)
        errors = {e.id: e for e in result.errors}
        conflicts = [i for i in items if i.doc_id in errors and errors[i.doc_id].status == 409]
        for err in result.errors:
            if err.status != 409:
                self.counts.add("write_errors")
                if len(self._write_error_samples) < 20:
                    self._write_error_samples.append(f"{err.id}: {err.status} {err.reason}")
        for update in updates:
            if update.id in errors:
                continue
            self.counts.add("enriched" if update.id in enriched_ids else "failed")
        if conflicts:
            self.counts.add("conflicts", len(conflicts))
            self._redo_changed(conflicts, attempt)

    def _redo_changed(self, conflicts: list[WorkItem], attempt: int) -> None:
        """Re-read documents that changed since they were read, and enrich their new text."""
        if attempt >= self.settings.max_conflict_retries:
            self.counts.add("write_errors", len(conflicts))
            self._write_error_samples += [
                f"{c.doc_id}: still changing after {attempt} re-reads" for c in conflicts
            ][: max(0, 20 - len(self._write_error_samples))]
            return
        fresh: list[WorkItem] = []
        for item in conflicts:
            hit = self.backend.get(self.index, item.doc_id)
            if hit is None:
                continue  # deleted meanwhile: nothing to enrich
            again = self._work_item(hit, count=False)
            if again is not None:
                fresh.append(again)
        if fresh:
            self._enrich(fresh, attempt + 1)

    # -- report ----------------------------------------------------------------------------
    def _report(
        self,
        checkpoint: Checkpoint,
        layout: EnrichmentLayout,
        resumed: bool,
        doc_count: int,
        seconds: float,
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
            write_error_samples=self._write_error_samples,
        )

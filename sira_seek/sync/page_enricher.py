"""Propose, filter and write one page of documents: the only step of a run with side effects.

Kept apart from the runner, which decides *which* documents to enrich, because this is where
the write guarantees live: failures reach disk before the index says "failed", every write is
guarded by ``if_seq_no`` and ``if_primary_term``, and a 409 means re-read and redo from the
new text, never overwrite from the old one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sira_seek.backend import BulkResult, PartialUpdate, SearchBackend, SearchHit
from sira_seek.fields import CATEGORIES, PHRASES

from .checkpoint import RunStateStore
from .corpus_df_filter import CorpusDFFilter
from .phrase_sources import PhraseSource
from .records import (
    EnrichmentFingerprint,
    FailureRecord,
    InputSkipped,
    PhraseProposal,
    ProposalFailure,
    utc_now_ms,
)
from .run_report import RunCounts
from .work_items import WorkItem

MAX_WRITE_ERROR_SAMPLES = 20

Reread = Callable[[SearchHit], WorkItem | None]


def _sub(name: str) -> str:
    return name.split(".", 1)[1]


@dataclass(kw_only=True)
class PreparedPage:
    """One page proposed and filtered, not written yet."""

    items: list[WorkItem]
    updates: list[PartialUpdate]
    enriched_ids: set[str]
    attempt: int = 0


@dataclass(kw_only=True)
class PageEnricher:
    """Enriches pages of work items for one run, tallying into the run's ``counts``.

    ``reread`` decides again for a document re-read after a 409: a new work item, or None when
    it has become current meanwhile.
    """

    backend: SearchBackend
    index: str
    source: PhraseSource
    df: CorpusDFFilter
    fingerprint: EnrichmentFingerprint
    store: RunStateStore
    counts: RunCounts
    max_conflict_retries: int
    reread: Reread
    write_error_samples: list[str] = field(default_factory=list)

    def _metadata(self, item: WorkItem, status: str, now: str) -> dict[str, Any]:
        return {
            "source_hash": item.source_hash,
            "enrichment_version": self.fingerprint.enrichment_version,
            "model": self.fingerprint.model,
            "prompt_id": self.fingerprint.prompt_id,
            "enriched_at": now,
            "status": status,
        }

    def enrich(self, items: list[WorkItem], attempt: int = 0) -> None:
        """Propose, filter, write and tally one page, in that order."""
        page = self.prepare(items, attempt)
        self.finish(page, self.write(page))

    def write(self, page: PreparedPage) -> BulkResult:
        """The page's guarded partial updates: the one step that may run beside the next
        page's proposals and DF filter (it touches nothing but the cluster)."""
        return self.backend.bulk_partial_update(self.index, page.updates)

    def prepare(self, items: list[WorkItem], attempt: int = 0) -> PreparedPage:
        """Propose and filter: the page's updates, with its failures already on disk."""
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
            if isinstance(outcome, InputSkipped):
                self.counts.add(outcome.reason)
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
        return PreparedPage(
            items=items, updates=updates, enriched_ids=enriched_ids, attempt=attempt
        )

    def finish(self, page: PreparedPage, result: BulkResult) -> None:
        """Tally the page's write and redo the documents that changed since they were read."""
        items, updates, enriched_ids, attempt = (
            page.items,
            page.updates,
            page.enriched_ids,
            page.attempt,
        )
        errors = {e.id: e for e in result.errors}
        conflicts = [i for i in items if i.doc_id in errors and errors[i.doc_id].status == 409]
        for err in result.errors:
            if err.status != 409:
                self.counts.add("write_errors")
                if len(self.write_error_samples) < MAX_WRITE_ERROR_SAMPLES:
                    self.write_error_samples.append(f"{err.id}: {err.status} {err.reason}")
        for update in updates:
            if update.id in errors:
                continue
            self.counts.add("enriched" if update.id in enriched_ids else "failed")
        if conflicts:
            self.counts.add("conflicts", len(conflicts))
            self._redo_changed(conflicts, attempt)

    def _redo_changed(self, conflicts: list[WorkItem], attempt: int) -> None:
        """Re-read documents that changed since they were read, and enrich their new text."""
        if attempt >= self.max_conflict_retries:
            self.counts.add("write_errors", len(conflicts))
            self.write_error_samples += [
                f"{c.doc_id}: still changing after {attempt} re-reads" for c in conflicts
            ][: max(0, MAX_WRITE_ERROR_SAMPLES - len(self.write_error_samples))]
            return
        fresh: list[WorkItem] = []
        for item in conflicts:
            hit = self.backend.get(self.index, item.doc_id)
            if hit is None:
                continue  # deleted meanwhile: nothing to enrich
            again = self.reread(hit)
            if again is None:
                self.counts.add("current_on_reread")
            else:
                fresh.append(again)
        if fresh:
            self.enrich(fresh, attempt + 1)

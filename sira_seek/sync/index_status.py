"""``sira-sync status``: how much of an index is enriched, stale, failed or never enriched.

Staleness needs the source text (its hash is computed client-side), so this reads every
document's source fields and sync metadata once through a point in time; no LLM, no writes.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend

from .freshness import doc_state
from .records import EnrichmentFingerprint, SyncMetadata
from .source_text import source_hash


class FingerprintCounts(BaseModel):
    """Documents last written under one (model, prompt id, enrichment version)."""

    model: str | None
    prompt_id: str | None
    enrichment_version: int | None
    enriched: int = 0
    stale: int = 0
    failed: int = 0
    outdated: int = Field(
        default=0, description="Enriched and unchanged, but not under the expected fingerprint."
    )


class IndexSyncStatus(BaseModel):
    index: str
    fields: list[str]
    total: int = 0
    enriched: int = Field(default=0, description="Current: source unchanged since enrichment.")
    stale: int = Field(default=0, description="Enriched, but the source text changed since.")
    failed: int = Field(default=0, description="Last attempt failed (retried on the next run).")
    never_enriched: int = 0
    outdated: int = 0
    by_fingerprint: list[FingerprintCounts] = Field(default_factory=list)


def index_sync_status(
    backend: SearchBackend,
    index: str,
    fields: Sequence[str],
    *,
    expected: EnrichmentFingerprint | None = None,
    page_size: int = 1000,
) -> IndexSyncStatus:
    """Classify every document; ``expected`` also counts enrichment from another model/prompt."""
    status = IndexSyncStatus(index=index, fields=list(fields))
    groups: dict[tuple[str | None, str | None, int | None], FingerprintCounts] = {}
    for page in backend.scan(index, page_size=page_size, source=[*fields, "sira_sync"]):
        for hit in page:
            status.total += 1
            meta = SyncMetadata.from_source(hit.source)
            state = doc_state(meta, source_hash(hit.source, fields), expected)
            if meta is None or meta.status is None:
                status.never_enriched += 1
                continue
            key = (meta.model, meta.prompt_id, meta.enrichment_version)
            group = groups.setdefault(
                key,
                FingerprintCounts(model=key[0], prompt_id=key[1], enrichment_version=key[2]),
            )
            if meta.status == "failed":
                status.failed += 1
                group.failed += 1
            elif state == "changed":
                status.stale += 1
                group.stale += 1
            elif state == "outdated":
                status.outdated += 1
                group.outdated += 1
            else:
                status.enriched += 1
                group.enriched += 1
    status.by_fingerprint = sorted(
        groups.values(), key=lambda g: (-(g.enriched + g.stale + g.failed), str(g.model))
    )
    return status

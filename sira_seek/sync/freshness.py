"""Is a document's enrichment current? The one rule every run, resume and status count uses.

A document is current when its stored hash equals the hash of its source fields now, its
fingerprint (model, prompt id, enrichment version) is the run's, and its status is ``enriched``.
That rule is what makes re-doing a document a no-op and resuming a killed run safe.
"""

from __future__ import annotations

from typing import Literal

from .records import EnrichmentFingerprint, SyncMetadata

DocState = Literal["current", "new", "changed", "outdated", "failed"]


def doc_state(
    meta: SyncMetadata | None, current_hash: str, fingerprint: EnrichmentFingerprint | None
) -> DocState:
    """Classify one document against the run's fingerprint (``None``: any fingerprint counts)."""
    if meta is None or meta.status is None:
        return "new"
    if meta.status == "failed" and meta.source_hash == current_hash:
        return "failed"
    if meta.source_hash != current_hash:
        return "changed"
    if fingerprint is not None and meta.fingerprint() != fingerprint:
        return "outdated"
    return "current"


def needs_enrichment(state: DocState) -> bool:
    return state != "current"

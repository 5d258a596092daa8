"""sira-sync: corpus-side SIRA enrichment of existing indexes — incremental, resumable, sliced.

Engine-agnostic: everything goes through a ``SearchBackend``. The pieces, in the order a run
uses them: ``mapping`` (add the enrichment fields), ``slicing`` (which documents are this
worker's), ``freshness`` (is a document current?), ``phrase_sources`` (LLM or JSONL proposals),
``corpus_df_filter`` (drop phrases too common in the raw corpus), ``runner`` (the run loop and
checkpoints) with ``resumable_scan`` (the scan, restarted when its point in time expires) and
``page_enricher`` (guarded writes, 409 re-reads), ``index_status`` and ``run_report``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sira_seek.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .checkpoint import Checkpoint, ResumeMismatchError, RunStateStore
    from .corpus_df_filter import CorpusDFFilter, PhraseVerdict
    from .document_prompt import document_request, document_schema, prompt_id
    from .freshness import DocState, doc_state
    from .index_status import IndexSyncStatus, index_sync_status
    from .mapping import EnrichmentLayout, MappingConflictError, ensure_enrichment_mapping
    from .phrase_sources import (
        JsonlPhraseSource,
        LLMPhraseSource,
        LLMUnavailableError,
        PhraseSource,
    )
    from .records import (
        EnrichmentFingerprint,
        FailureRecord,
        JsonlEnrichment,
        PhraseProposal,
        ProposalFailure,
        SyncMetadata,
    )
    from .run_report import RunCounts, RunReport
    from .runner import SyncRunner
    from .settings import ENRICHMENT_VERSION, SyncSettings
    from .slicing import SliceSpec
    from .source_text import document_text, source_hash

__all__ = [
    "ENRICHMENT_VERSION",
    "Checkpoint",
    "CorpusDFFilter",
    "DocState",
    "EnrichmentFingerprint",
    "EnrichmentLayout",
    "FailureRecord",
    "IndexSyncStatus",
    "JsonlEnrichment",
    "JsonlPhraseSource",
    "LLMPhraseSource",
    "LLMUnavailableError",
    "MappingConflictError",
    "PhraseProposal",
    "PhraseSource",
    "PhraseVerdict",
    "ProposalFailure",
    "ResumeMismatchError",
    "RunCounts",
    "RunReport",
    "RunStateStore",
    "SliceSpec",
    "SyncMetadata",
    "SyncRunner",
    "SyncSettings",
    "doc_state",
    "document_request",
    "document_schema",
    "document_text",
    "ensure_enrichment_mapping",
    "index_sync_status",
    "prompt_id",
    "source_hash",
]

_EXPORTS = {
    ".checkpoint": (
        "Checkpoint",
        "ResumeMismatchError",
        "RunStateStore",
    ),
    ".corpus_df_filter": (
        "CorpusDFFilter",
        "PhraseVerdict",
    ),
    ".document_prompt": (
        "document_request",
        "document_schema",
        "prompt_id",
    ),
    ".freshness": (
        "DocState",
        "doc_state",
    ),
    ".index_status": (
        "IndexSyncStatus",
        "index_sync_status",
    ),
    ".mapping": (
        "EnrichmentLayout",
        "MappingConflictError",
        "ensure_enrichment_mapping",
    ),
    ".phrase_sources": (
        "JsonlPhraseSource",
        "LLMPhraseSource",
        "LLMUnavailableError",
        "PhraseSource",
    ),
    ".records": (
        "EnrichmentFingerprint",
        "FailureRecord",
        "JsonlEnrichment",
        "PhraseProposal",
        "ProposalFailure",
        "SyncMetadata",
    ),
    ".run_report": (
        "RunCounts",
        "RunReport",
    ),
    ".runner": ("SyncRunner",),
    ".settings": (
        "ENRICHMENT_VERSION",
        "SyncSettings",
    ),
    ".slicing": ("SliceSpec",),
    ".source_text": (
        "document_text",
        "source_hash",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

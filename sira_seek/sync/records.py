"""Plain-data records sira-sync reads and writes: per-document sync metadata, proposals from a
model or a JSONL file, and failures. Pydantic so they validate on the way in and serialise
unchanged into reports, checkpoints and the index."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SyncStatus = Literal["enriched", "failed"]


def utc_now_ms() -> str:
    """An ISO-8601 UTC time with millisecond precision, the resolution of an engine ``date``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class EnrichmentFingerprint(BaseModel):
    """What, besides the source text, decides a document's enrichment: change any part and
    every document enriched under the old one is re-done."""

    model_config = ConfigDict(frozen=True)

    model: str
    prompt_id: str
    enrichment_version: int


class SyncMetadata(BaseModel):
    """The ``sira_sync`` object stored in each document (fields of mappings/enrichment_fields)."""

    model_config = ConfigDict(extra="ignore")

    source_hash: str | None = None
    enrichment_version: int | None = None
    model: str | None = None
    prompt_id: str | None = None
    enriched_at: str | None = None
    status: SyncStatus | None = None

    @classmethod
    def from_source(cls, source: dict[str, Any] | None) -> SyncMetadata | None:
        raw = (source or {}).get("sira_sync")
        return cls.model_validate(raw) if isinstance(raw, dict) else None

    def fingerprint(self) -> EnrichmentFingerprint | None:
        if self.model is None or self.prompt_id is None or self.enrichment_version is None:
            return None
        return EnrichmentFingerprint(
            model=self.model, prompt_id=self.prompt_id, enrichment_version=self.enrichment_version
        )


class JsonlEnrichment(BaseModel):
    """One line of a precomputed enrichment file (e.g. from a GPU batch job)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str = Field(alias="_id")
    keywords: list[str]
    categories: list[str] = Field(default_factory=list)
    source_hash: str | None = Field(
        default=None, description="Hash of the text the phrases were made from, when known."
    )

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) else value


class PhraseProposal(BaseModel):
    """Phrases and categories proposed for one document, before the DF filter."""

    doc_id: str
    phrases: list[str]
    categories: list[str] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ProposalFailure(BaseModel):
    """A document whose proposal could not be used; recorded, retried on a later run."""

    doc_id: str
    kind: str
    message: str
    raw_text: str | None = None


class InputSkipped(BaseModel):
    """A precomputed answer that must not be written (made from text the document no longer
    has); counted under ``reason`` in the run's counts, the document left as it is."""

    doc_id: str
    reason: Literal["changed_since_export"]


class FailureRecord(ProposalFailure):
    """A failure as written to the failures file."""

    index: str
    source_hash: str
    model: str
    prompt_id: str
    at: str = Field(default_factory=utc_now_ms)

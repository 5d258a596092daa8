"""The JSON report a run leaves behind: what it read, decided, wrote and what it cost."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .expunge import ExpungeSummary
from .records import EnrichmentFingerprint


class RunCounts(BaseModel):
    """Document and phrase tallies; a resumed run continues the killed run's counts."""

    seen: int = Field(default=0, description="Documents of this slice read from the index.")
    current: int = Field(default=0, description="Already current: left untouched.")
    new: int = 0
    changed: int = 0
    outdated: int = 0
    failed_before: int = 0
    enriched: int = Field(default=0, description="Enrichment written.")
    failed: int = Field(default=0, description="Malformed/failed answers recorded, not written.")
    no_input: int = Field(default=0, description="No precomputed record for the document.")
    changed_since_export: int = Field(
        default=0,
        description="A batch answer made from text the document no longer has: not written.",
    )
    conflicts: int = Field(default=0, description="409s: changed mid-run, re-read.")
    current_on_reread: int = Field(
        default=0,
        description="409 re-reads that found the document already current: another writer's "
        "work, or this run's own write applied before a retried request (a node was lost).",
    )
    write_errors: int = 0
    scan_restarts: int = Field(
        default=0,
        description="The scan's point in time was lost (expired during a long page, or a node "
        "holding it left); scanned again.",
    )
    phrases_proposed: int = 0
    phrases_kept: int = 0
    phrases_too_common: int = 0
    phrases_no_terms: int = 0
    phrases_too_long: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, key: str, n: int = 1) -> None:
        setattr(self, key, getattr(self, key) + n)


class RunReport(BaseModel):
    index: str
    slice: str
    run_id: str
    fingerprint: EnrichmentFingerprint
    fields: list[str]
    tau: float
    doc_count: int = Field(description="|C| used by the DF filter.")
    dry_run: bool = False
    resumed: bool = False
    mapping_fields_added: list[str] = Field(default_factory=list)
    started_at: str
    finished_at: str | None = None
    seconds: float = 0.0
    docs_per_s: float = 0.0
    counts: RunCounts = Field(default_factory=RunCounts)
    df_round_trips: int = 0
    failures_file: str | None = None
    write_error_samples: list[str] = Field(default_factory=list)
    llm_usage: dict[str, Any] | None = None
    expunge: ExpungeSummary | None = Field(
        default=None, description="The --expunge-deletes merge at the end of the run."
    )

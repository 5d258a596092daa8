"""sira-sync's knobs as one typed, side-effect-free settings model (``SIRA_SEEK_SYNC_*`` env vars).

Everything that changes what gets written (tau, phrase limit, text budget, enrichment version)
lives here, so a run report can record the exact configuration it ran with.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sira_seek.config import default_home
from sira_seek.sira.settings import DEFAULT_TAU

from .document_prompt import CorpusTask

# Bump when the shape of what sira-sync writes changes: every document becomes stale.
ENRICHMENT_VERSION = 1


class SyncSettings(BaseSettings):
    """How one sira-sync run reads, filters and writes enrichment."""

    model_config = SettingsConfigDict(env_prefix="SIRA_SEEK_SYNC_", extra="ignore")

    fields: tuple[str, ...] = Field(
        default=("title", "text"), min_length=1, description="Source fields the LLM reads."
    )
    tau: float = Field(
        default=DEFAULT_TAU,
        gt=0.0,
        le=1.0,
        description="A phrase is dropped when its DF on the raw corpus exceeds tau * |C|.",
    )
    task: CorpusTask = Field(
        default="generic",
        description="Corpus prompt: generic, or the claim / argument / duplicate variant.",
    )
    max_phrases: int = Field(default=10, ge=1, le=10, description="Phrases kept per document.")
    max_categories: int = Field(default=5, ge=0)
    max_phrase_words: int = Field(default=8, ge=1)
    text_budget_chars: int = Field(
        default=4000, ge=200, description="Document text is cut to this many characters."
    )
    page_size: int = Field(default=200, ge=1, le=10_000, description="Docs per scan page.")
    llm_concurrency: int = Field(default=16, ge=1)
    max_conflict_retries: int = Field(
        default=3, ge=0, description="Re-reads of a document that changed mid-run."
    )
    enrichment_version: int = Field(default=ENRICHMENT_VERSION, ge=1)
    state_dir: Path = Field(
        default_factory=lambda: default_home() / "sync",
        description="Checkpoints and failure files live here.",
    )

    @field_validator("fields", mode="before")
    @classmethod
    def _split_fields(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(f.strip() for f in value.split(",") if f.strip())
        return value

"""A document the run has decided to (re-)enrich, as it was read from the index."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .freshness import DocState


class WorkItem(BaseModel):
    """One document to enrich; ``seq_no``/``primary_term`` guard the write against lost updates."""

    doc_id: str
    text: str
    source_hash: str
    state: DocState
    seq_no: int | None = None
    primary_term: int | None = None
    source: dict[str, Any] | None = None

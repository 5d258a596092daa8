"""Which sira-seek fields an index actually has, read once from its mapping.

SIRA must work on an index that was never enriched (only ``contents``), and use the enrichment
fields as soon as sira-sync has added them, without the caller saying which case applies.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from sira_seek.backend import SearchBackend
from sira_seek.fields import (
    CATEGORIES,
    CONTENTS,
    CONTENTS_SHINGLES,
    PHRASE_SHINGLES,
    PHRASES,
)


class SiraIndexError(ValueError):
    """The index cannot be searched with SIRA; the message says what to do."""


class IndexProfile(BaseModel):
    """The searchable fields SIRA found in one index."""

    index: str
    text_field: str = CONTENTS
    shingle_field: str | None = CONTENTS_SHINGLES
    phrase_field: str | None = None
    phrase_shingle_field: str | None = None
    category_field: str | None = None

    @property
    def has_enrichment(self) -> bool:
        return self.phrase_field is not None

    def unigram_fields(self) -> list[str]:
        return [f for f in (self.text_field, self.phrase_field) if f]

    def shingle_fields(self) -> list[str]:
        return [f for f in (self.shingle_field, self.phrase_shingle_field) if f]

    def df_fields(self) -> list[str]:
        """Every field whose document frequency counts toward a candidate's DF."""
        return [*self.unigram_fields(), *self.shingle_fields()]


def _field_paths(properties: dict[str, Any], prefix: str = "") -> set[str]:
    paths: set[str] = set()
    for name, spec in properties.items():
        path = f"{prefix}{name}"
        if "type" in spec:
            paths.add(path)
        for sub in spec.get("fields", {}):
            paths.add(f"{path}.{sub}")
        if "properties" in spec:
            paths |= _field_paths(spec["properties"], f"{path}.")
    return paths


def profile_from_mapping(index: str, mapping: dict[str, Any]) -> IndexProfile:
    """Build the profile from a ``GET index/_mapping`` answer (first index if an alias)."""
    if not mapping:
        raise SiraIndexError(f"index {index!r} has no mapping")
    body = next(iter(mapping.values()))
    props = body.get("mappings", {}).get("properties", {})
    paths = _field_paths(props)
    if CONTENTS not in paths:
        raise SiraIndexError(
            f"index {index!r} has no `{CONTENTS}` field: SIRA searches the sira-seek layout; "
            "create the index with `sira-seek ingest`"
        )
    return IndexProfile(
        index=index,
        shingle_field=CONTENTS_SHINGLES if CONTENTS_SHINGLES in paths else None,
        phrase_field=PHRASES if PHRASES in paths else None,
        phrase_shingle_field=PHRASE_SHINGLES if PHRASE_SHINGLES in paths else None,
        category_field=CATEGORIES if CATEGORIES in paths else None,
    )


def read_index_profile(backend: SearchBackend, index: str) -> IndexProfile:
    """The profile of ``index``; enrichment fields count only once some document fills them,
    so an index that was never enriched gets plain contents clauses (and cheaper DF checks)."""
    if not backend.index_exists(index):
        raise SiraIndexError(f"index {index!r} does not exist: run `sira-seek ingest` first")
    profile = profile_from_mapping(index, backend.get_mapping(index))
    updates: dict[str, Any] = {}
    if profile.phrase_field and not backend.count(index, {"exists": {"field": PHRASES}}):
        updates |= {"phrase_field": None, "phrase_shingle_field": None}
    if profile.category_field and not backend.count(index, {"exists": {"field": CATEGORIES}}):
        updates["category_field"] = None
    return profile.model_copy(update=updates) if updates else profile

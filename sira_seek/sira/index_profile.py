"""Which sira-seek fields an index actually has, read once from its mapping.

SIRA must work on an index that was never enriched (only ``contents``), and use the enrichment
fields as soon as sira-sync has added them, without the caller saying which case applies.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from sira_seek.backend import SearchBackend
from sira_seek.fields import (
    CATEGORIES,
    CONTENTS,
    CONTENTS_SHINGLES,
    PHRASE_SHINGLES,
    PHRASES,
)

from .weighted_query import TextClause

# How enrichment phrases are scored, read from the mapping (mappings/enrichment_layouts.json):
# - "separate_field": phrases are their own field, summed with contents (``most_fields``): own
#   IDF, length norm and saturation (the layout of indexes enriched before the in-contents one);
# - "in_contents": phrases ``copy_to`` contents, so they are counted as the document's own text
#   (TF, length, average length, IDF), as the SIRA paper adds them; queries search contents only;
# - "combined_fields": separate fields scored as one (BM25F, ``combined_fields``), chosen by the
#   index's ``_meta`` on engines that have the query.
EnrichmentScoring = Literal["separate_field", "in_contents", "combined_fields"]


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
    enrichment_scoring: EnrichmentScoring = "separate_field"
    contents_enriched: bool = False

    @property
    def has_enrichment(self) -> bool:
        return self.phrase_field is not None or self.contents_enriched

    @property
    def combined(self) -> bool:
        """Score text and phrase fields as one field (BM25F) rather than summing them."""
        return self.enrichment_scoring == "combined_fields" and self.phrase_field is not None

    def unigram_fields(self) -> list[str]:
        return [f for f in (self.text_field, self.phrase_field) if f]

    def text_clause(self, name: str, text: str, *, ngrams: bool = False) -> TextClause:
        """The clause that scores ``text`` on this index's layout (with the n-gram tier when
        ``ngrams``)."""
        return TextClause(
            name=name,
            text=text,
            fields=self.unigram_fields(),
            ngram_fields=self.shingle_fields() if ngrams else [],
            combined=self.combined,
        )

    def shingle_fields(self) -> list[str]:
        return [f for f in (self.shingle_field, self.phrase_shingle_field) if f]

    def df_fields(self) -> list[str]:
        """Every field whose document frequency counts toward a candidate's DF."""
        return [*self.unigram_fields(), *self.shingle_fields()]


def _copy_targets(spec: dict[str, Any]) -> set[str]:
    targets = spec.get("copy_to") or []
    return {targets} if isinstance(targets, str) else set(targets)


def enrichment_scoring_of(body: dict[str, Any]) -> EnrichmentScoring:
    """The scoring layout of one index's ``GET _mapping`` body.

    Decided by the mapping itself, never by a setting, so an index enriched with the old
    separate-field layout keeps being searched that way until it is migrated.
    """
    mappings = body.get("mappings", {})
    props = mappings.get("properties", {})
    phrases = props.get("sira_enrichment", {}).get("properties", {}).get("phrases", {})
    if CONTENTS in _copy_targets(phrases):
        return "in_contents"
    meta = (mappings.get("_meta") or {}).get("sira_seek") or {}
    if meta.get("enrichment_scoring") == "combined_fields":
        return "combined_fields"
    return "separate_field"


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
    scoring = enrichment_scoring_of(body)
    # In contents, phrases are already searched (and counted in DF) through contents.
    separate = scoring != "in_contents"
    return IndexProfile(
        index=index,
        shingle_field=CONTENTS_SHINGLES if CONTENTS_SHINGLES in paths else None,
        phrase_field=PHRASES if separate and PHRASES in paths else None,
        phrase_shingle_field=PHRASE_SHINGLES if separate and PHRASE_SHINGLES in paths else None,
        category_field=CATEGORIES if CATEGORIES in paths else None,
        enrichment_scoring=scoring,
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
    if profile.enrichment_scoring == "in_contents":
        updates["contents_enriched"] = bool(backend.count(index, {"exists": {"field": PHRASES}}))
    if profile.category_field and not backend.count(index, {"exists": {"field": CATEGORIES}}):
        updates["category_field"] = None
    return profile.model_copy(update=updates) if updates else profile


class ProfileCache:
    """Each index's profile, read at most once per ``ttl_s`` seconds, for a long-lived caller
    (``sira-seek serve``) that searches the same indexes over and over.

    Reading a profile takes three to five engine requests (the index, its mapping, counts of
    enriched documents); a search itself takes a few more, so a server reading it on every
    request spends about half its engine requests on a profile that changes only when the
    index is recreated or first enriched. The lifetime bounds how long such a change goes
    unseen. The caller still checks that the index exists on every request (a deleted index
    stays a 404 at once) and calls ``forget`` when it does not or a search on it failed, so a
    recreated index is read again. Thread-safe: the server's worker threads share it.
    """

    def __init__(self, ttl_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._profiles: dict[str, tuple[float, IndexProfile]] = {}

    def get(self, backend: SearchBackend, index: str) -> IndexProfile:
        """The profile of ``index``: the cached one while younger than ``ttl_s``, else read
        now (``read_index_profile``; outside the lock, so a slow read blocks no other index)."""
        now = self._clock()
        with self._lock:
            cached = self._profiles.get(index)
        if cached is not None and now - cached[0] < self.ttl_s:
            return cached[1]
        profile = read_index_profile(backend, index)
        if self.ttl_s > 0:
            with self._lock:
                self._profiles[index] = (now, profile)
        return profile

    def forget(self, index: str) -> None:
        """Drop ``index``'s profile: the next ``get`` reads it from the cluster."""
        with self._lock:
            self._profiles.pop(index, None)

"""When an index cannot take the enrichment fields in place: copy it into a new index that can,
then (on request) move an alias to the copy, atomically.

Mappings cannot change a field's type or gain analyzers on an open index, so the way out is a
new index: the old one's analysis, similarity and mappings, plus the sira-seek analyzers and the
enrichment fields. Documents are copied through a point-in-time scan and bulk writes (no
``_reindex`` module needed); the alias swap is one ``_aliases`` request, so searchers see either
the old index or the complete new one. The old index is never modified or deleted.
Engine-neutral REST throughout (the same calls on Elasticsearch and OpenSearch).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from sira_seek.backend import SearchBackend
from sira_seek.index_layout import analysis_variant, load_mapping_file
from sira_seek.workflows import validation
from sira_seek.workflows.errors import InvalidInput

from .mapping import MappingConflictError, enrichment_properties

if TYPE_CHECKING:
    from sira_seek.workflows.progress import Progress

COPY_PAGE = 1000


class MigrationReport(BaseModel):
    source_index: str
    target_index: str
    copied: int
    alias: str | None = None
    alias_moved_from: list[str] = []


def target_index_body(
    backend: SearchBackend, source_index: str, *, shards: int = 1, replicas: int = 0
) -> dict[str, Any]:
    """Settings and mappings for the copy: the source's, plus what enrichment and, on a
    cluster with vectors, a vector field need (``vector_index_settings``)."""
    (index_settings,) = backend.index_settings(source_index).values()
    (mapping_body,) = backend.get_mapping(source_index).values()
    analysis = copy.deepcopy(index_settings.get("analysis", {}))
    sira_analysis = load_mapping_file(f"analysis-{analysis_variant(backend.capabilities())}.json")
    for section, entries in sira_analysis.items():
        existing = analysis.setdefault(section, {})
        for name, spec in entries.items():
            if name in existing and _as_settings(existing[name]) != _as_settings(spec):
                raise MappingConflictError(
                    f"{source_index!r} defines its own {section} {name!r}; sira-seek needs that "
                    "name for its own analyzer"
                )
            existing[name] = spec
    settings: dict[str, Any] = {
        "index": {"number_of_shards": shards, "number_of_replicas": replicas},
        "analysis": analysis,
    }
    if "similarity" in index_settings:
        settings["index"]["similarity"] = copy.deepcopy(index_settings["similarity"])
    if backend.capabilities().vectors:
        # Ready for ``sira-sync --embed``: OpenSearch's index.knn is taken at creation only,
        # and an index made without it is migrated for exactly that.
        settings["index"].update(backend.vector_index_settings())
    mappings = copy.deepcopy(mapping_body.get("mappings", {}))
    props = mappings.setdefault("properties", {})
    if "phrases" in props.get("sira_enrichment", {}).get("properties", {}) and "sira_sync" in props:
        # sira-sync's own fields in an older layout: the copy gets the default layout, and
        # re-indexing every document puts its phrases where that layout wants them (contents).
        del props["sira_enrichment"], props["sira_sync"]
    layout = None if "contents" in props else "separate_field"
    for name in enrichment_properties(layout):
        if name in props:
            raise MappingConflictError(
                f"{source_index!r} already has a field {name!r} of its own: rename it first"
            )
    props.update(enrichment_properties(layout))
    return {"settings": settings, "mappings": mappings}


def _as_settings(value: Any) -> Any:
    """A value as index settings echo it back (numbers and booleans as strings), so the
    analyzers of an index sira-seek created compare equal to mappings/."""
    if isinstance(value, dict):
        return {k: _as_settings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_settings(v) for v in value]
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _documents(backend: SearchBackend, index: str) -> Iterator[dict[str, Any]]:
    for page in backend.scan(index, page_size=COPY_PAGE):
        for hit in page:
            yield {"_id": hit.id, **(hit.source or {})}


def check_migration_names(source_index: str, target_index: str, alias: str | None) -> None:
    """Every name a migration reads, creates or moves is one concrete name by the one
    index-name rule (no wildcard, list or ``_all``): ``InvalidInput`` before any request."""
    validation.index_name(source_index, field="index")
    validation.index_name(target_index, field="into")
    if alias is not None:
        validation.index_name(alias, field="alias")


def _check_alias_to_move(backend: SearchBackend, alias: str, source_concrete: str) -> None:
    """``alias`` is a new name or an alias of at most one index, never an index itself.

    Moving an alias takes it off every index it points at: an alias of several would leave
    searchers without all but one of them, so it is refused (``InvalidInput``, field
    ``alias``) before the copy starts."""
    indexes, _ = backend.resolve_name(alias)
    if indexes == [alias]:
        hint = (
            "point searchers at an alias first, or use the new index's name"
            if alias == source_concrete
            else "give an alias name"
        )
        raise InvalidInput(f"{alias!r} is an index, not an alias: {hint}", field="alias")
    if len(indexes) > 1:
        raise InvalidInput(
            f"{alias!r} points at {len(indexes)} indexes ({', '.join(indexes)}); moving it "
            "would take all of them out of it: give an alias of one index",
            field="alias",
        )


def migrate_index(
    backend: SearchBackend,
    source_index: str,
    target_index: str,
    *,
    alias: str | None = None,
    shards: int = 1,
    progress: Progress | None = None,
) -> MigrationReport:
    """Create ``target_index``, copy every document, and move ``alias`` to it if given.

    Names are concrete only (``check_migration_names``); ``alias``, if it exists, points at
    one index at most. Both are checked before anything is created or moved. ``progress``
    hears the source's document count, then each page copied."""
    check_migration_names(source_index, target_index, alias)
    if backend.index_exists(target_index):
        raise MappingConflictError(f"{target_index!r} already exists; pick a new index name")
    concrete = list(backend.aliases(source_index))
    if len(concrete) > 1:
        raise InvalidInput(
            f"{source_index!r} is an alias of {len(concrete)} indexes ({', '.join(concrete)}): "
            "name the one index to copy",
            field="index",
        )
    if not concrete:
        raise MappingConflictError(f"{source_index!r} must name exactly one index to copy")
    source_concrete = concrete[0]
    if alias is not None:
        _check_alias_to_move(backend, alias, source_concrete)
    backend.create_index(target_index, target_index_body(backend, source_concrete, shards=shards))
    if progress is not None:
        progress.start(backend.count(source_concrete))
    copied = 0
    batch: list[dict[str, Any]] = []
    for doc in _documents(backend, source_concrete):
        batch.append(doc)
        if len(batch) >= COPY_PAGE:
            copied += _write(backend, target_index, batch, progress)
            batch = []
    copied += _write(backend, target_index, batch, progress)
    backend.refresh(target_index)
    if backend.count(target_index) != backend.count(source_concrete):
        raise MappingConflictError(
            f"copy incomplete: {target_index!r} has {backend.count(target_index)} documents, "
            f"{source_concrete!r} {backend.count(source_concrete)}; the alias was not moved"
        )
    report = MigrationReport(source_index=source_concrete, target_index=target_index, copied=copied)
    if alias is not None:
        moved_from = [i for i, names in backend.aliases(alias).items() if alias in names]
        actions: list[dict[str, Any]] = [
            {"remove": {"index": i, "alias": alias}} for i in moved_from
        ]
        actions.append({"add": {"index": target_index, "alias": alias}})
        backend.update_aliases(actions)
        report.alias, report.alias_moved_from = alias, moved_from
    return report


def _write(
    backend: SearchBackend,
    index: str,
    docs: list[dict[str, Any]],
    progress: Progress | None,
) -> int:
    if not docs:
        return 0
    result = backend.bulk_upsert(index, docs)
    if result.errors:
        first = result.errors[0]
        raise MappingConflictError(
            f"copying into {index!r} failed for {len(result.errors)} documents "
            f"(first: {first.id}: {first.reason}); the alias was not moved"
        )
    if progress is not None:
        progress.advance(len(docs))
    return len(docs)

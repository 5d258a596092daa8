"""Load a BEIR corpus into an index: idempotent, and never dropping enrichment already there."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from .backend import BulkItemError, SearchBackend
from .corpus import BadRecord, Document, ReadReport, corpus_file, read_corpus
from .fields import SOURCE_FIELDS, TEXT, TITLE, VECTOR
from .workflows import validation
from .workflows.errors import InvalidInput

if TYPE_CHECKING:
    from .embed import Embedder
    from .workflows.progress import Progress

logger = logging.getLogger(__name__)

CHUNK = 500


class IngestReport(BaseModel):
    index: str
    created_index: bool
    written: int = 0
    unchanged: int = 0
    embedded: int = 0
    """Documents given a vector by this run (``--embed``); unchanged ones already had theirs."""
    embedder: str | None = None
    """The embedder's model (``--embed``), recorded in the index's ``_meta``."""
    bad_records: list[BadRecord] = Field(default_factory=list)
    failed: list[BulkItemError] = Field(default_factory=list)
    seconds: float = 0.0


def _chunks(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    it = iter(docs)
    while chunk := list(islice(it, size)):
        yield chunk


class IngestTargetError(ValueError):
    """The index or alias cannot take a corpus; raised before anything is written."""


def check_ingest_target(backend: SearchBackend, index: str) -> None:
    """Refuse, up front and in plain words, targets where every write would fail."""
    indexes, write_index = backend.resolve_name(index)
    if not indexes:
        return
    if write_index is None:
        raise IngestTargetError(
            f"{index!r} is an alias of {len(indexes)} indexes ({', '.join(indexes)}) with no "
            "write index: name one index, or mark one with is_write_index."
        )
    mapping = backend.get_mapping(write_index).get(write_index, {}).get("mappings", {})
    props = mapping.get("properties", {})
    for field in SOURCE_FIELDS:
        kind = props.get(field, {}).get("type", "text" if field in props else None)
        if kind not in (None, "text", "match_only_text"):
            raise IngestTargetError(
                f"index {write_index!r} maps {field!r} as {kind}; a corpus needs text there. "
                "Use another --index (sira-seek creates it) or --recreate."
            )


def delete_for_recreate(backend: SearchBackend, index: str) -> bool:
    """Delete ``index`` so that ingest starts it afresh; True if there was one to delete.

    Destructive, so it takes a concrete name only: ``index`` must pass the one index-name rule
    (``validation.index_name``: no wildcard, list, ``_all`` or exclusion), checked before any
    request, and must name an index, not an alias. An alias is refused even when it points at
    one index: deleting that index drops the alias with it (and its filter, routing and write
    flag), and ingest would then create an index under the alias's name, so the user names the
    index instead. ``InvalidInput`` (field ``index``) either way; nothing is deleted.
    """
    validation.index_name(index)
    indexes, _ = backend.resolve_name(index)
    if not indexes:
        return False
    if indexes != [index]:
        raise InvalidInput(
            f"{index!r} is an alias (of {', '.join(indexes)}); recreate deletes one index by "
            "its own name: give that index's name (its aliases are deleted with it)",
            field="index",
        )
    logger.info("recreate: deleting index %s", index)
    backend.delete_index(index)
    return True


def _embed(
    backend: SearchBackend, index: str, embedder: Embedder, rows: list[dict[str, Any]]
) -> int:
    """Add the vector to each row that needs one (new, changed, or without one); how many.

    One request finds which of the chunk's documents are already embedded with their current
    title and text, so a re-run embeds nothing for an unchanged corpus (and the upsert is a
    no-op). Each embedded row also gets the ``sira_embedding`` record ``sira-sync --embed``
    writes (the hash of its title and text, the model, the time), so a later sync run finds it
    current and embeds nothing again."""
    from .sira.dense import passage_text
    from .sync.embed_runner import EMBED_META, EmbeddingRecord
    from .sync.records import utc_now_ms
    from .sync.source_text import source_hash

    query = {
        "query": {
            "bool": {
                "filter": [
                    {"ids": {"values": [r["_id"] for r in rows]}},
                    {"exists": {"field": VECTOR}},
                ]
            }
        },
        "size": len(rows),
        "_source": [TITLE, TEXT],
    }
    done = {
        h.id: ((h.source or {}).get(TITLE), (h.source or {}).get(TEXT))
        for h in backend.search(index, query).hits
    }
    todo = [r for r in rows if done.get(r["_id"]) != (r[TITLE], r[TEXT])]
    if todo:
        vectors = embedder.embed_documents([passage_text(r[TITLE], r[TEXT]) for r in todo])
        now = utc_now_ms()
        for row, vector in zip(todo, vectors, strict=True):
            row[VECTOR] = vector
            row[EMBED_META] = EmbeddingRecord(
                source_hash=source_hash(row, (TITLE, TEXT)), model=embedder.model, embedded_at=now
            ).model_dump()
    return len(todo)


def ingest_corpus(
    backend: SearchBackend,
    index: str,
    path: Path,
    *,
    shards: int = 1,
    replicas: int = 0,
    recreate: bool = False,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
) -> IngestReport:
    """Upsert every good record by ``_id``; bad ones are reported with line numbers.

    Upserts (partial updates) rather than index operations: re-ingesting the same corpus
    changes nothing (no-ops), and enrichment fields written by sira-sync survive.
    ``recreate`` deletes the index first, by its concrete name only (``delete_for_recreate``).
    ``index`` is checked by the one index-name rule before any request (``InvalidInput``).

    ``embedder`` (``--embed``) gives every document the vector of its title and text
    (``sira.dense.passage_text``) in ``fields.VECTOR``, mapped by the engine's
    ``vector_mapping``, the model recorded in the index's ``_meta``; an index embedded with
    another model is refused before anything is written (``EmbedderMismatchError``). A re-run
    embeds only the documents that are new, changed, or have no vector yet.

    ``progress`` hears the file's line count (a quick pre-pass: a total gives an ETA; blank
    and bad lines are never sent, so a file with some ends short of it), then each chunk.
    """
    start = time.perf_counter()
    validation.index_name(index)
    if recreate:
        delete_for_recreate(backend, index)
    check_ingest_target(backend, index)
    if embedder is not None:
        from .sira.dense import check_embedder, read_index_embedding

        if backend.index_exists(index):
            check_embedder(read_index_embedding(backend, index), embedder, index)
    created = backend.ensure_corpus_index(index, shards=shards, replicas=replicas)
    report = IngestReport(index=index, created_index=created)
    if embedder is not None:
        from .sira.dense import record_embedder
        from .sync.embed_runner import EMBED_META, EMBED_META_MAPPING

        record_embedder(backend, index, embedder)
        for name in backend.index_settings(index):  # the record's mapping, as sync --embed's
            backend.put_mapping(name, {EMBED_META: EMBED_META_MAPPING})
        report.embedder = embedder.model
    if progress is not None:
        from .workflows.progress import count_lines

        progress.start(count_lines(corpus_file(path)))
    reads = ReadReport()
    for chunk in _chunks(read_corpus(path, reads), CHUNK):
        rows: list[dict[str, Any]] = [
            {"_id": d.id, "title": d.title, "text": d.text} for d in chunk
        ]
        if embedder is not None:
            report.embedded += _embed(backend, index, embedder, rows)
        result = backend.bulk_upsert(index, rows)
        report.written += result.succeeded
        report.unchanged += result.noop
        report.failed += result.errors
        if progress is not None:
            progress.advance(len(chunk))
    backend.refresh(index)
    report.bad_records = reads.bad
    report.seconds = round(time.perf_counter() - start, 3)
    logger.info(
        "ingest %s: %d written, %d unchanged, %d embedded, %d bad records, %d failed in %.1f s",
        index,
        report.written,
        report.unchanged,
        report.embedded,
        len(report.bad_records),
        len(report.failed),
        report.seconds,
    )
    return report

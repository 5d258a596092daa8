"""``sira-sync --embed``: add vectors to an index you already run, the way enrichment runs.

Each document of the slice whose vector is missing or stale gets ``fields.VECTOR`` (the vector
of its source fields, ``embed_text``) and a small ``sira_embedding`` record (the hash of those
fields, the model, when) in one guarded partial update (``if_seq_no``/``if_primary_term``): the
source fields are never written, and a document edited since it was read answers 409 and is
re-read and embedded from its new text, never overwritten with a vector of the old one. A
document is current when its record's hash is the hash of its fields now and its model is the
run's, so a re-run embeds only new and changed documents, and a killed run resumes (``resume``)
by leaving out what it already wrote, as enrichment does (``resumable_scan``,
``checkpoint``); ``slice`` splits the work between workers by a hash of ``_id``.

The index must be able to take a vector field: on OpenSearch ``index.knn`` is a static setting
(``vector_index_settings``), so an index created without it is refused with the way out
(``sira-sync migrate --into NEW`` creates the copy with it). The vector field and the embedder
are recorded as ``ingest --embed`` records them (``sira.dense.record_embedder``), and an index
embedded with another model is refused (``EmbedderMismatchError``).

The CPU default and an ``openai:`` server (64 texts per request, ``embed.openai``) embed as
the run goes; ``--embedder batch:DIR#MODEL`` writes the requests of a provider's batch API and
imports its output instead (``embed_batch``, which reuses this runner's scan and writes).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from sira_seek.backend import PartialUpdate, SearchBackend, SearchHit
from sira_seek.fields import VECTOR
from sira_seek.input_errors import InputError

from .checkpoint import Checkpoint, RunStateStore, resume_or_start
from .records import EnrichmentFingerprint, utc_now_ms
from .resumable_scan import scan_pages
from .run_report import RunCounts
from .settings import SyncSettings
from .slicing import SliceSpec
from .source_text import _as_text, field_value, source_hash

if TYPE_CHECKING:
    from sira_seek.embed import Embedder, Similarity

logger = logging.getLogger(__name__)

EMBED_META = "sira_embedding"
"""The per-document record of what its vector was made from (``EmbeddingRecord``)."""

EMBED_META_MAPPING: dict[str, Any] = {
    "properties": {
        "source_hash": {"type": "keyword"},
        "model": {"type": "keyword"},
        "embedded_at": {"type": "date"},
    }
}

EMBED_TEXT_ID = "fields-joined-v1"
"""What the vector is made of (``embed_text``); in the checkpoint's fingerprint, so a resume
under another rule is refused."""

MAX_WRITE_ERROR_SAMPLES = 20


class IndexNeedsVectorSettingsError(InputError):
    """The index was created without a static setting a vector field needs (OpenSearch's
    ``index.knn``): it cannot be given vectors in place."""


class EmbeddingRecord(BaseModel):
    """The ``sira_embedding`` object stored beside a document's vector."""

    source_hash: str | None = None
    model: str | None = None
    embedded_at: str | None = None


class BatchRoundReport(BaseModel):
    """An offline batch run's files: vectors imported from the outputs, requests written."""

    directory: str
    imported: int = Field(description="Vectors written from the folder's outputs.")
    requested: int = Field(description="Requests written to the next round's file.")
    requests_file: str | None = None
    output_file: str | None = Field(default=None, description="Where its output must go.")
    left_for_later: int = Field(
        default=0, description="Documents past a round's request limit: asked in a later one."
    )
    bad_lines: int = Field(default=0, description="Malformed output lines, skipped.")
    bad_line_samples: list[str] = Field(default_factory=list)


class EmbedReport(BaseModel):
    """What one ``sira-sync --embed`` run read and wrote."""

    index: str
    slice: str
    run_id: str
    model: str
    embedder: str
    dimensions: int
    fields: list[str]
    doc_count: int
    dry_run: bool
    resumed: bool
    seconds: float
    docs_per_s: float = Field(description="Documents read per second by this run.")
    counts: RunCounts = Field(description="'enriched' counts the documents embedded.")
    write_error_samples: list[str] = Field(default_factory=list)
    batch: BatchRoundReport | None = Field(
        default=None, description="--embedder batch:DIR#MODEL: what this run read and wrote."
    )


def embed_text(source: Mapping[str, Any] | None, fields: Sequence[str]) -> str:
    """The text a document's vector is made of: its fields' values, stripped, the non-empty
    ones joined by ". "; for ``title,text`` exactly ``sira.dense.passage_text``, what
    ``ingest --embed`` embeds, so both give a document the same vector."""
    parts = [_as_text(field_value(source, f)).strip() for f in fields]
    return ". ".join(p for p in parts if p)


def prepare_index(
    backend: SearchBackend, index: str, embedder: Embedder, *, dry_run: bool = False
) -> None:
    """Refuse an index that cannot hold (or compare with) this embedder's vectors; unless
    ``dry_run``, add the vector field and the record's mapping and record the embedder."""
    from sira_seek.sira.dense import check_embedder, read_index_embedding

    check_vector_index(backend, index, embedder.dimensions, embedder.similarity)
    check_embedder(read_index_embedding(backend, index), embedder, index)
    if not dry_run:
        record_vectors(backend, index, embedder)


def check_vector_index(
    backend: SearchBackend, index: str, dimensions: int, similarity: Similarity
) -> None:
    """Refuse an index that does not exist, an engine without vectors, and an index created
    without the static settings a vector field needs (``IndexNeedsVectorSettingsError``)."""
    needed = backend.vector_index_settings()
    if not backend.index_exists(index):
        raise InputError(f"index {index!r} does not exist: ingest it first")
    backend.vector_mapping(dimensions, similarity)  # no vectors: refused here
    for name, settings in backend.index_settings(index).items():
        missing = {
            k: v for k, v in needed.items() if str(settings.get(k)).lower() != str(v).lower()
        }
        if missing:
            wanted = ", ".join(f"index.{k}: {str(v).lower()}" for k, v in missing.items())
            raise IndexNeedsVectorSettingsError(
                f"index {name!r} was created without {wanted}, which "
                f"{backend.info.engine} accepts only when an index is created, so vectors "
                f"cannot be added in place. Copy it into a new index that has it, then embed "
                f"that one: sira-sync migrate --index {index} --into {name}-vectors "
                f"[--alias ALIAS], then sira-sync --index {name}-vectors --embed"
            )


def record_vectors(backend: SearchBackend, index: str, embedder: Embedder) -> None:
    """The vector field and the embedder in the index mapping (``sira.dense``), and the
    mapping of the per-document record."""
    from sira_seek.sira.dense import record_embedder

    record_embedder(backend, index, embedder)
    for name in backend.index_settings(index):
        backend.put_mapping(name, {EMBED_META: EMBED_META_MAPPING})


def processed_by_embed_run_query(checkpoint: Checkpoint) -> dict[str, Any]:
    """Documents this run already embedded: left out of a resumed scan."""
    return {
        "bool": {
            "must_not": [
                {
                    "bool": {
                        "filter": [
                            {
                                "range": {
                                    f"{EMBED_META}.embedded_at": {"gte": checkpoint.started_at}
                                }
                            },
                            {"term": {f"{EMBED_META}.model": checkpoint.fingerprint.model}},
                        ]
                    }
                }
            ]
        }
    }


class EmbedRunner:
    """Embeds the documents of one slice whose vector is missing or stale; see the module."""

    def __init__(
        self,
        backend: SearchBackend,
        index: str,
        embedder: Embedder,
        settings: SyncSettings | None = None,
        *,
        slice_spec: SliceSpec | None = None,
        dry_run: bool = False,
        resume: bool = False,
        on_page: Callable[[int, RunCounts], None] | None = None,
    ) -> None:
        self.backend = backend
        self.index = index
        self.embedder = embedder
        self.settings = settings or SyncSettings()
        self.slice = slice_spec or SliceSpec()
        self.dry_run = dry_run
        self.resume = resume
        self.on_page = on_page
        self.fields = list(self.settings.fields)
        self.fingerprint = EnrichmentFingerprint(
            model=embedder.model, prompt_id=EMBED_TEXT_ID, enrichment_version=1
        )
        # Beside enrichment's checkpoints, never in their place: both may run on one index.
        self.store = RunStateStore(self.settings.state_dir / "embed", index, self.slice)
        self.counts = RunCounts()
        self.write_error_samples: list[str] = []

    def run(self) -> EmbedReport:
        started = time.perf_counter()
        self._prepare()
        checkpoint, resumed = self._checkpoint()
        self.counts = RunCounts(**checkpoint.counts) if resumed else RunCounts()
        seen_before = self.counts.seen
        if not self.dry_run:
            self.store.save(checkpoint)
        self.backend.refresh(self.index)
        doc_count = self.backend.count(self.index)
        pages = scan_pages(
            self.backend,
            self.index,
            checkpoint,
            fields=self.fields,
            page_size=self.settings.page_size,
            exclude_done=resumed,
            restartable=not self.dry_run,
            counts=self.counts,
            meta_field=EMBED_META,
            done_query=processed_by_embed_run_query,
        )
        for page in pages:
            todo = [hit for hit in page if self._owned_and_stale(hit)]
            if todo and not self.dry_run:
                self._embed(todo, attempt=0)
            if not self.dry_run:
                checkpoint.pages += 1
                checkpoint.counts = self.counts.model_dump()
                self.store.save(checkpoint)
            if self.on_page:
                self.on_page(len(page), self.counts)
        if not self.dry_run:
            self.backend.refresh(self.index)
            checkpoint.finished = True
            checkpoint.counts = self.counts.model_dump()
            self.store.save(checkpoint)
        seconds = time.perf_counter() - started
        return EmbedReport(
            index=self.index,
            slice=str(self.slice),
            run_id=checkpoint.run_id,
            model=self.embedder.model,
            embedder=self.embedder.spec,
            dimensions=self.embedder.dimensions,
            fields=self.fields,
            doc_count=doc_count,
            dry_run=self.dry_run,
            resumed=resumed,
            seconds=round(seconds, 3),
            docs_per_s=round((self.counts.seen - seen_before) / seconds, 1) if seconds else 0.0,
            counts=self.counts,
            write_error_samples=self.write_error_samples,
        )

    def _prepare(self) -> None:
        prepare_index(self.backend, self.index, self.embedder, dry_run=self.dry_run)

    def _vectors(
        self, hits: list[SearchHit], texts: Mapping[str, str]
    ) -> list[tuple[SearchHit, list[float]]]:
        """The vector of each of ``hits`` that has one now (all of them, here: the embedder
        is asked; a batch run's only those its outputs hold)."""
        vectors = self.embedder.embed_documents([texts[h.id] for h in hits])
        return list(zip(hits, vectors, strict=True))

    def _checkpoint(self) -> tuple[Checkpoint, bool]:
        fresh = Checkpoint(
            index=self.index, slice=self.slice, fields=self.fields, fingerprint=self.fingerprint
        )
        return resume_or_start(
            self.store,
            fresh,
            resume=self.resume,
            run="an --embed run",
            describe=lambda fingerprint: fingerprint.model,
        )

    def _state(self, hit: SearchHit) -> str:
        raw = (hit.source or {}).get(EMBED_META)
        record = EmbeddingRecord.model_validate(raw) if isinstance(raw, dict) else None
        if record is None or record.source_hash is None:
            return "new"
        if record.source_hash != source_hash(hit.source, self.fields):
            return "changed"
        return "current" if record.model == self.embedder.model else "outdated"

    def _owned_and_stale(self, hit: SearchHit) -> bool:
        if not self.slice.owns(hit.id):
            return False
        self.counts.seen += 1
        state = self._state(hit)
        self.counts.add(state)
        return state != "current"

    def _embed(self, hits: list[SearchHit], attempt: int) -> None:
        """Embed and write ``hits``; re-read and redo the ones changed since they were read."""
        texts = {h.id: embed_text(h.source, self.fields) for h in hits}
        empty = [h for h in hits if not texts[h.id]]
        self.counts.add("no_input", len(empty))
        hits = [h for h in hits if texts[h.id]]
        if not hits:
            return
        found = self._vectors(hits, texts)
        hits = [hit for hit, _ in found]
        if not hits:
            return
        now = utc_now_ms()
        updates = [
            PartialUpdate(
                id=hit.id,
                doc={
                    VECTOR: vector,
                    EMBED_META: EmbeddingRecord(
                        source_hash=source_hash(hit.source, self.fields),
                        model=self.embedder.model,
                        embedded_at=now,
                    ).model_dump(),
                },
                if_seq_no=hit.seq_no,
                if_primary_term=hit.primary_term,
            )
            for hit, vector in found
        ]
        result = self.backend.bulk_partial_update(self.index, updates)
        errors = {e.id: e for e in result.errors}
        for err in result.errors:
            if err.status != 409:
                self.counts.add("write_errors")
                if len(self.write_error_samples) < MAX_WRITE_ERROR_SAMPLES:
                    self.write_error_samples.append(f"{err.id}: {err.status} {err.reason}")
        self.counts.add("enriched", sum(1 for h in hits if h.id not in errors))
        conflicts = [h for h in hits if h.id in errors and errors[h.id].status == 409]
        if conflicts:
            self.counts.add("conflicts", len(conflicts))
            self._redo(conflicts, attempt)

    def _redo(self, conflicts: list[SearchHit], attempt: int) -> None:
        if attempt >= self.settings.max_conflict_retries:
            self.counts.add("write_errors", len(conflicts))
            room = max(0, MAX_WRITE_ERROR_SAMPLES - len(self.write_error_samples))
            self.write_error_samples += [
                f"{h.id}: still changing after {attempt} re-reads" for h in conflicts
            ][:room]
            return
        fresh = []
        for old in conflicts:
            hit = self.backend.get(self.index, old.id)
            if hit is None:
                continue  # deleted meanwhile
            if self._state(hit) == "current":
                self.counts.add("current_on_reread")
            else:
                fresh.append(hit)
        if fresh:
            self._embed(fresh, attempt + 1)

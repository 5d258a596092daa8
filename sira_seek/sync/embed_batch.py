"""``sira-sync --index I --embed --embedder batch:DIR#MODEL``: vectors made by a batch job.

The run is ``EmbedRunner``'s (the same scan, the same choice of documents that lack a
vector or whose text changed, the same guarded partial updates and 409 re-reads); only where
a vector comes from differs. Each run reads every round of DIR (``embed.batch``):

1. a document whose vector an output holds, made from the text it has now (its
   ``custom_id`` carries the source hash), gets it in a guarded partial update;
2. every other stale document of the slice becomes one request of the next round's file,
   the model's document prefix before its text (``embed.prefixes``); a document whose
   request failed in ``MAX_FAILED_ROUNDS`` outputs is counted failed, not asked again;
3. if any request was written the run stops with ``WaitingForEmbeddings`` (exit 75, naming
   the file and where its output goes); else it ends as a live run does.

A run while the last round still lacks its output writes nothing and names it again. So a
re-run after a full import asks for nothing and embeds nothing, and a partial output imports
what it has and asks again for the rest.

The index records the model of the spec (a recorded other model is refused before any read of
the outputs is used), the length of the first vector read (another recorded length is refused
before any write), and, as the spec to embed queries with, the one already recorded, else the
live spec of the same model (``cpu`` for the embedded one, else ``openai:URL#MODEL``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sira_seek.backend import SearchBackend, SearchHit
from sira_seek.embed.batch import (
    MAX_BAD_LINE_SAMPLES,
    MAX_REQUESTS_PER_ROUND,
    BatchEmbeddings,
    BatchEmbeddingsError,
    EmbeddingRounds,
    ImportedEmbedder,
    embedding_request,
    live_spec_for,
    request_custom_id,
)
from sira_seek.embed.prefixes import prefixes_for
from sira_seek.llm.batch_files import BatchRequestLine
from sira_seek.llm.batch_rounds import WaitingForBatch
from sira_seek.llm.spec import BatchBackendSpec

from .embed_runner import (
    BatchRoundReport,
    EmbedReport,
    EmbedRunner,
    check_vector_index,
    record_vectors,
)
from .run_report import RunCounts
from .settings import SyncSettings
from .slicing import SliceSpec
from .source_text import source_hash

logger = logging.getLogger(__name__)

_PLACEHOLDER_DIMENSIONS = 384
"""Only to ask the engine whether it takes vectors at all, before any vector was read."""


class WaitingForEmbeddings(WaitingForBatch):  # noqa: N818 - a state, as WaitingForBatch
    """Embedding requests wait in ``requests`` for a batch job's output at ``output``; the
    command line exits 75, and the same command imports the output once it is there."""

    def __init__(
        self, *, requests: Path, output: Path, round: int, count: int, report: EmbedReport | None
    ) -> None:
        super().__init__(requests=requests, output=output, round=round, count=count)
        self.report = report
        batch = report.batch if report is not None else None
        done = f"{batch.imported} vector(s) imported by this run; " if batch else ""
        if batch and batch.bad_lines:
            first = batch.bad_line_samples[0]
            done += f"{batch.bad_lines} malformed output line(s) skipped, first {first}; "
        self.args = (
            f"round {round}: {count} embedding request(s) wait in {requests}; {done}run them "
            f"as a batch job on /v1/embeddings (OpenAI's Batch API, vLLM's run_batch with an "
            f"embedding model, another provider's) and put its output at {output}, then run "
            "the same command again",
        )

    def to_json(self) -> dict[str, Any]:
        report = self.report.model_dump(mode="json") if self.report is not None else None
        return {**super().to_json(), "report": report}


class BatchEmbedRunner(EmbedRunner):
    """``EmbedRunner`` whose vectors come from DIR's batch outputs; see the module."""

    def __init__(
        self,
        backend: SearchBackend,
        index: str,
        spec: BatchBackendSpec,
        settings: SyncSettings | None = None,
        *,
        slice_spec: SliceSpec | None = None,
        dry_run: bool = False,
        resume: bool = False,
        on_page: Callable[[int, RunCounts], None] | None = None,
    ) -> None:
        slice_spec = slice_spec or SliceSpec()
        whole = slice_spec.count == 1
        prefix = "embed" if whole else f"embed-slice{slice_spec.index}of{slice_spec.count}"
        self.spec = spec
        self.rounds = EmbeddingRounds(spec.directory, spec.model, prefix=prefix)
        self.found = BatchEmbeddings()
        self.document_prefix = prefixes_for(spec.model).document
        self.pending: list[BatchRequestLine] = []
        self.queued: set[str] = set()
        self.left_for_later = 0
        self.imported_embedder = ImportedEmbedder(spec, 0, live_spec=live_spec_for(spec.model))
        super().__init__(
            backend,
            index,
            self.imported_embedder,
            settings,
            slice_spec=slice_spec,
            dry_run=dry_run,
            resume=resume,
            on_page=on_page,
        )

    def run(self) -> EmbedReport:
        self.found = self.rounds.read()
        waiting = self.rounds.waiting()
        if waiting is not None and not self.dry_run:
            self._check()
            raise WaitingForEmbeddings(
                requests=self.rounds.requests_path(waiting),
                output=self.rounds.output_path(waiting),
                round=waiting,
                count=self.rounds.request_count(waiting),
                report=None,
            )
        report = super().run()
        report.batch = BatchRoundReport(
            directory=str(self.spec.directory),
            imported=report.counts.enriched,
            requested=0 if self.dry_run else len(self.pending),
            left_for_later=self.left_for_later,
            bad_lines=self.found.bad_line_count,
            bad_line_samples=[str(b) for b in self.found.bad_lines[:MAX_BAD_LINE_SAMPLES]],
        )
        if self.dry_run or not self.pending:
            return report
        number = self.rounds.write_round(self.pending)
        report.batch.requests_file = str(self.rounds.requests_path(number))
        report.batch.output_file = str(self.rounds.output_path(number))
        raise WaitingForEmbeddings(
            requests=self.rounds.requests_path(number),
            output=self.rounds.output_path(number),
            round=number,
            count=len(self.pending),
            report=report,
        )

    def _check(self) -> None:
        """Refuse an index that cannot take these vectors, before any write: no vectors, no
        ``index.knn``, another recorded model, another recorded length."""
        from sira_seek.sira.dense import EmbedderMismatchError, read_index_embedding

        recorded = read_index_embedding(self.backend, self.index)
        dimensions = self.found.dimensions
        probe = dimensions or (recorded.dimensions if recorded else _PLACEHOLDER_DIMENSIONS)
        check_vector_index(self.backend, self.index, probe, self.imported_embedder.similarity)
        if recorded is None:
            return
        if recorded.model != self.spec.model:
            raise EmbedderMismatchError(
                f"index {self.index!r} was embedded with {recorded.model} (embedder "
                f"{recorded.spec!r}), not {self.spec.model}: its vectors would not compare; "
                f"use --embedder batch:{self.spec.directory}#{recorded.model}, or embed a "
                "new index (sira-sync migrate --index I --into NEW, then --embed NEW)"
            )
        if dimensions is not None and dimensions != recorded.dimensions:
            raise BatchEmbeddingsError(
                f"the vectors in {self.spec.directory} have {dimensions} dimensions, index "
                f"{self.index!r} holds {recorded.dimensions} ({recorded.model}): nothing "
                "imported; check the batch job's model"
            )
        self.imported_embedder.spec = recorded.spec  # keep how its queries are embedded

    def _prepare(self) -> None:
        self._check()
        dimensions = self.found.dimensions
        if dimensions is None:
            return  # no vector read yet: the field is mapped once its length is known
        self.imported_embedder.dimensions = dimensions
        if not self.dry_run:
            record_vectors(self.backend, self.index, self.imported_embedder)

    def _vectors(
        self, hits: list[SearchHit], texts: Mapping[str, str]
    ) -> list[tuple[SearchHit, list[float]]]:
        """The outputs' vectors of ``hits``; a request for each of the others."""
        found: list[tuple[SearchHit, list[float]]] = []
        for hit in hits:
            custom_id = request_custom_id(hit.id, source_hash(hit.source, self.fields))
            vector = self.found.vector(custom_id)
            if vector is not None:
                found.append((hit, vector))
            elif self.found.gave_up(custom_id):
                self.counts.add("failed")
                logger.warning("%s: its embedding request failed in every round", hit.id)
            elif custom_id in self.queued:
                continue
            elif len(self.pending) >= MAX_REQUESTS_PER_ROUND:
                self.left_for_later += 1
            else:
                self.queued.add(custom_id)
                text = self.document_prefix + texts[hit.id]
                self.pending.append(embedding_request(custom_id, self.spec.model, text))
        return found

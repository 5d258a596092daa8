"""Offline batch embeddings (``--embedder batch:DIR#MODEL``): the files, not the index.

For a provider whose embeddings are cheaper or only reachable as a batch job (OpenAI's Batch
API, vLLM's ``run_batch`` with an embedding model, another provider's), ``sira-sync --embed``
does not call a server: it writes the documents that lack a vector as an OpenAI Batch input
file, ``DIR/embed-NNN.requests.jsonl``, and stops (exit 75, as the LLM's batch rounds do)
until the job's output is at ``DIR/embed-NNN.output.jsonl``; the same command then imports
the vectors and writes the next file for what is still missing (``sync.embed_batch``).

One request per document (``"input": [text]``), not one per slice of documents: the
``custom_id`` then names exactly one document and the text its vector is made of
(``<_id>::<source hash>``), so a failed or malformed line costs one document, an answer made
from text the document no longer has is never written, and a partial output imports what it
has. OpenAI caps a batch at 50,000 requests (and 50,000 embedding inputs): a round holds at
most ``MAX_REQUESTS_PER_ROUND``, and the rest go in the next.

This module reads every round of the folder (``EmbeddingRounds.read``): the requests it asked
(a folder holds one model's rounds) and each output line, which is either a vector (kept as
the line's byte offset, so a large output need not fit in memory), a failure (``error`` or a
non-200 status: asked again, at most ``MAX_FAILED_ROUNDS`` times) or malformed (not JSON, an
id no request of the folder has, no single vector of finite numbers, another length than the
first vector's): recorded with its file and line number and skipped, never written.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from sira_seek.embed.base import Similarity, unit_rows
from sira_seek.embed.cpu import CPU_MODEL, CPU_SPEC
from sira_seek.embed.spec import EmbedderSpecError
from sira_seek.input_errors import InputError
from sira_seek.llm import batch_rounds
from sira_seek.llm.batch_files import BATCH_URL_PREFIX, BatchRequestLine
from sira_seek.llm.spec import BatchBackendSpec

logger = logging.getLogger(__name__)

EMBEDDINGS_URL = BATCH_URL_PREFIX + "/embeddings"
MAX_REQUESTS_PER_ROUND = 50_000
"""OpenAI's Batch API takes at most 50,000 requests (and embedding inputs) in one batch."""
MAX_FAILED_ROUNDS = 3
"""A document whose request failed in this many outputs is not asked again (counted failed)."""
CUSTOM_ID_SEPARATOR = "::"
MAX_BAD_LINE_SAMPLES = 20


def live_spec_for(model: str) -> str:
    """The spec that embeds with ``model`` live: ``cpu`` for the embedded model, else an
    OpenAI-compatible server's (its URL is the user's to fill in)."""
    return CPU_SPEC if model == CPU_MODEL else f"openai:URL#{model}"


class BatchEmbedderNotLiveError(EmbedderSpecError):
    """A ``batch:`` embedder where texts must be embedded now (a query, an ingest)."""

    @classmethod
    def for_spec(cls, spec: BatchBackendSpec) -> BatchEmbedderNotLiveError:
        live = live_spec_for(spec.model)
        serve = "" if live == "cpu" else " (sira-seek llm up --embed --model MODEL serves one)"
        return cls(
            f"embedder {spec.to_spec()!r} is an offline batch export/import: only `sira-sync "
            f"--index I --embed --embedder {spec.to_spec()}` takes it, and it cannot embed a "
            f"query or a passage now. Use the same model live: --embedder {live}{serve}; to "
            "ingest, run `sira-seek ingest` without --embed, then that sira-sync command"
        )


class BatchEmbeddingsError(InputError):
    """The folder's rounds cannot be used as asked (another model's requests, an unreadable
    request file, vectors of another length than the index's)."""


def request_custom_id(doc_id: str, source_hash: str) -> str:
    """``<_id>::<source hash>``: which document, made from which text."""
    return f"{doc_id}{CUSTOM_ID_SEPARATOR}{source_hash}"


def parse_custom_id(custom_id: str) -> tuple[str, str] | None:
    """(``_id``, source hash) of an id ``request_custom_id`` wrote, else None. Split from the
    right: a document id may hold the separator, a hash never does."""
    doc_id, sep, digest = custom_id.rpartition(CUSTOM_ID_SEPARATOR)
    if not sep or not doc_id or not digest.startswith("sha256:"):
        return None
    return doc_id, digest


def embedding_request(custom_id: str, model: str, text: str) -> BatchRequestLine:
    """One document's request: the body a live ``/v1/embeddings`` call of ``model`` takes."""
    return BatchRequestLine(
        custom_id=custom_id, url=EMBEDDINGS_URL, body={"model": model, "input": [text]}
    )


class BadLine(BaseModel):
    """An output line that was skipped: where, and why."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


class BatchEmbeddings(BaseModel):
    """What the folder's rounds hold (see the module docstring)."""

    requested: set[str] = Field(default_factory=set)
    offsets: dict[str, tuple[str, int]] = Field(default_factory=dict)
    failures: dict[str, int] = Field(default_factory=dict)
    bad_lines: list[BadLine] = Field(default_factory=list)
    dimensions: int | None = None

    @property
    def bad_line_count(self) -> int:
        return len(self.bad_lines)

    def vector(self, custom_id: str) -> list[float] | None:
        """The unit-length vector the output holds for ``custom_id`` (None: none)."""
        found = self.offsets.get(custom_id)
        if found is None:
            return None
        path, offset = found
        with open(path, "rb") as handle:
            handle.seek(offset)
            line = json.loads(handle.readline())
        rows = np.asarray([_embedding_of(line["response"]["body"])], dtype=np.float64)
        return [float(x) for x in unit_rows(rows)[0]]

    def gave_up(self, custom_id: str) -> bool:
        return self.failures.get(custom_id, 0) >= MAX_FAILED_ROUNDS


def _embedding_of(body: Any) -> list[Any]:
    """The one vector of an embeddings response body; ``ValueError`` saying what is wrong."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list) or len(data) != 1 or not isinstance(data[0], dict):
        raise ValueError("the body has no data list of exactly one embedding")
    vector = data[0].get("embedding")
    if not isinstance(vector, list) or not vector:
        raise ValueError("data[0].embedding is not a list of numbers")
    for x in vector:
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
            raise ValueError(f"data[0].embedding holds {x!r}, not a finite number")
    return vector


class EmbeddingRounds:
    """The rounds of one folder: ``PREFIX-NNN.requests.jsonl`` and ``PREFIX-NNN.output.jsonl``
    (``prefix`` names the slice, so workers of one index may share a folder)."""

    def __init__(self, directory: Path, model: str, *, prefix: str = "embed") -> None:
        self.directory = Path(directory)
        self.model = model
        self.prefix = prefix

    def requests_path(self, number: int) -> Path:
        return batch_rounds.requests_path(self.directory, number, self.prefix)

    def output_path(self, number: int) -> Path:
        return batch_rounds.output_path(self.directory, number, self.prefix)

    def numbers(self) -> list[int]:
        return batch_rounds.round_numbers(self.directory, self.prefix)

    def waiting(self) -> int | None:
        """The last round, when its output is not there yet."""
        return batch_rounds.waiting_round(self.directory, self.prefix)

    def request_count(self, number: int) -> int:
        with open(self.requests_path(number), "rb") as handle:
            return sum(1 for line in handle if line.strip())

    def read(self) -> BatchEmbeddings:
        """Every request and output of the folder, in round order."""
        found = BatchEmbeddings()
        for number in self.numbers():
            self._read_requests(number, found)
            output = self.output_path(number)
            if output.exists():
                self._read_output(output, found)
        if found.bad_lines:
            logger.warning(
                "%d malformed line(s) in %s skipped, first: %s",
                len(found.bad_lines),
                self.directory,
                found.bad_lines[0],
            )
        return found

    def write_round(self, requests: Sequence[BatchRequestLine]) -> int:
        """Write ``requests`` as the next round's input file; its number."""
        numbers = self.numbers()
        number = (numbers[-1] + 1) if numbers else 1
        path = self.requests_path(number)
        batch_rounds.write_requests(path, requests)
        logger.info("%d embedding request(s) written to %s", len(requests), path)
        return number

    def _read_requests(self, number: int, found: BatchEmbeddings) -> None:
        path = self.requests_path(number)
        with open(path, encoding="utf-8") as handle:
            for line_no, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    line = BatchRequestLine.model_validate_json(raw)
                except ValueError as exc:
                    raise BatchEmbeddingsError(f"{path}:{line_no} is not a request: {exc}") from exc
                model = line.body.get("model")
                if model != self.model:
                    raise BatchEmbeddingsError(
                        f"{path} asks model {model!r}, not {self.model!r}: a folder holds one "
                        f"model's rounds; give batch:{self.directory}#{model} or another folder"
                    )
                found.requested.add(line.custom_id)

    def _read_output(self, path: Path, found: BatchEmbeddings) -> None:
        offset = 0
        with open(path, "rb") as handle:
            for line_no, raw in enumerate(handle, start=1):
                start, offset = offset, offset + len(raw)
                if raw.strip():
                    self._read_line(raw, path, line_no, start, found)

    def _read_line(
        self, raw: bytes, path: Path, line_no: int, start: int, found: BatchEmbeddings
    ) -> None:
        def bad(reason: str) -> None:
            found.bad_lines.append(BadLine(file=str(path), line=line_no, reason=reason))

        try:
            line = json.loads(raw)
        except ValueError:
            return bad("not JSON")
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        if not isinstance(custom_id, str) or custom_id not in found.requested:
            return bad(f"custom_id {custom_id!r} names no request of this folder")
        response = line.get("response")
        status = response.get("status_code", 200) if isinstance(response, dict) else None
        if line.get("error") is not None or status != 200:
            found.failures[custom_id] = found.failures.get(custom_id, 0) + 1
            return None
        try:
            vector = _embedding_of(response.get("body"))
        except ValueError as exc:
            return bad(str(exc))
        if found.dimensions is None:
            found.dimensions = len(vector)
        elif len(vector) != found.dimensions:
            return bad(f"{len(vector)} dimensions, not the first vector's {found.dimensions}")
        found.offsets.setdefault(custom_id, (str(path), start))
        return None


class ImportedEmbedder:
    """What the index records for vectors a batch job made: the ``Embedder`` Protocol with
    the model of the spec and the length of the vectors read, embedding nothing itself."""

    similarity: Similarity = "cosine"  # imported vectors are scaled to unit length

    def __init__(self, spec: BatchBackendSpec, dimensions: int, *, live_spec: str) -> None:
        self._spec = spec
        self.model = spec.model
        self.dimensions = dimensions
        self.spec = live_spec  # what a query of these vectors is embedded with

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise BatchEmbedderNotLiveError.for_spec(self._spec)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        raise BatchEmbedderNotLiveError.for_spec(self._spec)

    def close(self) -> None:
        return None

"""Vectors in a search: the ``dense``, ``hybrid`` and ``sira-hybrid`` methods (``methods``).

``dense`` is the engine's approximate kNN over the index's vector field (``fields.VECTOR``,
written by ``ingest --embed``), the query embedded by the same model the passages were:
the model is recorded in the index mapping's ``_meta`` at ingest (``record_embedder``) and a
query embedder of another model is refused (``EmbedderMismatchError``), since vectors of two
models are not comparable and the ranking would be silently meaningless.

``hybrid`` and ``sira-hybrid`` fuse the BM25 (or SIRA) ranking with the kNN ranking by
reciprocal rank fusion, computed here: score(d) = sum over the lists of 1 / (k + rank(d)),
with k = 60, the constant of Cormack, Clarke and Buettcher (SIGIR 2009) that Elasticsearch's
and OpenSearch's own RRF also default to. Ours, because no engine offers it for free locally
(Elasticsearch's RRF retriever needs a platinum/enterprise/trial licence; OpenSearch's
score-ranker-processor is in the neural-search plugin, absent from the minimal archive):
``Capabilities.rrf`` says where the engine's could be used. RRF needs no score calibration
between BM25 and cosine, which is why it is the standard fusion for them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from sira_seek.backend import SearchBackend, SearchHit, SearchResult
from sira_seek.fields import TEXT, TITLE, VECTOR
from sira_seek.input_errors import InputError

if TYPE_CHECKING:
    from sira_seek.embed import Embedder

logger = logging.getLogger(__name__)

RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al. 2009; the engines' default too)."""

FUSION_DEPTH = 100
"""How deep each ranking goes before fusion (at least the hits asked for): a document ranked
101st by one list and absent from the other would add at most 1/161 anyway."""

META_KEY = "embedding"
"""Where the index mapping's ``_meta.sira_seek`` records the embedder of its vectors."""


class EmbedderMismatchError(InputError):
    """The query embedder's model is not the one the index's vectors were made with."""


class NoVectorsError(InputError):
    """A dense or hybrid search of an index without vectors (never ingested with --embed)."""


class IndexEmbedding(BaseModel):
    """The embedder an index's vectors were made with, as ``_meta`` records it."""

    model: str
    spec: str
    dimensions: int
    similarity: str
    field: str = VECTOR


def passage_text(title: str | None, text: str | None) -> str:
    """What a passage's vector is made from: ``"{title}. {text}"`` (title alone or text alone
    when the other is empty), as the embeddings tutorial's benchmark measured it."""
    title, text = (title or "").strip(), (text or "").strip()
    if title and text:
        return f"{title}. {text}"
    return title or text


def embedding_of(embedder: Embedder) -> IndexEmbedding:
    return IndexEmbedding(
        model=embedder.model,
        spec=embedder.spec,
        dimensions=embedder.dimensions,
        similarity=embedder.similarity,
    )


def _metas(backend: SearchBackend, index: str) -> dict[str, dict[str, Any]]:
    """Each concrete index's ``_meta`` (an alias may name several)."""
    return {
        name: dict(body.get("mappings", {}).get("_meta") or {})
        for name, body in backend.get_mapping(index).items()
    }


def read_index_embedding(backend: SearchBackend, index: str) -> IndexEmbedding | None:
    """The embedder recorded for ``index``'s vectors; None when it has none. Indexes behind
    one alias recorded with different models are refused (their scores do not compare)."""
    found: dict[str, IndexEmbedding | None] = {}
    for name, meta in _metas(backend, index).items():
        recorded = (meta.get("sira_seek") or {}).get(META_KEY)
        found[name] = IndexEmbedding.model_validate(recorded) if recorded else None
    models = {e.model for e in found.values() if e is not None}
    if len(models) > 1:
        raise EmbedderMismatchError(
            f"{index!r} names indexes embedded with different models ({', '.join(sorted(models))})"
        )
    if not models or any(e is None for e in found.values()):
        return None
    return next(e for e in found.values() if e is not None)


def check_embedder(recorded: IndexEmbedding | None, embedder: Embedder, index: str) -> None:
    """Refuse an embedder whose vectors cannot be compared with the index's."""
    if recorded is None:
        return
    if recorded.model != embedder.model or recorded.dimensions != embedder.dimensions:
        raise EmbedderMismatchError(
            f"index {index!r} was embedded with {recorded.model} ({recorded.dimensions} dims, "
            f"embedder {recorded.spec!r}), not {embedder.model} ({embedder.dimensions} dims): "
            f"use --embedder {recorded.spec!r} (setting SIRA_SEEK_SIRA_EMBEDDER), or re-ingest "
            "into a new index with --embed --embedder SPEC"
        )


def record_embedder(backend: SearchBackend, index: str, embedder: Embedder) -> None:
    """Give ``index`` the vector field and record the embedder in its ``_meta`` (kept beside
    the rest of ``_meta``: a mapping update replaces the whole object)."""
    embedding = embedding_of(embedder)
    field = backend.vector_mapping(embedding.dimensions, embedder.similarity)
    for name, meta in _metas(backend, index).items():
        ours = dict(meta.get("sira_seek") or {})
        ours[META_KEY] = embedding.model_dump()
        backend.put_mapping(name, {VECTOR: field}, meta={**meta, "sira_seek": ours})


def rrf(rankings: Sequence[Sequence[SearchHit]], *, size: int, k: int = RRF_K) -> list[SearchHit]:
    """Reciprocal rank fusion of ``rankings`` (each best first): the ``size`` best by
    sum(1 / (k + rank)), ties kept in first-seen order. Each hit keeps the first list's
    ``_source`` it was seen with; its score is the fused one."""
    fused: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            fused[hit.id] = fused.get(hit.id, 0.0) + 1.0 / (k + rank)
            first.setdefault(hit.id, hit)
    order = sorted(fused, key=lambda doc: -fused[doc])  # sorted() is stable: ties by first seen
    return [first[doc].model_copy(update={"score": fused[doc]}) for doc in order[:size]]


class VectorStage:
    """The kNN side of a search: embeds queries with the index's model and asks the engine.

    Built once per retriever (the index's recorded embedder is read once); owns the embedder
    it makes from ``spec`` (None: the CPU default), not one the caller passes.
    """

    def __init__(
        self,
        backend: SearchBackend,
        index: str,
        *,
        mode: Literal["only", "fused"],
        num_candidates: int,
        spec: str | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        from sira_seek.embed import make_embedder

        self.backend = backend
        self.index = index
        self.mode = mode
        self.num_candidates = num_candidates
        recorded = read_index_embedding(backend, index)
        if recorded is None:
            raise NoVectorsError(
                f"index {index!r} has no vectors: ingest it with --embed (sira-seek ingest PATH "
                f"--index {index} --embed) before a dense or hybrid search"
            )
        self.recorded = recorded
        self._owned = embedder is None
        self.embedder = embedder if embedder is not None else make_embedder(spec)
        try:
            check_embedder(recorded, self.embedder, index)
        except Exception:
            self.close()
            raise

    def knn(
        self, texts: Sequence[str], *, k: int, source: Sequence[str] | None
    ) -> tuple[list[SearchResult], float]:
        """One kNN result per query text, and the milliseconds per query it took."""
        started = time.perf_counter()
        vectors = self.embedder.embed_queries(list(texts))
        found = [
            self.backend.knn_search(
                self.index,
                self.recorded.field,
                vector,
                k=k,
                num_candidates=max(k, self.num_candidates),
                source=source,
            )
            for vector in vectors
        ]
        return found, (time.perf_counter() - started) * 1000 / max(1, len(texts))

    def body(self, k: int) -> dict[str, Any]:
        """What the kNN request asked, for the result's ``body`` (the vector elided)."""
        return {
            "knn": {
                "field": self.recorded.field,
                "query_vector": f"<{self.recorded.dimensions} dims from {self.recorded.model}>",
                "k": k,
                "num_candidates": max(k, self.num_candidates),
            }
        }

    def close(self) -> None:
        if self._owned:
            self.embedder.close()


def source_fields(source: list[str] | bool) -> list[str] | None:
    """A retriever's ``_source`` choice as ``knn_search`` takes it (never the vector)."""
    if source is True:
        return [TITLE, TEXT]
    if source is False:
        return []
    return list(source)


def fused_body(lexical: Mapping[str, Any], knn: Mapping[str, Any], depth: int) -> dict[str, Any]:
    """The result's ``body`` of a fused search: both requests and how they were fused."""
    return {
        "rrf": {"k": RRF_K, "rank_window_size": depth, "fused_by": "sira-seek"},
        "queries": [dict(lexical), dict(knn)],
    }

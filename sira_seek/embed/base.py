"""What every embedder is: texts in, vectors out, with what the vectors are meant for.

Retrieval (kNN fields, dense and hybrid search) and SEEK's sub-query similarity depend on this
Protocol alone, so the embedded CPU model and any OpenAI-compatible server are interchangeable.
Documents and queries are embedded by separate calls because retrieval models that are trained
asymmetrically (E5, BGE, Qwen3-Embedding) want a different prefix on each side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

Similarity = Literal["cosine", "dot_product", "l2"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of ``dimensions`` floats, compared by ``similarity``."""

    # Read-only properties: a plain class attribute satisfies them, and so does a value an
    # OpenAI-compatible server is asked for on first use (its model, its vector length).
    @property
    def spec(self) -> str:
        """How to make this embedder again (``cpu``, ``openai:URL#MODEL``); shown in errors."""
        ...

    @property
    def model(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    @property
    def similarity(self) -> Similarity: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of passages to index, in input order."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of search queries, in input order."""
        ...

    def close(self) -> None:
        """Release the model or the connection pool."""
        ...


class EmbedderError(Exception):
    """An embedder could not give vectors; the message names the spec (credentials masked)."""

    kind = "internal"


class EmbedderUnavailableError(EmbedderError):
    """The embedder's server cannot be reached or keeps failing, or its packages are missing."""

    kind = "unavailable"


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1, so cosine similarity is a dot product: what every index
    and comparison here assumes, whatever the model or server returned. A zero row stays
    zero (nothing to scale)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)

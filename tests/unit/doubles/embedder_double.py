"""An ``Embedder`` double (above the protocol): deterministic unit vectors from the words of
a text, so tests can tell which text a stored vector was made from, and count what it was
asked. Not a model: texts sharing words get similar vectors, nothing more."""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from typing import Literal

import pytest

DIMS = 16


def bag_vector(text: str, dims: int = DIMS) -> list[float]:
    """The unit vector of ``text``'s lowercase words hashed into ``dims`` buckets."""
    vector = [0.0] * dims
    for word in re.findall(r"\w+", text.lower()):
        vector[zlib.crc32(word.encode()) % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class BagOfWordsEmbedderDouble:
    """Satisfies ``sira_seek.embed.Embedder``; ``documents``/``queries`` record every text it
    embedded; ``fail_after`` documents raises (a run killed mid-way)."""

    similarity: Literal["cosine", "dot_product", "l2"] = "cosine"

    def __init__(self, model: str = "bag-of-words-double", *, dims: int = DIMS) -> None:
        self.model = model
        self.spec = f"double:{model}"
        self.dimensions = dims
        self.documents: list[str] = []
        self.queries: list[str] = []
        self.fail_after: int | None = None
        self.closed = False

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.fail_after is not None and len(self.documents) + len(texts) > self.fail_after:
            raise RuntimeError("killed")
        self.documents += texts
        return [bag_vector(t, self.dimensions) for t in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.queries += texts
        return [bag_vector(t, self.dimensions) for t in texts]

    def close(self) -> None:
        self.closed = True


def embedders_made(monkeypatch: pytest.MonkeyPatch) -> list[BagOfWordsEmbedderDouble]:
    """Make ``sira_seek.embed.make_embedder`` give out a new double whatever the spec; the
    list returned fills with every one given out, so a test can see how many were made and
    what each embedded."""
    import sira_seek.embed

    out: list[BagOfWordsEmbedderDouble] = []

    def make(spec: str | None = None) -> BagOfWordsEmbedderDouble:
        out.append(BagOfWordsEmbedderDouble())
        return out[-1]

    monkeypatch.setattr(sira_seek.embed, "make_embedder", make)
    return out

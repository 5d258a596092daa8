"""The embedded CPU embedder with its real packaged model (all-MiniLM-L6-v2, int8, onnxruntime):
no node, no server; about a second."""

from __future__ import annotations

import numpy as np
import pytest

from sira_seek.embed import make_embedder

pytestmark = pytest.mark.integration

PASSAGES = [
    "Hamlet is a tragedy written by William Shakespeare sometime between 1599 and 1601.",
    "Paris is the capital and most populous city of France.",
    "The mitochondrion is the powerhouse of the cell, producing ATP by respiration.",
    "The Great Barrier Reef is the world's largest coral reef system, off Queensland.",
]
QUERIES = [
    "who wrote the play Hamlet",
    "what is the capital of France",
    "which organelle makes ATP",
    "largest coral reef in the world",
]


def test_the_default_embeds_queries_nearest_their_passage_at_unit_length() -> None:
    embedder = make_embedder(None)
    docs = np.asarray(embedder.embed_documents(PASSAGES))
    queries = np.asarray(embedder.embed_queries(QUERIES))
    embedder.close()
    assert docs.shape == (4, embedder.dimensions) == (4, 384)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    similarity = queries @ docs.T
    # Each query's own passage is its nearest, by a clear margin over every other one.
    assert similarity.argmax(axis=1).tolist() == [0, 1, 2, 3]
    own = np.diag(similarity)
    others = similarity[~np.eye(4, dtype=bool)].reshape(4, 3).max(axis=1)
    assert (own - others > 0.2).all(), similarity.round(3)


def test_a_vector_does_not_depend_on_its_batch_and_long_text_is_cut() -> None:
    embedder = make_embedder("cpu")
    alone = np.asarray(embedder.embed_documents([PASSAGES[1]]))[0]
    long_text = PASSAGES[0] + " More words follow here." * 300
    mixed = np.asarray(embedder.embed_documents([long_text, PASSAGES[1], "x"]))
    embedder.close()
    assert np.allclose(alone, mixed[1], atol=1e-5)
    assert np.isclose(np.linalg.norm(mixed[0]), 1.0)

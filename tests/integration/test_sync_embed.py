"""`sira-sync --embed` as a user runs it, on each engine (Elasticsearch's ``dense_vector``,
OpenSearch's ``knn_vector`` through the k-NN plugin), with the real CPU embedder: an index
ingested without vectors gets them in place, kNN then finds a document by a question about it,
and a re-run embeds nothing (the documents are current)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_sync_slices_cli import sira_sync

from sira_seek.backend import SearchBackend
from sira_seek.embed import make_embedder
from sira_seek.fields import VECTOR
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration

DOCS = [
    {"_id": "paris", "title": "Paris", "text": "Paris is the capital and largest city of France."},
    {"_id": "volcano", "title": "Etna", "text": "Mount Etna is an active volcano in Sicily."},
    {"_id": "piano", "title": "Piano", "text": "The piano is a keyboard instrument with hammers."},
    {"_id": "tiger", "title": "Tiger", "text": "The tiger is the largest living cat species."},
]


@pytest.fixture
def unembedded_index(backend: SearchBackend) -> Iterator[tuple[SearchBackend, str]]:
    name = f"test-embed-{uuid.uuid4().hex[:10]}"
    yield backend, name
    backend.delete_index(name)


def test_sync_embed_adds_vectors_in_place_and_knn_finds_the_document(
    unembedded_index: tuple[SearchBackend, str], tmp_path: Path
) -> None:
    backend, index = unembedded_index
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    ingest_corpus(backend, index, corpus)  # no vectors yet
    args = ["--index", index, "--embed", "--url", backend.info.url, "--no-progress", "--json"]
    args += ["--state-dir", str(tmp_path / "state")]
    first = sira_sync(*args)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["counts"]["enriched"] == 4 and report["dimensions"] == 384

    embedder = make_embedder("cpu")
    try:
        (question,) = embedder.embed_queries(["Which mountain in Italy erupts?"])
    finally:
        embedder.close()
    hits = backend.knn_search(index, VECTOR, question, k=2, num_candidates=10).hits
    assert hits[0].id == "volcano"
    source = backend.get(index, "volcano").source or {}
    assert source["text"] == DOCS[1]["text"]  # the source fields are left as they were

    again = sira_sync(*args)
    assert again.returncode == 0, again.stderr
    counts = json.loads(again.stdout)["counts"]
    assert counts["enriched"] == 0 and counts["current"] == 4

"""`ingest --embed` and the dense, hybrid and sira-hybrid methods on each engine, with the real
CPU embedder on a six-document index: vectors and the model recorded at ingest, a re-run embeds
nothing, kNN finds a document BM25 cannot (no shared word), hybrid keeps both sides, and a query
embedder of another model is refused."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.client import SiraSeek
from sira_seek.fields import VECTOR
from sira_seek.sira.dense import read_index_embedding
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.search import SearchRequest, search

pytestmark = pytest.mark.integration

DOCS = [
    {"_id": "paris", "title": "Paris", "text": "Paris is the capital and largest city of France."},
    {"_id": "volcano", "title": "Etna", "text": "Mount Etna is an active volcano in Sicily."},
    {"_id": "piano", "title": "Piano", "text": "The piano is a keyboard instrument with hammers."},
    {"_id": "tiger", "title": "Tiger", "text": "The tiger is the largest living cat species."},
    {"_id": "rome", "title": "Rome", "text": "Rome is the capital city of Italy."},
    {"_id": "violin", "title": "Violin", "text": "The violin is a bowed string instrument."},
]
QUESTION = "Which mountain erupts with lava?"  # no word in common with the Etna passage


@pytest.fixture
def embedded(backend: SearchBackend, tmp_path: Path) -> Iterator[tuple[SearchBackend, str, Path]]:
    index = f"test-dense-{uuid.uuid4().hex[:10]}"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    yield backend, index, corpus
    backend.delete_index(index)


def test_ingest_embed_then_dense_hybrid_and_a_refused_model(
    embedded: tuple[SearchBackend, str, Path],
) -> None:
    backend, index, corpus = embedded
    client = SiraSeek(backend)
    first = client.ingest(corpus, index, embed=True)
    assert (first.written, first.embedded) == (6, 6)
    again = client.ingest(corpus, index, embed=True)
    assert (again.written, again.unchanged, again.embedded) == (0, 6, 0)
    recorded = read_index_embedding(backend, index)
    assert recorded is not None and recorded.dimensions == 384
    assert recorded.model == "sentence-transformers/all-MiniLM-L6-v2"
    stored = backend.get(index, "volcano")
    assert stored is not None and stored.source is not None and stored.source["text"]

    bm25 = search(backend, SearchRequest(query=QUESTION, index=index, method="bm25"))
    assert "volcano" not in [h.id for h in bm25.hits]
    dense = search(backend, SearchRequest(query=QUESTION, index=index, method="dense", k=3))
    assert dense.hits[0].id == "volcano" and len(dense.hits) == 3
    assert "knn" in dense.body and dense.body["knn"]["field"] == VECTOR

    hybrid = search(backend, SearchRequest(query="capital city", index=index, method="hybrid"))
    ids = [h.id for h in hybrid.hits]
    # both capitals (BM25 and kNN agree) outrank everything else; every document is fused in
    assert set(ids[:2]) == {"paris", "rome"} and len(ids) == 6
    assert hybrid.hits[0].score == pytest.approx(2 / 61, abs=1e-3)
    # Both sides are read as ids only; the fused hits' titles are fetched after the fusion.
    titles = {d["_id"]: d["title"] for d in DOCS}
    assert [h.title for h in hybrid.hits] == [titles[i] for i in ids]
    sira_hybrid = search(
        backend,
        SearchRequest(
            query=QUESTION, index=index, method="sira-hybrid", phrases=["Etna", "volcano"]
        ),
    )
    assert sira_hybrid.hits[0].id == "volcano"

    meta = backend.get_mapping(index)[index]["mappings"]["_meta"]
    meta["sira_seek"]["embedding"]["model"] = "BAAI/bge-small-en-v1.5"
    backend.put_mapping(index, {}, meta=meta)
    with pytest.raises(InvalidInput, match="BAAI/bge-small-en-v1.5"):
        search(backend, SearchRequest(query=QUESTION, index=index, method="dense"))


def test_dense_on_an_index_without_vectors_says_to_embed(
    embedded: tuple[SearchBackend, str, Path],
) -> None:
    backend, index, corpus = embedded
    SiraSeek(backend).ingest(corpus, index)
    with pytest.raises(InvalidInput, match="--embed"):
        search(backend, SearchRequest(query=QUESTION, index=index, method="hybrid"))

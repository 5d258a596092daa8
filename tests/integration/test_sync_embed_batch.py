"""`sira-sync --embed --embedder batch:DIR#MODEL` as a user runs it, on each engine: the first
run exits 75 with one /v1/embeddings request per document; the test answers the file as a
batch job would, with the REAL CPU embedder (all-MiniLM-L6-v2, whose card asks no document
prefix) embedding each request's input; the next run imports the vectors, a dense search with
the cpu embedder then finds a document by its own text (one with the batch: spec is refused,
naming cpu), and a re-run asks for nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_sync_embed import DOCS
from test_sync_slices_cli import sira_sync

from sira_seek.backend import SearchBackend
from sira_seek.embed import make_embedder
from sira_seek.ingest import ingest_corpus
from sira_seek.sira.dense import passage_text, read_index_embedding
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.search import SearchRequest, search

pytestmark = pytest.mark.integration

CPU_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture
def unembedded_index(backend: SearchBackend) -> Iterator[tuple[SearchBackend, str]]:
    name = f"test-embed-batch-{uuid.uuid4().hex[:10]}"
    yield backend, name
    backend.delete_index(name)


def _answer_with_the_cpu_embedder(requests_file: Path, output: Path) -> int:
    """The batch job: each request's input embedded by the real CPU model, one output line
    per request, written in reverse order (a batch job's output is in any order)."""
    requests = [json.loads(line) for line in requests_file.read_text().splitlines()]
    embedder = make_embedder("cpu")
    try:
        vectors = embedder.embed_documents([r["body"]["input"][0] for r in requests])
    finally:
        embedder.close()
    lines = [
        {
            "id": f"batch_req_{n}",
            "custom_id": r["custom_id"],
            "response": {
                "status_code": 200,
                "body": {"object": "list", "model": CPU_MODEL, "data": [{"embedding": v}]},
            },
            "error": None,
        }
        for n, (r, v) in enumerate(zip(requests, vectors, strict=True))
    ]
    output.write_text("".join(json.dumps(x) + "\n" for x in reversed(lines)), encoding="utf-8")
    return len(lines)


def test_batch_export_import_then_dense_search_finds_a_document_by_its_text(
    unembedded_index: tuple[SearchBackend, str], tmp_path: Path
) -> None:
    backend, index = unembedded_index
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    ingest_corpus(backend, index, corpus)  # no vectors yet
    folder = tmp_path / "rounds"
    spec = f"batch:{folder}#{CPU_MODEL}"
    args = ["--index", index, "--embed", "--embedder", spec]
    args += ["--url", backend.info.url, "--no-progress", "--json"]
    args += ["--state-dir", str(tmp_path / "state")]

    first = sira_sync(*args)
    assert first.returncode == 75, first.stderr
    waiting = json.loads(first.stdout)
    requests_file = Path(waiting["waiting_for"])
    assert requests_file == folder / "embed-001.requests.jsonl" and waiting["requests"] == 4
    assert str(folder / "embed-001.output.jsonl") in first.stderr
    requests = [json.loads(line) for line in requests_file.read_text().splitlines()]
    assert {r["custom_id"].split("::")[0] for r in requests} == {d["_id"] for d in DOCS}
    inputs = {r["custom_id"].split("::")[0]: r["body"]["input"] for r in requests}
    assert inputs["volcano"] == [passage_text(DOCS[1]["title"], DOCS[1]["text"])]
    assert all(r["url"] == "/v1/embeddings" and r["body"]["model"] == CPU_MODEL for r in requests)
    assert read_index_embedding(backend, index) is None  # nothing recorded before an import

    assert _answer_with_the_cpu_embedder(requests_file, Path(waiting["output"])) == 4
    second = sira_sync(*args)
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    assert report["counts"]["enriched"] == 4 and report["batch"]["imported"] == 4
    assert report["dimensions"] == 384 and report["batch"]["bad_lines"] == 0
    recorded = read_index_embedding(backend, index)
    assert recorded is not None and (recorded.model, recorded.spec) == (CPU_MODEL, "cpu")

    for doc in DOCS:
        own_text = passage_text(doc["title"], doc["text"])
        found = search(backend, SearchRequest(query=own_text, index=index, method="dense"))
        assert found.hits[0].id == doc["_id"], (doc["_id"], [h.id for h in found.hits])
    batch_query = SearchRequest(query="volcano", index=index, method="dense", embedder=spec)
    with pytest.raises(InvalidInput, match="Use the same model live: --embedder cpu"):
        search(backend, batch_query)  # a batch: embedder embeds no query (exit 2, HTTP 422)
    stored = backend.get(index, "volcano")

    assert stored is not None and stored.source is not None
    assert stored.source["text"] == DOCS[1]["text"]  # the source fields are left as they were

    again = sira_sync(*args)
    assert again.returncode == 0, again.stderr
    counts = json.loads(again.stdout)["counts"]
    assert counts["enriched"] == 0 and counts["current"] == 4
    assert sorted(p.name for p in folder.iterdir()) == [
        "embed-001.output.jsonl",
        "embed-001.requests.jsonl",
    ]

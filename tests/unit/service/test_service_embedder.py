"""The server's one query embedder (``serve --embedder``), in process over the in-memory
backend, the bag-of-words embedder double and a scripted SEEK LLM (all above their
protocols): ``/search``'s vector methods and ``/ask``'s dense/hybrid retrievers share one
embedder per server process (its model loads once, not per request), closed with the app."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

UNIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(UNIT / "doubles"))
sys.path.insert(0, str(UNIT / "llm"))
sys.path.insert(0, str(UNIT / "seek"))
from embedder_double import BagOfWordsEmbedderDouble  # noqa: E402
from in_memory_backend import InMemoryBackend  # noqa: E402
from scripted_llm import use_llm_double  # noqa: E402
from seek_llm_double import searching_double  # noqa: E402

import sira_seek.embed  # noqa: E402
from sira_seek.client import SiraSeek  # noqa: E402
from sira_seek.seek import api  # noqa: E402
from sira_seek.service.app import ServiceConfig, create_app  # noqa: E402
from sira_seek.sync.embed_runner import EmbedRunner  # noqa: E402
from sira_seek.sync.settings import SyncSettings  # noqa: E402

DOCS = {
    "paris": {"title": "Paris", "text": "capital city of France on the Seine"},
    "etna": {"title": "Etna", "text": "active volcano on the island of Sicily"},
    "piano": {"title": "Piano", "text": "keyboard instrument with hammers and strings"},
}


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str | None, BagOfWordsEmbedderDouble]]:
    """Every embedder ``make_embedder`` gives out, with the spec it was asked for."""
    out: list[tuple[str | None, BagOfWordsEmbedderDouble]] = []

    def make(spec: str | None = None) -> BagOfWordsEmbedderDouble:
        out.append((spec, BagOfWordsEmbedderDouble()))
        return out[-1][1]

    monkeypatch.setattr(sira_seek.embed, "make_embedder", make)
    return out


@pytest.fixture
def backend(tmp_path: Path) -> InMemoryBackend:
    embedded = InMemoryBackend(DOCS)
    EmbedRunner(embedded, "idx", BagOfWordsEmbedderDouble(), SyncSettings(state_dir=tmp_path)).run()
    return embedded


def test_search_vector_methods_share_one_embedder_made_from_the_servers_spec(
    backend: InMemoryBackend, made: list[Any]
) -> None:
    config = ServiceConfig(embedder="openai:http://127.0.0.1:9/v1#m")
    with TestClient(create_app(lambda: SiraSeek(backend), config)) as client:
        plain = client.post("/search", json={"index": "idx", "query": "volcano", "k": 2})
        assert plain.status_code == 200 and made == []  # BM25 loads no embedder
        for method in ("dense", "hybrid", "sira-hybrid", "dense"):
            body = {"index": "idx", "query": "volcano island Sicily", "method": method}
            res = client.post("/search", json={**body, "k": 2, "expansions": []})
            assert res.status_code == 200, res.text
            assert res.json()["hits"][0]["_id"] == "etna"
        assert [spec for spec, _ in made] == ["openai:http://127.0.0.1:9/v1#m"]
        assert made[0][1].queries == ["volcano island Sicily"] * 4 and not made[0][1].closed
    assert made[0][1].closed  # closed with the app, not after each request


def test_ask_takes_the_dense_and_hybrid_retrievers_with_the_servers_embedder(
    backend: InMemoryBackend, made: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    use_llm_double(monkeypatch, searching_double("volcano island Sicily", answer="Etna"), api)
    config = ServiceConfig(llm="openai:http://127.0.0.1:9/v1#m")
    with TestClient(create_app(lambda: SiraSeek(backend), config)) as client:
        schema = client.get("/openapi.json").json()["components"]["schemas"]["AskBody"]
        assert schema["properties"]["retriever"]["enum"] == ["bm25", "sira", "dense", "hybrid"]
        for retriever in ("dense", "hybrid"):
            body = {"index": "idx", "question": "Which?", "retriever": retriever}
            res = client.post("/ask", json=body)
            assert res.status_code == 200, res.text
            assert res.json()["steps"][0]["retrieved_ids"][0] == "etna"
        refused = client.post("/ask", json={**body, "retriever": "sira-hybrid"})
        assert refused.status_code == 422
    assert len(made) == 1 and made[0][1].queries == ["volcano island Sicily"] * 2
    assert made[0][1].closed


@pytest.mark.parametrize("embedded", [True, False])
def test_the_openapi_document_offers_vector_methods_only_where_the_indexes_hold_vectors(
    backend: InMemoryBackend, embedded: bool, made: list[Any]
) -> None:
    """A client generating requests from the document (schemathesis) must not be offered a
    method the server refuses: dense on an index without vectors is a 422."""
    plain = InMemoryBackend(DOCS)
    config = ServiceConfig(index="idx", indexes=("idx",))
    served = backend if embedded else plain
    with TestClient(create_app(lambda: SiraSeek(served), config)) as client:
        schemas = client.get("/openapi.json").json()["components"]["schemas"]
        methods = schemas["SearchBody"]["properties"]["method"]["anyOf"][0]["enum"]
        retrievers = schemas["AskBody"]["properties"]["retriever"]["enum"]
        vector = {"dense", "hybrid", "sira-hybrid"}
        assert (vector <= set(methods)) is embedded and "bm25" in methods
        assert ({"dense", "hybrid"} <= set(retrievers)) is embedded and "bm25" in retrievers
        res = client.post("/search", json={"query": "volcano", "method": "dense"})
        assert res.status_code == (200 if embedded else 422), res.text


def test_serve_refuses_a_batch_embedder_at_start(tmp_path: Path) -> None:
    """A ``batch:`` embedder (sira-sync's offline export/import) cannot embed a query: serve
    refuses it before any worker starts (exit 2, naming the live spec of the same model)
    instead of refusing every dense query later."""
    from click.testing import CliRunner

    from sira_seek.cli.main import cli

    spec = f"batch:{tmp_path / 'rounds'}#sentence-transformers/all-MiniLM-L6-v2"
    result = CliRunner().invoke(cli, ["serve", "--port", "0", "--open", "--embedder", spec])
    assert result.exit_code == 2, result.output
    assert "offline batch export/import" in result.output
    assert "--embedder cpu" in result.output

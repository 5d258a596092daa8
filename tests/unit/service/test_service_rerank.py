"""``POST /search`` with ``rerank``: in process, over the in-memory backend and a scripted LLM
(above the LLM protocol). The body's bounds are the OpenAPI document's, so a client generating
requests from it (schemathesis in e2e) never sends what the server refuses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

UNIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(UNIT / "doubles"))
sys.path.insert(0, str(UNIT / "llm"))
from in_memory_backend import InMemoryBackend  # noqa: E402
from scripted_llm import ScriptedLLMDouble, use_llm_double  # noqa: E402

from sira_seek.client import SiraSeek  # noqa: E402
from sira_seek.llm.request import LLMRequest  # noqa: E402
from sira_seek.service.app import ServiceConfig, create_app  # noqa: E402

LLM = "llamacpp:gemma3-270m"
DOCS = {
    "d1": {"title": "Fritz Lang films", "text": "Fritz Lang film. Fritz Lang film."},
    "d2": {"title": "Metropolis", "text": "A Fritz Lang film."},
    "d3": {"title": "Cinema", "text": "A film."},
}
BODY = {"index": "idx", "query": "Fritz Lang film", "expansions": [], "k": 3}


def _relevance(request: LLMRequest) -> str:
    shown = (request.prompt or "").rsplit("Document: ", 1)[-1]
    return json.dumps({"score": 90 if shown.startswith("Metropolis") else 10})


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> ScriptedLLMDouble:
    double = ScriptedLLMDouble(default=_relevance)
    use_llm_double(monkeypatch, double)
    return double


def _client(llm: str | None) -> TestClient:
    backend = InMemoryBackend(DOCS)
    return TestClient(create_app(lambda: SiraSeek(backend), ServiceConfig(llm=llm)))


def test_rerank_reorders_the_top_n_with_the_servers_llm(llm: ScriptedLLMDouble) -> None:
    with _client(LLM) as client:
        plain = client.post("/search", json={**BODY, "rerank": 0})
        assert [h["_id"] for h in plain.json()["hits"]] == ["d1", "d2", "d3"]
        assert llm.calls == []  # the body's phrases win: no expansion call, no rerank
        default = client.post("/search", json=BODY)  # SIRA with the server's LLM: top 10
        assert [h["_id"] for h in default.json()["hits"]] == ["d2", "d1", "d3"]
        assert len(llm.calls) == 3 and "LLM rerank of the top 10" in " ".join(
            default.json()["notes"]
        )
        llm.calls.clear()
        res = client.post("/search", json={**BODY, "rerank": 2})
    assert res.status_code == 200, res.text
    hits = res.json()["hits"]
    assert [(h["_id"], h["rerank_score"]) for h in hits] == [
        ("d2", 90.0),
        ("d1", 10.0),
        ("d3", None),
    ]
    assert len(llm.calls) == 2 and "Fritz Lang film" in (llm.calls[0].prompt or "")
    assert res.json()["timings_ms"]["rerank_ms"] > 0


@pytest.mark.parametrize("value", [101, -1, "5", True, 2.5])
def test_a_rerank_outside_the_bounds_is_422_naming_the_field(
    llm: ScriptedLLMDouble, value: object
) -> None:
    with _client(LLM) as client:
        res = client.post("/search", json={**BODY, "rerank": value})
    assert res.status_code == 422
    assert res.json()["errors"][0]["loc"] == ["body", "rerank"]
    assert llm.calls == []


def test_a_server_without_an_llm_refuses_a_rerank_and_says_so_in_its_schema() -> None:
    with _client(None) as client:
        res = client.post("/search", json={**BODY, "rerank": 1})
        assert res.status_code == 422 and res.json()["detail"].startswith("body.rerank:")
        assert client.post("/search", json={**BODY, "rerank": 0}).status_code == 200
        assert client.post("/search", json=BODY).json()["notes"] == []  # unset: no rerank
        schema = client.get("/openapi.json").json()
    rerank = schema["components"]["schemas"]["SearchBody"]["properties"]["rerank"]
    number = next(a for a in rerank["anyOf"] if a.get("type") == "integer")
    assert number["minimum"] == 0 and number["maximum"] == 0


def test_the_schema_declares_the_bounds(llm: ScriptedLLMDouble) -> None:
    with _client(LLM) as client:
        schema = client.get("/openapi.json").json()
    rerank = schema["components"]["schemas"]["SearchBody"]["properties"]["rerank"]
    number = next(a for a in rerank["anyOf"] if a.get("type") == "integer")
    assert (number["minimum"], number["maximum"], rerank.get("default")) == (0, 100, None)
    assert "relevance to the query" in rerank["description"]


def test_without_an_llm_the_schema_requires_phrases_for_sira_as_the_route_does() -> None:
    """A server without an LLM cannot run SIRA on a body that brings no phrases (422, field
    expansions): the document says so (if/then), so a body valid against it is served. Found by
    schemathesis (seed 338075661) when the document still offered such a body."""
    import jsonschema

    with _client(None) as client:
        schema = client.get("/openapi.json").json()
        body_schema = {
            **schema["components"]["schemas"]["SearchBody"],
            "components": schema["components"],
        }
        validator = jsonschema.Draft202012Validator(body_schema)
        bare = {"index": "idx", "query": "Fritz Lang film", "method": "sira"}
        refused = client.post("/search", json=bare)
        assert refused.status_code == 422 and "expansions" in refused.json()["detail"]
        assert not validator.is_valid(bare)
        for body in (
            {**bare, "expansions": []},
            {**bare, "method": None},
            {**bare, "method": "bm25"},
        ):
            assert validator.is_valid(body), body
            assert client.post("/search", json=body).status_code == 200, body
    with _client(LLM) as client:  # with an LLM the phrases may come from it: no condition
        assert "if" not in client.get("/openapi.json").json()["components"]["schemas"]["SearchBody"]

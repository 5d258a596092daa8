"""One search, one schema: the command line, the facade, the HTTP API and the MCP search tool
give the same verdict, and the same reason, for the same ``k`` and query (issue 40).

All four run in process against one tiny index on the shared node: ``search --size`` through
click's runner, ``SiraSeek.search``, ``POST /search`` through FastAPI's test client over
``create_app``, and the MCP ``search`` tool through the SDK's in-memory client session. An
accepted ``k`` is really sent to the engine (``k=10000`` is its ``max_result_window``); a
refused one names the field and says why in the same words everywhere.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from engine_matrix import ONE_ENGINE
from fastapi.testclient import TestClient
from mcp import Client

from sira_seek.backend import SearchBackend
from sira_seek.cli.main import cli
from sira_seek.client import SiraSeek
from sira_seek.mcp.server import build_server
from sira_seek.service.app import ServiceConfig, create_app
from sira_seek.workflows import InvalidInput
from sira_seek.workflows.agent_tools import AgentTools

pytestmark = [pytest.mark.integration, ONE_ENGINE]

DOCS = [
    {"_id": "d1", "title": "Arthur's Magazine", "text": "An American literary periodical."},
    {"_id": "d2", "title": "First for Women", "text": "A woman's magazine by Bauer Media."},
    {"_id": "d3", "title": "Radio City", "text": "A radio station in India."},
]
QUERY = "literary magazine"
MATCHED = {"d1", "d2"}
"""The documents QUERY matches: every accepted k, up to 10,000, gets exactly these."""

Verdict = tuple[bool, str | None, str | None]
"""Accepted (with no field, no reason), or refused naming the field and the reason."""


@pytest.fixture(scope="module")
def tiny_index(backend: SearchBackend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    corpus = tmp_path_factory.mktemp("one-schema") / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    index = f"test-schema-{uuid.uuid4().hex[:8]}"
    try:
        SiraSeek(backend).ingest(corpus, index)
        yield index
    finally:
        backend.delete_index(index)


def _field_and_reason(text: str) -> tuple[str, str]:
    """``k: Input should be ...`` (the words every front end prints) split at the field."""
    field, _, reason = text.strip().partition(": ")
    return field, reason


def _cli(url: str, index: str, query: str, k: int) -> Verdict:
    args = ["search", query, "--index", index, "--url", url, "--size", str(k), "--json"]
    run = CliRunner().invoke(cli, args)
    if run.exit_code == 0:
        assert {h["_id"] for h in json.loads(run.stdout)["hits"]} == MATCHED
        return True, None, None
    last = run.stderr.strip().splitlines()[-1]
    return (False, *_field_and_reason(last.removeprefix("error: ").removeprefix("Error: ")))


def _facade(backend: SearchBackend, index: str, query: str, k: int) -> Verdict:
    try:
        result = SiraSeek(backend).search(query, index=index, k=k)
    except InvalidInput as exc:
        return (False, *_field_and_reason(str(exc)))
    assert {h.id for h in result.hits} == MATCHED
    return True, None, None


def _http(client: TestClient, index: str, query: str, k: int) -> Verdict:
    res = client.post("/search", json={"index": index, "query": query, "k": k})
    if res.status_code == 200:
        assert {h["_id"] for h in res.json()["hits"]} == MATCHED
        return True, None, None
    assert res.status_code == 422, res.text
    (error,) = res.json()["errors"]
    assert error["loc"][0] == "body"
    return False, ".".join(str(p) for p in error["loc"][1:]), error["msg"]


def _mcp(backend: SearchBackend, index: str, query: str, k: int) -> Verdict:
    server = build_server(AgentTools(backend, index))

    async def call() -> Any:
        async with Client(server) as client:
            return await client.call_tool("search", {"query": query, "k": k})

    got = anyio.run(call)
    if not got.is_error:
        assert {p["id"] for p in got.structured_content["passages"]} == MATCHED
        return True, None, None
    # The SDK prefixes the errors a tool body raises with "Error executing tool search: ".
    text = got.content[0].text.removeprefix("Error executing tool search: ")
    return (False, *_field_and_reason(text.removeprefix("invalid_input: ")))


@pytest.mark.parametrize(
    ("query", "k", "refused"),
    [
        (QUERY, 0, ("k", "Input should be greater than or equal to 1")),
        (QUERY, 100, None),
        (QUERY, 101, None),
        (QUERY, 1000, None),
        (QUERY, 1001, None),
        (QUERY, 10_000, None),
        (QUERY, 10_001, ("k", "Input should be less than or equal to 10000")),
        ("   ", 10, ("query", "is blank: give some words to search for")),
    ],
)
def test_every_front_end_gives_the_same_verdict_and_reason(
    backend: SearchBackend,
    node_urls: dict[str, str],
    engine: str,
    tiny_index: str,
    query: str,
    k: int,
    refused: tuple[str, str] | None,
) -> None:
    expected: Verdict = (True, None, None) if refused is None else (False, *refused)
    with TestClient(create_app(lambda: SiraSeek(backend), ServiceConfig())) as http:
        verdicts = {
            "cli": _cli(node_urls[engine], tiny_index, query, k),
            "facade": _facade(backend, tiny_index, query, k),
            "http": _http(http, tiny_index, query, k),
            "mcp": _mcp(backend, tiny_index, query, k),
        }
    assert verdicts == dict.fromkeys(verdicts, expected)

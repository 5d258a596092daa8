"""The bounds of a search's fields are the search workflow's, in every schema a front end
publishes: the HTTP body, the MCP search tool's input and the framework retrievers' options
(issue 40). tests/integration/test_one_search_schema.py checks the verdicts themselves."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from in_memory_backend import InMemoryBackend  # noqa: E402

from sira_seek.client import SiraSeek  # noqa: E402
from sira_seek.integrations._common import RetrievalOptions  # noqa: E402
from sira_seek.mcp.server import build_server  # noqa: E402
from sira_seek.service.app import ServiceConfig, create_app  # noqa: E402
from sira_seek.service.bodies import SearchBody  # noqa: E402
from sira_seek.workflows import InvalidInput  # noqa: E402
from sira_seek.workflows.agent_tools import AgentTools  # noqa: E402
from sira_seek.workflows.search import SearchRequest  # noqa: E402

BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _bounds(schema: dict[str, Any]) -> dict[str, Any]:
    """A property's bounds, whether it is optional (``anyOf`` with null) or not."""
    for option in schema.get("anyOf", [schema]):
        if option.get("type") != "null":
            return {b: option[b] for b in BOUNDS if b in option}
    return {}


def _mcp_search_schema() -> dict[str, Any]:
    server = build_server(AgentTools(InMemoryBackend({}), "idx"))

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            return next(t.input_schema for t in tools if t.name == "search")

    return anyio.run(main)


def test_every_front_end_schema_has_the_workflows_bounds() -> None:
    workflow = SearchRequest.model_json_schema()["properties"]
    assert _bounds(workflow["k"]) == {"minimum": 1, "maximum": 10_000}
    assert _bounds(workflow["tau"]) == {"minimum": 1e-6, "maximum": 1}
    fronts = {
        "http": (SearchBody.model_json_schema()["properties"], ("k", "tau", "weight", "rerank")),
        "retrievers": (RetrievalOptions.model_json_schema()["properties"], ("k", "tau", "weight")),
        "mcp": (_mcp_search_schema()["properties"], ("k",)),
    }
    for front, (props, names) in fronts.items():
        for name in names:
            assert _bounds(props[name]) == _bounds(workflow[name]), (front, name)


def test_too_many_expansions_get_the_workflows_reason_everywhere() -> None:
    """201 phrases: the workflow's words over HTTP and MCP, not pydantic's list message."""
    phrases = ["zzyzx"] * 201
    reason = "has 201 phrases; at most 200 are accepted"
    with pytest.raises(InvalidInput, match=f"^expansions: {reason}$"):
        SearchRequest.build(query="q", index="idx", phrases=phrases)
    backend = InMemoryBackend({"d1": {"title": "t", "text": "zzyzx"}})
    with TestClient(create_app(lambda: SiraSeek(backend), ServiceConfig())) as http:
        res = http.post("/search", json={"index": "idx", "query": "q", "expansions": phrases})
    assert res.status_code == 422
    assert res.json()["errors"] == [{"loc": ["body", "expansions"], "msg": reason}]
    server = build_server(AgentTools(backend, "idx"))

    async def main() -> Any:
        async with Client(server) as client:
            return await client.call_tool("search", {"query": "q", "expansions": phrases})

    got = anyio.run(main)
    assert got.is_error
    assert got.content[0].text.endswith(f"invalid_input: expansions: {reason}")

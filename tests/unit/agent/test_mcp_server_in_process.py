"""The MCP server's tools through the SDK's own client, in process, over the in-memory double.

What crosses the protocol is checked here (schemas, structured content, tool errors); the same
tools on a real node over stdio and streamable HTTP are tests/e2e/test_mcp_server.py.
"""

from __future__ import annotations

import json
import logging
from importlib.metadata import version
from typing import Any

import anyio
import pytest
from in_memory_backend import InMemoryBackend, default_properties
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from test_tools_on_the_double import DOCS, ENRICHMENT

from sira_seek.backend import SearchHit
from sira_seek.mcp.server import TOOL_NAMES, build_server
from sira_seek.workflows.agent_tools import AgentTools


def _server() -> tuple[Any, InMemoryBackend]:
    backend = InMemoryBackend(DOCS, properties={**default_properties(), **ENRICHMENT})
    return build_server(AgentTools(backend, "idx")), backend


def test_tools_listed_with_their_schemas() -> None:
    server, _ = _server()

    async def main() -> list[Any]:
        async with Client(server) as client:
            return list((await client.list_tools()).tools)

    tools = {t.name: t for t in anyio.run(main)}
    assert set(tools) == set(TOOL_NAMES) == {"search", "categories", "fetch_document"}
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert set(search["properties"]) == {"query", "expansions", "k", "method"}
    assert search["properties"]["k"]["maximum"] == 10_000  # the search workflow's own k
    assert "grounding" in (tools["search"].output_schema or {})["properties"]
    assert tools["fetch_document"].annotations.read_only_hint is True


def test_calls_return_structured_results_and_readable_errors() -> None:
    server, backend = _server()
    backend.hits = [SearchHit(id="d2", score=2.5, source={"title": "First for Women"})]

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            searched = await client.call_tool(
                "search", {"query": "women magazine", "expansions": ["zzyzx"], "k": 1}
            )
            backend.hits = None  # the double scores nothing: the ranked hits were scripted
            return {
                "search": searched,
                "categories": await client.call_tool("categories", {"name": "Women's magazines"}),
                "fetch": await client.call_tool("fetch_document", {"doc_id": "d1"}),
                "missing": await client.call_tool("fetch_document", {"doc_id": "nope"}),
                "bad_k": await client.call_tool("search", {"query": "x", "k": 0}),
                "empty": await client.call_tool("categories", {"name": "  "}),
            }

    got = anyio.run(main)
    search = got["search"].structured_content
    assert search["method"] == "sira"
    assert [p["id"] for p in search["passages"]] == ["d2"]
    assert search["grounding"][0]["phrase"] == "zzyzx"
    assert search["grounding"][0]["kept"] is False
    # the text content is the same JSON, for clients that only read text
    assert json.loads(got["search"].content[0].text)["passages"][0]["id"] == "d2"

    cats = got["categories"].structured_content
    assert cats["exists"] is True and cats["doc_count"] == 2
    assert [d["id"] for d in cats["documents"]] == ["d2", "d4"]

    assert got["fetch"].structured_content["keywords"] == ["literary periodical"]

    assert got["missing"].is_error
    assert "no document with id 'nope'" in got["missing"].content[0].text
    assert got["bad_k"].is_error
    assert "empty" in got["empty"].content[0].text and got["empty"].is_error


def test_unknown_tool_or_prompt_is_invalid_params_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, _ = _server()

    async def main() -> dict[str, Any]:
        got: dict[str, Any] = {}
        async with Client(server) as client:
            got["version"] = client.server_info.version if client.server_info else ""
            for kind, call in (
                ("prompt", lambda: client.get_prompt("no-such-prompt")),
                ("tool", lambda: client.call_tool("no_such_tool", {})),
            ):
                try:
                    await call()
                except MCPError as exc:
                    got[kind] = exc.error
        return got

    with caplog.at_level(logging.DEBUG):
        got = anyio.run(main)
    assert got["version"] == version("sira-seek") != ""
    for kind in ("prompt", "tool"):
        assert got[kind].code == INVALID_PARAMS, got[kind]
        assert "unknown" in got[kind].message
    assert "search, categories, fetch_document" in got["tool"].message
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


def test_unbounded_arguments_are_refused_before_the_engine_and_never_logged_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, backend = _server()
    long_id = "é" * 300  # 300 characters, 600 bytes: over the engines' 512-byte _id limit
    huge = "x" * 100_000
    fetched: list[str] = []
    real_get = backend.get
    backend.get = lambda index, doc_id: fetched.append(doc_id) or real_get(index, doc_id)  # type: ignore[method-assign]

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            return {
                "bytes": await client.call_tool("fetch_document", {"doc_id": long_id}),
                "huge": await client.call_tool("fetch_document", {"doc_id": huge}),
                "category": await client.call_tool("categories", {"name": huge}),
                "phrase": await client.call_tool("search", {"query": "x", "expansions": [huge]}),
                "ok": await client.call_tool("fetch_document", {"doc_id": "d1"}),
            }

    with caplog.at_level(logging.DEBUG):
        got = anyio.run(main)
    for name in ("bytes", "huge", "category", "phrase"):
        assert got[name].is_error, (name, got[name].content)
        assert len(got[name].content[0].text) < 2_000, name
    assert "512 bytes" in got["bytes"].content[0].text
    assert fetched == ["d1"]  # only the valid id reached the backend
    assert not got["ok"].is_error
    assert max(len(r.getMessage()) for r in caplog.records) < 2_000

"""The MCP search tool's ``method`` (issue 41): the methods of the one table that need no LLM
of ours, over the in-memory backend and the bag-of-words embedder double (both above their
protocols), in process through the MCP client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, get_args

import anyio
import pytest
from in_memory_backend import InMemoryBackend
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from embedder_double import BagOfWordsEmbedderDouble, embedders_made  # noqa: E402

from sira_seek.mcp.server import build_server  # noqa: E402
from sira_seek.sync.embed_runner import EmbedRunner  # noqa: E402
from sira_seek.sync.settings import SyncSettings  # noqa: E402
from sira_seek.workflows.agent_tools import AgentTools, ToolMethod  # noqa: E402
from sira_seek.workflows.methods import METHODS  # noqa: E402

DOCS = {
    "paris": {"title": "Paris", "text": "capital city of France on the Seine"},
    "etna": {"title": "Etna", "text": "active volcano on the island of Sicily"},
    "piano": {"title": "Piano", "text": "keyboard instrument with hammers and strings"},
}


def test_the_tools_methods_are_the_tables_methods_that_need_no_llm_of_ours() -> None:
    assert set(get_args(ToolMethod)) == {
        name for name, spec in METHODS.items() if spec.additions != "generated"
    }


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[BagOfWordsEmbedderDouble]:
    return embedders_made(monkeypatch)


def test_search_takes_a_method_and_the_vector_ones_share_one_embedder(
    tmp_path: Path, made: list[BagOfWordsEmbedderDouble]
) -> None:
    backend = InMemoryBackend(DOCS)
    EmbedRunner(backend, "idx", BagOfWordsEmbedderDouble(), SyncSettings(state_dir=tmp_path)).run()
    tools = AgentTools(backend, "idx")
    server = build_server(tools)
    question = "volcano island Sicily"

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            got: dict[str, Any] = {"schema": listed["search"].input_schema}
            for method in ("dense", "hybrid", "bm25"):
                call = {"query": question, "k": 2, "method": method}
                got[method] = (await client.call_tool("search", call)).structured_content
            got["sira-hybrid"] = (
                await client.call_tool(
                    "search",
                    {"query": question, "k": 2, "method": "sira-hybrid", "expansions": ["Etna"]},
                )
            ).structured_content
            got["refused"] = await client.call_tool(
                "search", {"query": question, "method": "dense", "expansions": ["Etna"]}
            )
            got["cot"] = await client.call_tool("search", {"query": question, "method": "cot"})
            return got

    got = anyio.run(main)
    prop = got["schema"]["properties"]["method"]
    assert "dense" in prop["description"] and "Default: sira with expansions" in prop["description"]
    for method in ("dense", "hybrid", "sira-hybrid", "bm25"):
        assert got[method]["method"] == method
        assert got[method]["passages"][0]["id"] == "etna", method
    assert [g["phrase"] for g in got["sira-hybrid"]["grounding"]] == ["Etna"]
    assert got["refused"].is_error and "apply to sira and sira-hybrid" in str(got["refused"])
    assert got["cot"].is_error  # an LLM method is not the tool's: refused by the schema
    # One embedder for the tool's life (the model loads once), closed with the tools.
    assert len(made) == 1 and made[0].queries == [question] * 3 and not made[0].closed
    tools.close()
    assert made[0].closed

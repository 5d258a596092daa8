"""`sira-seek mcp` as an MCP client meets it: the SDK's own client, over stdio (the client
launches the installed command) and over streamable HTTP (the command serves a port), on a real
node with an index enriched by sira-sync. The server wraps the engine-neutral tools, which
tests/integration/test_agent_tools.py runs on both engines; here one engine is enough
(tests/engine_matrix.py).

The tool answers are checked against the same search run directly through the ``SiraSeek``
facade and against the enrichment pool, so a server that listed the tools but answered from the
wrong index, dropped the grounding or mangled ids would fail here.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from agent_index_kit import EnrichedSlice, build_enriched_slice
from cli_runner import sira_seek_exe
from engine_matrix import ONE_ENGINE
from mcp import Client, StdioServerParameters
from readme_keys import check_keys, documented

from sira_seek.backend import SearchBackend
from sira_seek.client import SiraSeek
from sira_seek.mcp.server import TOOL_NAMES

pytestmark = [pytest.mark.e2e, ONE_ENGINE]

K = 5


@pytest.fixture(scope="module")
def enriched(
    backend: SearchBackend, wikimh_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EnrichedSlice]:
    index = f"test-mcp-{uuid.uuid4().hex[:8]}"
    try:
        yield build_enriched_slice(backend, index, wikimh_dir, tmp_path_factory.mktemp("mcp"))
    finally:
        backend.delete_index(index)


async def _exercise(server: Any, enriched: EnrichedSlice) -> dict[str, Any]:
    """List the tools and call each one, as an agent would, through the SDK client."""
    shared = enriched.category_counts().most_common(1)[0][0]
    async with Client(server) as client:
        listed = await client.list_tools()
        return {
            "tools": [t.name for t in listed.tools],
            "bm25": await client.call_tool("search", {"query": enriched.query, "k": K}),
            "sira": await client.call_tool(
                "search", {"query": enriched.query, "expansions": enriched.expansions, "k": K}
            ),
            "category": await client.call_tool("categories", {"name": shared, "k": 50}),
            "fetch": await client.call_tool("fetch_document", {"doc_id": "hp00010"}),
            "missing": await client.call_tool("fetch_document", {"doc_id": "no-such-id"}),
        }


def _check(got: dict[str, Any], backend: SearchBackend, enriched: EnrichedSlice) -> None:
    assert got["tools"] == list(TOOL_NAMES)
    facade = SiraSeek(backend)
    bm25 = facade.search(enriched.query, index=enriched.index, k=K)
    sira = facade.search(
        enriched.query,
        index=enriched.index,
        method="sira",
        expansions={enriched.query: enriched.expansions},
        k=K,
    )
    for name, direct in (("bm25", bm25), ("sira", sira)):
        result = got[name]
        assert not result.is_error, result.content
        found = result.structured_content
        assert found["method"] == name
        assert [p["id"] for p in found["passages"]] == [h.id for h in direct.hits]
        assert [p["title"] for p in found["passages"]] == [h.title for h in direct.hits]
        assert all(p["text"] == enriched.docs[p["id"]]["text"] for p in found["passages"])
        # clients that read only text get the same JSON
        assert json.loads(result.content[0].text) == found
    grounding = got["sira"].structured_content["grounding"]
    assert [g["phrase"] for g in grounding] == [c.phrase for c in sira.candidates.candidates]
    assert [g["kept"] for g in grounding] == [c.kept for c in sira.candidates.candidates]

    shared, n = enriched.category_counts().most_common(1)[0]
    category = got["category"].structured_content
    assert category["exists"] and category["doc_count"] == n
    assert {d["id"] for d in category["documents"]} == enriched.docs_in(shared)

    fetched = got["fetch"].structured_content
    assert fetched["title"] == enriched.docs["hp00010"]["title"]
    assert fetched["categories"] == enriched.categories["hp00010"]
    assert got["missing"].is_error
    assert "no document with id 'no-such-id'" in got["missing"].content[0].text


def test_stdio_transport(
    backend: SearchBackend, node_urls: dict[str, str], engine: str, enriched: EnrichedSlice
) -> None:
    params = StdioServerParameters(
        command=sira_seek_exe(),
        args=["mcp", "--index", enriched.index, "--url", node_urls[engine]],
        env=dict(os.environ),
    )
    got = anyio.run(_exercise, params, enriched)
    _check(got, backend, enriched)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[str], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"sira-seek mcp exited with {proc.returncode}: {proc.stderr.read()}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"sira-seek mcp did not listen on {port} within {timeout_s:.0f} s")


def test_streamable_http_transport(
    backend: SearchBackend, node_urls: dict[str, str], engine: str, enriched: EnrichedSlice
) -> None:
    port = _free_port()
    args = ["mcp", "--index", enriched.index, "--url", node_urls[engine]]
    args += ["--transport", "http", "--port", str(port), "--json"]
    proc = subprocess.Popen(
        [sira_seek_exe(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        check_keys(info, documented("mcp"), "mcp --json", nonempty={"tools"})
        url = f"http://127.0.0.1:{port}/mcp"
        assert info == {
            "index": enriched.index,
            "transport": "http",
            "url": url,
            "tools": list(TOOL_NAMES),
        }
        _wait_for_port(port, proc)
        got = anyio.run(_exercise, url, enriched)
        _check(got, backend, enriched)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_missing_index_fails_before_serving(node_urls: dict[str, str], engine: str) -> None:
    done = subprocess.run(
        [sira_seek_exe(), "mcp", "--index", f"no-such-{uuid.uuid4().hex[:6]}"]
        + ["--url", node_urls[engine]],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "does not exist" in done.stderr and done.stdout == ""


def test_streamable_http_takes_the_same_api_keys_as_serve(
    node_urls: dict[str, str], engine: str, enriched: EnrichedSlice, tmp_path: Path
) -> None:
    """``--api-keys-file`` guards the HTTP transport as it guards ``serve``: no key or a
    wrong one is 401 (never echoed); the key opens an MCP session."""
    key = "mcp-" + uuid.uuid4().hex
    keys = tmp_path / "keys"
    keys.write_text(key + "\n", encoding="utf-8")
    port = _free_port()
    args = ["mcp", "--index", enriched.index, "--url", node_urls[engine], "--transport", "http"]
    args += ["--port", str(port), "--api-keys-file", str(keys)]
    proc = subprocess.Popen(
        [sira_seek_exe(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}/mcp"
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    try:
        _wait_for_port(port, proc)
        none = httpx.post(url, json=hello, headers=accept, timeout=30)
        wrong = httpx.post(
            url, json=hello, headers={**accept, "Authorization": "Bearer nope-nope-nope-nope"},
            timeout=30,
        )  # fmt: skip
        right = httpx.post(
            url, json=hello, headers={**accept, "Authorization": f"Bearer {key}"}, timeout=30
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert none.status_code == 401 and wrong.status_code == 401
    assert key not in none.text + wrong.text
    assert right.status_code == 200 and "serverInfo" in right.text


class _Forwarder:
    """A TCP forwarder to the node (127.0.0.1:<port> -> the node), closed mid-test: the
    cluster "goes away" after the server started, as a network or a node does."""

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition("//")[2].partition(":")
        self.target = (host, int(port.rstrip("/")))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            upstream = socket.create_connection(self.target)
            self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        # shutdown first: a bare close leaves the accept() blocked in its thread listening
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for s in self.open:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def test_a_cluster_gone_after_start_never_puts_the_password_in_a_tool_error(
    node_urls: dict[str, str], engine: str, enriched: EnrichedSlice
) -> None:
    """The node has no security: the user-info is sent (Basic auth) and ignored, so the
    server starts and answers; then the cluster goes away and every tool error names it,
    masked."""
    planted = "PLANTED-" + uuid.uuid4().hex[:8]
    forwarder = _Forwarder(node_urls[engine])
    url = f"http://user:{planted}@127.0.0.1:{forwarder.port}"
    params = StdioServerParameters(
        command=sira_seek_exe(),
        args=["mcp", "--index", enriched.index, "--url", url],
        env={**os.environ, "SIRA_SEEK_LLM_MAX_RETRIES": "0"},
    )

    async def calls() -> dict[str, Any]:
        async with Client(params) as client:
            before = await client.call_tool("search", {"query": enriched.query, "k": K})
            forwarder.close()
            return {
                "before": before,
                "search": await client.call_tool("search", {"query": enriched.query, "k": K}),
                "fetch": await client.call_tool("fetch_document", {"doc_id": "hp00010"}),
                "categories": await client.call_tool("categories", {"name": "x", "k": 5}),
            }

    try:
        got = anyio.run(calls)
    finally:
        forwarder.close()
    assert not got["before"].is_error and got["before"].structured_content["passages"]
    for name in ("search", "fetch", "categories"):
        result = got[name]
        text = json.dumps([c.model_dump() for c in result.content])
        assert result.is_error, (name, text)
        assert planted not in text, (name, text)
        assert str(forwarder.port) in text, (name, text)  # it still says where it failed

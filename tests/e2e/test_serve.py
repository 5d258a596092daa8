"""``sira-seek serve`` as a user runs it: the installed command, started on a free loopback
port against the session's real nodes, answering HTTP.

``/search`` must return the same hits (ids and scores), candidate table and Dev Tools request
as ``sira-seek search --json`` for the same HotpotQA question on wikimh, both BM25 and SIRA
with the shared strong-LLM expansions; ``/ask`` answers with the embedded CPU model
(``llamacpp:gemma3-270m``) and returns its sketch. Bad bodies get 4xx with a message naming
the field; an unreachable cluster or LLM gets 503 with the reason; a password given through
the environment appears in no response and no log line.

The service is a front end over the engine-neutral facade, compared here with the CLI on the
same node: one engine (tests/engine_matrix.py).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_runner import run_cli, sira_seek_exe
from engine_matrix import ENGINE, ONE_ENGINE
from readme_keys import check_keys, documented
from seeds import seeded_rng

from sira_seek.backend import SearchBackend
from sira_seek.corpus import read_queries
from sira_seek.ingest import ingest_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "llm"))
from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

CPU_MODEL = "llamacpp:gemma3-270m"
SECRET = "pw-" + os.urandom(6).hex()  # never printed by the server, whatever happens


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One ``sira-seek serve`` process; its stdout and stderr go to files read after."""

    def __init__(self, args: list[str], env: dict[str, str], folder: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = folder / f"serve-{self.port}.log"
        self._log = self.log_path.open("w")
        cmd = [sira_seek_exe(), "--verbose", "serve", "--port", str(self.port), *args]
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, **env}
        )
        self.http = httpx.Client(base_url=self.base, timeout=600)
        self._wait()

    def _wait(self, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"sira-seek serve exited {self.proc.returncode}:\n{self.logs()}")
            try:
                self.http.get("/openapi.json", timeout=2)
                return
            except httpx.TransportError:
                time.sleep(0.3)
        pytest.fail(f"sira-seek serve did not answer within {timeout_s}s:\n{self.logs()}")

    def logs(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


@pytest.fixture(scope="module")
def server(
    node_urls: dict[str, str],
    engine: str,
    wikimh_indexes: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    """A server on the engine's node with a username and password from the environment
    (the open test node ignores them; the point is that they never come back out)."""
    env = {"SIRA_SEEK_USERNAME": "svc-user", "SIRA_SEEK_PASSWORD": SECRET}
    # The allow-list: the corpus, and one name that does not exist on the cluster (404).
    allowed = ["--index", wikimh_indexes[engine], "--index", "no-such-index-here"]
    args = ["--url", node_urls[engine], *allowed]
    found = Server(args, env, tmp_path_factory.mktemp(f"serve-{engine}"))
    yield found
    found.stop()
    logs = found.logs()
    assert SECRET not in logs
    # The masking filter left the log lines intact (uvicorn's access formatter unpacks them).
    assert '"POST /search HTTP/1.1" 200' in logs and '"POST /search HTTP/1.1" 422' in logs
    assert "Logging error" not in logs


def _questions(wikimh_dir: Path, n: int) -> list[tuple[str, str]]:
    queries = read_queries(wikimh_dir / "queries-hotpotqa.jsonl")
    rng = seeded_rng("hotpotqa questions for /search")
    return [(q.id, q.text) for q in rng.sample(queries, n)]


def _expansions(wikimh_dir: Path) -> dict[str, list[str]]:
    path = wikimh_dir / "expansions-hotpotqa.strong-llm.jsonl"
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {row["_id"]: row["keywords"] for row in rows}


def _cli_search(url: str, index: str, text: str, extra: list[str]) -> dict[str, Any]:
    res = run_cli(["search", text, "--index", index, "--url", url, "--json", *extra])
    assert res.returncode == 0, res.stderr[-2000:]
    return dict(json.loads(res.stdout))


def _same_search(api: dict[str, Any], cli: dict[str, Any]) -> None:
    """Everything but the timings: hits (ids, scores, titles, matched clauses), the body
    sent, every candidate's windows' DF and decision, |C|, and the Dev Tools request."""
    assert set(api) == set(cli)
    assert [h["_id"] for h in api["hits"]] == [h["_id"] for h in cli["hits"]]
    assert api["hits"] == cli["hits"]
    for key in ("query", "candidates", "doc_count", "max_doc_freq", "plain_bm25", "explain"):
        assert api[key] == cli[key], key
    assert api["expansion_source"] == cli["expansion_source"]


@ONE_ENGINE
def test_search_equals_the_cli_for_hotpotqa_questions(
    server: Server, node_urls: dict[str, str], engine: str, wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
) -> None:  # fmt: skip
    expansions = _expansions(wikimh_dir)
    file = wikimh_dir / "expansions-hotpotqa.strong-llm.jsonl"
    index, url = wikimh_indexes[engine], node_urls[engine]
    for qid, text in _questions(wikimh_dir, 2):
        print(f"{engine}: {qid} {text!r}")
        sira_body = {"index": index, "query": text, "expansions": expansions[qid], "k": 10}
        api = server.http.post("/search", json=sira_body)
        assert api.status_code == 200, api.text
        sira = api.json()
        cli = _cli_search(url, index, text, ["--expansions", str(file), "--id", qid])
        _same_search(sira, cli)
        assert not sira["plain_bm25"] and sira["expansion_source"] == "precomputed"
        assert any(c["decision"] == "kept" for c in sira["candidates"])
        assert len(sira["hits"]) == 10
        # Whitespace around the query changes nothing (the retriever normalises it, and the
        # body's phrases must still be found).
        padded = server.http.post("/search", json={**sira_body, "query": f"  {text}\n "})
        assert padded.json()["hits"] == sira["hits"]

        # No expansions and no --llm: BM25, equal to the CLI's plain search; no index in
        # the body: the server's --index.
        bm25 = server.http.post("/search", json={"query": text, "k": 5})
        assert bm25.status_code == 200, bm25.text
        plain = bm25.json()
        _same_search(plain, _cli_search(url, index, text, ["--size", "5"]))
        assert plain["plain_bm25"] and plain["expansion_source"] == "none"
        assert not plain["candidates"] and len(plain["hits"]) == 5
        assert plain["explain"].startswith(f"GET {index}/_search?")


@ONE_ENGINE
def test_a_deleted_index_is_404_at_once_and_a_recreated_one_is_searched(
    node_urls: dict[str, str], engine: str, backend: SearchBackend, tmp_path: Path
) -> None:
    """The server reuses an index's profile between searches (``--profile-max-age``, here an
    hour); it still checks that the index exists on every search: deleted, it is 404 at once;
    recreated, its profile is read again and the new documents are found."""
    index = f"test-serve-{os.urandom(4).hex()}"
    first = tmp_path / "first"
    first.mkdir()
    (first / "corpus.jsonl").write_text(
        json.dumps({"_id": "a", "title": "Vostok 1", "text": "Yuri Gagarin, first in space."})
    )
    second = tmp_path / "second"
    second.mkdir()
    (second / "corpus.jsonl").write_text(
        json.dumps({"_id": "b", "title": "Gagarin", "text": "Gagarin flew Vostok 1 in 1961."})
    )
    args = ["--url", node_urls[engine], "--profile-max-age", "3600"]
    server = Server(args, {}, tmp_path)
    body = {"index": index, "query": "Gagarin space", "expansions": ["Vostok 1"], "k": 5}
    try:
        ingest_corpus(backend, index, first)
        res = server.http.post("/search", json=body)
        assert res.status_code == 200 and [h["_id"] for h in res.json()["hits"]] == ["a"]
        backend.delete_index(index)
        gone = server.http.post("/search", json=body)
        assert gone.status_code == 404 and "does not exist" in gone.json()["detail"]
        ingest_corpus(backend, index, second)
        again = server.http.post("/search", json=body)
        assert again.status_code == 200, again.text
        assert [h["_id"] for h in again.json()["hits"]] == ["b"]
    finally:
        server.stop()
        backend.delete_index(index)


@ONE_ENGINE
def test_health_and_openapi_docs(server: Server, engine: str) -> None:
    health = server.http.get("/health")
    assert health.status_code == 200, health.text
    body = health.json()
    assert body["status"] == "ok" and body["engine"] == engine
    assert body["cluster_status"] in ("green", "yellow") and body["llm"] is None
    spec = server.http.get("/openapi.json").json()
    assert {"/search", "/ask", "/health"} <= set(spec["paths"])
    assert "post" in spec["paths"]["/search"] and "post" in spec["paths"]["/ask"]
    assert set(spec["components"]["schemas"]["SearchBody"]["properties"]) >= {
        "index", "query", "expansions", "k",
    }  # fmt: skip
    docs = server.http.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


@ONE_ENGINE
@pytest.mark.parametrize(
    ("body", "status", "names"),
    [
        ({"index": "x"}, 422, "body.query"),  # missing query
        ({"query": "   "}, 422, "body.query"),
        ({"query": "q", "k": 0}, 422, "body.k"),
        ({"query": "q", "k": "ten"}, 422, "body.k"),
        ({"query": "q", "expansions": "not a list"}, 422, "body.expansions"),
        ({"query": "q", "expansion": ["typo"]}, 422, "body.expansion"),  # unknown field
        ({"query": "q", "tau": 3}, 422, "body.tau"),
        ({"query": "q", "index": "no-such-index-here"}, 404, "does not exist"),
        ({"query": "q", "index": "another-index"}, 403, "does not serve 'another-index'"),
        ({"query": "q", "index": "wikimh/_refresh"}, 422, "not an index name"),
        ({"query": "q", "index": "_all"}, 422, "may not start with"),
        ({"query": "q", "k": True}, 422, "body.k"),
        ({"query": "q", "k": "5"}, 422, "body.k"),
        ({"query": "q", "weight": 1e308}, 422, "body.weight"),
        ({"query": "q" * 9000}, 422, "body.query"),
        ({"query": "q", "index": ""}, 422, "give an index name"),
    ],
)
def test_bad_search_requests_get_4xx_with_a_clear_message(
    server: Server, body: dict[str, Any], status: int, names: str
) -> None:
    res = server.http.post("/search", json=body)
    assert res.status_code == status, res.text
    assert names in res.json()["detail"]


@ONE_ENGINE
def test_a_body_that_is_not_json_is_422(server: Server) -> None:
    res = server.http.post(
        "/search", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert res.status_code == 422 and "JSON" in res.json()["detail"]
    ask = server.http.post("/ask", json={"question": ""})
    assert ask.status_code == 422 and "body.question" in ask.json()["detail"]


@ONE_ENGINE
def test_a_chunked_body_over_the_limit_is_413_and_a_lone_surrogate_422(server: Server) -> None:
    """Under uvicorn: a 5 MB body without Content-Length is cut off at the 4 MiB limit (413),
    a lone surrogate is 422 naming its field, and vanilla-llm meets the allow-list (403)."""

    def five_mb() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(80):
            yield b"x" * 65536
        yield b'"}'

    headers = {"content-type": "application/json"}
    res = server.http.post("/search", content=five_mb(), headers=headers)
    assert res.status_code == 413, res.text
    assert "larger than 4,194,304 bytes" in res.json()["detail"]
    res = server.http.post(
        "/search", content=b'{"query": "q", "index": "a\\ud800"}', headers=headers
    )
    assert res.status_code == 422 and res.json()["detail"].startswith("body.index: not valid")
    body = {"question": "q", "method": "vanilla-llm", "index": "not-on-the-list"}
    res = server.http.post("/ask", json=body)
    assert res.status_code == 403 and "does not serve" in res.json()["detail"]


def test_unreachable_cluster_is_503_with_the_reason_and_no_secret(tmp_path: Path) -> None:
    dead = free_port()  # nothing listens there
    url = f"http://admin:{SECRET}@127.0.0.1:{dead}"
    env = {"SIRA_SEEK_PASSWORD": SECRET, "SIRA_SEEK_API_KEY": f"key-{SECRET}"}
    srv = Server(["--url", url, "--index", "wikimh"], env, tmp_path)
    try:
        replies = [
            srv.http.get("/health"),
            srv.http.post("/search", json={"query": "Who wrote Lilith?"}),
            srv.http.post("/ask", json={"question": "Who wrote Lilith?"}),
        ]
        for res in replies:
            assert res.status_code == 503, res.text
            assert SECRET not in res.text
            assert f"127.0.0.1:{dead}" in res.text  # the reason names what is unreachable
        assert "No search cluster answers" in replies[1].json()["detail"]
    finally:
        srv.stop()
    logs = srv.logs()
    assert "not reachable yet" in logs  # the start-up warning was logged ...
    assert SECRET not in logs  # ... without the password in the URL


@ONE_ENGINE
def test_unreachable_llm_is_503_and_a_secret_never_leaks(
    node_urls: dict[str, str], engine: str, wikimh_indexes: dict[str, str], tmp_path: Path
) -> None:
    llm_port = free_port()  # nothing listens there
    dead_llm = f"openai:http://127.0.0.1:{llm_port}/v1#no-model"
    env = {"SIRA_SEEK_PASSWORD": SECRET, "SIRA_SEEK_LLM_MAX_RETRIES": "0"}
    args = ["--url", node_urls[engine], "--index", wikimh_indexes[engine], "--llm", dead_llm]
    srv = Server(args, env, tmp_path)
    try:
        search = srv.http.post("/search", json={"query": "If Gallu is a demon Lilu is what?"})
        assert search.status_code == 503, search.text
        assert "unreachable" in search.json()["detail"]
        assert f"127.0.0.1:{llm_port}" in search.json()["detail"]
        # Asked for: plain BM25, said so in the answer.
        body = {"query": "If Gallu is a demon Lilu is what?", "on_llm_failure": "fallback"}
        fell = srv.http.post("/search", json=body)
        assert fell.status_code == 200, fell.text
        assert fell.json()["fell_back_to_bm25"] is True and fell.json()["hits"]
        assert any("fell back to plain BM25" in note for note in fell.json()["notes"])
        # The body's phrases without the rerank stage (SIRA's default with a server LLM since
        # 7c61aa2) do not need the LLM: still served.
        phrases = {"query": "Lilu", "expansions": ["Lilith"], "rerank": 0}
        ok = srv.http.post("/search", json=phrases)
        assert ok.status_code == 200 and ok.json()["expansion_source"] == "precomputed"
        ask = srv.http.post("/ask", json={"question": "If Gallu is a demon Lilu is what?"})
        assert ask.status_code == 503, ask.text
        assert f"cannot reach the LLM server at http://127.0.0.1:{llm_port}" in ask.text
        for res in (search, fell, ok, ask):
            assert SECRET not in res.text
    finally:
        srv.stop()
    assert SECRET not in srv.logs()


def test_ask_answers_with_the_cpu_model_and_returns_its_sketch(
    node_urls: dict[str, str], wikimh_indexes: dict[str, str],
    backends: dict[str, SearchBackend], tmp_path: Path,
) -> None:  # fmt: skip
    # The CPU model costs tens of seconds; the other tests' engine.
    engine = ENGINE
    index = wikimh_indexes[engine]
    # Two gists at most and greedy decoding keep the 270M model's run short and repeatable.
    # The response cache stays on, as for every CPU-model test: the model answers on a clean
    # machine (about 4 minutes here under load), later runs read its cached answers (seconds).
    env = {"SIRA_SEEK_SEEK_MAX_GISTS": "2", "SIRA_SEEK_SEEK_TEMPERATURE": "0"}
    srv = Server(["--url", node_urls[engine], "--llm", CPU_MODEL], env, tmp_path)
    try:
        question = "Are Christopher Nolan and Sathish Kalathil both film directors?"
        res = srv.http.post("/ask", json={"index": index, "question": question, "top_k": 3})
        assert res.status_code == 200, res.text
        out = res.json()
    finally:
        srv.stop()
    assert out["question"] == question and out["error"] is None and out["method"] == "seek"
    assert out["sketch"] is not None and 1 <= len(out["sketch"]["gists"]) <= 2
    assert out["steps"], "SEEK retrieved nothing"
    for step in out["steps"]:
        assert step["sub_query"] and 1 <= len(step["retrieved_ids"]) <= 3
        for doc_id in step["retrieved_ids"]:
            assert backends[engine].get(index, doc_id) is not None, doc_id
    calls = sum(stage["calls"] for stage in out["usage"]["by_stage"].values())
    assert calls >= 3  # the sketch, a sub-query and a slot per gist, the answer
    assert isinstance(out["answer"], str)


def test_json_line_reports_the_bound_port_before_serving(tmp_path: Path) -> None:
    """`--port 0 --json`: the first stdout line names the port the OS picked, and the server
    answers there; an LLM spec carrying the password from the environment is masked."""
    env = {**os.environ, "SIRA_SEEK_PASSWORD": SECRET}
    llm = f"openai:http://u:{SECRET}@127.0.0.1:9/v1#m"
    cmd = [sira_seek_exe(), "serve", "--port", "0", "--json", "--index", "x", "--llm", llm]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        line = json.loads(proc.stdout.readline())
        check_keys(line, documented("serve"), "serve --json", nonempty=set())
        assert line["port"] > 0 and line["url"] == f"http://127.0.0.1:{line['port']}"
        assert line["docs"] == line["url"] + "/docs" and line["index"] == "x"
        assert SECRET not in json.dumps(line) and line["llm"].startswith("openai:http://")
        deadline = time.monotonic() + 60
        while True:
            try:
                res = httpx.get(line["url"] + "/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not answer on its port"
                time.sleep(0.3)
        assert res.status_code == 200 and "/search" in res.json()["paths"]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_json_logs_go_to_stderr_with_the_request_id(tmp_path: Path) -> None:
    """`--log-format json`: stdout holds only the `--json` line; every stderr line is a JSON
    object, the access line of a request carries the id its caller sent."""
    err = (tmp_path / "stderr.log").open("w")
    cmd = [sira_seek_exe(), "serve", "--port", "0", "--json", "--log-format", "json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert proc.stdout is not None
        line = json.loads(proc.stdout.readline())
        deadline = time.monotonic() + 60
        while True:
            try:
                res = httpx.get(line["url"] + "/openapi.json", headers={"X-Request-ID": "rq-7"})
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not answer on its port"
                time.sleep(0.3)
        assert res.headers["x-request-id"] == "rq-7"
    finally:
        proc.terminate()
        rest, _ = proc.communicate(timeout=20)
        err.close()
    assert rest == ""  # nothing after the --json line on stdout
    logged = [json.loads(x) for x in (tmp_path / "stderr.log").read_text().splitlines() if x]
    access = [e for e in logged if e.get("path") == "/openapi.json"]
    assert access and access[0]["request_id"] == "rq-7" and access[0]["status"] == 200


def _refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except (ConnectionRefusedError, ConnectionResetError):
        return True


def _wait_for(check: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@ONE_ENGINE
@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_lets_the_searches_in_flight_finish_and_exits_0(
    node_urls: dict[str, str], engine: str, wikimh_indexes: dict[str, str], tmp_path: Path,
    workers: int,
) -> None:  # fmt: skip
    """SIGTERM while three /search requests wait for the server's LLM (an OpenAI-compatible
    stub that holds its answers until the test releases them): new connections are refused
    at once, the searches in flight then complete with 200 and their hits, each worker
    closes its cluster connection, the server exits 0 and its stderr says it shut down."""
    index, release = wikimh_indexes[engine], threading.Event()
    phrases = json.dumps({"keywords": ["literary periodical", "Bauer Media Group"]})
    err_path, port = tmp_path / "stderr.log", free_port()
    env = {**os.environ, "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")}
    with StubOpenAIServer(default=StubReply(text=phrases, hold=release)) as llm:
        cmd = [
            sira_seek_exe(), "serve", "--port", str(port), "--url", node_urls[engine],
            "--index", index, "--llm", f"openai:{llm.base_url}#stub-model",
            "--workers", str(workers), "--shutdown-timeout", "60",
        ]  # fmt: skip
        with err_path.open("w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        try:
            _wait_for(lambda: not _refused(port), 120, "serve to listen")
            answers: list[httpx.Response | BaseException] = []

            def search(n: int) -> None:
                body = {"query": f"Which magazine was started first, Arthur's Magazine ({n})?"}
                url = f"http://127.0.0.1:{port}/search"
                try:
                    answers.append(httpx.post(url, json=body, timeout=120))
                except httpx.HTTPError as exc:
                    answers.append(exc)

            threads = [threading.Thread(target=search, args=(n,)) for n in range(3)]
            for thread in threads:
                thread.start()
            # All three are inside the service, waiting for the LLM.
            _wait_for(lambda: len(llm.requests) >= 3, 120, "three searches at the LLM")
            proc.send_signal(signal.SIGTERM)
            _wait_for(lambda: _refused(port), 10, "new connections to be refused")
            assert answers == []
            release.set()
            for thread in threads:
                thread.join(timeout=120)
            assert proc.wait(timeout=120) == 0
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    log = err_path.read_text()
    for answer in answers:
        assert isinstance(answer, httpx.Response), f"{answer!r}\n{log[-3000:]}"
        assert answer.status_code == 200, answer.text
        found = answer.json()
        assert found["expansion_source"] == "llm" and len(found["hits"]) == 10
    assert len(answers) == 3
    assert "Shutting down" in log and "Finished server process" in log, log[-3000:]
    assert log.count("stopped: the cluster connection is closed") == workers, log[-3000:]
    if workers > 1:
        assert "Received SIGTERM" in log and "Stopping parent process" in log
    assert "Traceback" not in log, log[-3000:]

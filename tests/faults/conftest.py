"""The fault and bad-input suite: every scenario records what it checked and what it lost;
the session ends with one table (scenario, runs, documents checked, lost, duplicated,
corrupted, wall time). Run it alone with `python -m pytest tests/faults`."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_kit import LEDGER, FaultLedger, FaultScenario
from support.suite_nodes import SHARED_ENV

from sira_seek.backend import SearchBackend
from sira_seek.config import NodeSettings
from sira_seek.esplugin.local.node import LocalNode, _free_port, install_distribution


@pytest.fixture
def fault_ledger():  # type: ignore[no-untyped-def]
    return LEDGER


@pytest.fixture
def fault_scenario(
    backend: SearchBackend,
    engine: str,
    index_name: str,
    wikimh_dir: Path,
    tmp_path: Path,
    fault_ledger: FaultLedger,
) -> FaultScenario:
    """A scenario on the session's node for ``engine``, with a fresh index of its own."""
    return FaultScenario(backend, engine, index_name, wikimh_dir, tmp_path, fault_ledger)


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not LEDGER.rows:
        return
    tr = terminalreporter
    tr.section("fault and bad-input suite")
    tr.write_line(
        f"{'scenario':60s} {'runs':>5s} {'checked':>8s} {'lost':>5s} {'dup':>5s} "
        f"{'corrupt':>8s} {'wall s':>7s}"
    )
    for row in LEDGER.rows:
        tr.write_line(
            f"{row.scenario:60s} {row.runs:5d} {row.checked:8d} {row.lost:5d} "
            f"{row.duplicated:5d} {row.corrupted:8d} {row.wall_s:7.1f}"
        )


@pytest.fixture(scope="session")
def restart_node(node_urls: dict[str, str]) -> Iterator[LocalNode]:
    """The OpenSearch node the restart scenario stops and starts again (its indexes are its own).

    The session's local node when the session's OpenSearch URL is that node: its restart costs
    about ten seconds and every index on it comes back from disk (``up`` waits for yellow
    health), where a second node cost a 20-30 s start of its own. A node the user named
    (``SIRA_SEEK_TEST_OPENSEARCH_URL`` elsewhere) is never stopped, nor one that another pytest
    process shares (``SHARED_ENV``, tests/support/suite_nodes.py): a second node of our own
    then, in its own folder and port."""
    session = LocalNode(NodeSettings(), "opensearch")
    state = session.running()
    ours = os.environ.get(SHARED_ENV) != "1"
    if ours and state and state.url.rstrip("/") == node_urls["opensearch"].rstrip("/"):
        try:
            yield session
        finally:
            session.up()  # whatever the scenario did, the session's later tests need it
        return
    shared = NodeSettings()
    install_distribution(LocalNode(shared, "opensearch").spec, shared.home)
    # pytest's tmp_path sits under a root-only folder; the node's service user must reach this.
    folder = Path(tempfile.mkdtemp(prefix="sira-test-"))
    folder.chmod(0o755)
    home = folder / "home"
    home.mkdir()
    (home / "dist").symlink_to(shared.home / "dist")
    (home / "downloads").symlink_to(shared.home / "downloads")
    node = LocalNode(NodeSettings(home=home, http_port=_free_port(9450)), "opensearch")
    try:
        yield node
    finally:
        node.down()
        shutil.rmtree(folder, ignore_errors=True)

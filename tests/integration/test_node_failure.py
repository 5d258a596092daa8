"""A node that cannot start says why, with the tail of its own log."""

from __future__ import annotations

from pathlib import Path

import pytest

from sira_seek.config import NodeSettings
from sira_seek.esplugin.engines.errors import NodeStartError
from sira_seek.esplugin.local.node import LocalNode, install_distribution

pytestmark = pytest.mark.integration


def test_failed_start_shows_log_tail(world_readable_tmp: Path, node_urls: dict[str, str]) -> None:
    shared = NodeSettings()
    node = LocalNode(shared, "opensearch")
    install_distribution(node.spec, shared.home)  # cached: the session node used it
    home = world_readable_tmp / "home"
    home.mkdir()
    (home / "dist").symlink_to(shared.home / "dist")
    (home / "downloads").symlink_to(shared.home / "downloads")
    broken = LocalNode(NodeSettings(home=home, heap="12zz", startup_timeout=120), "opensearch")
    if broken.node_dir.parent.parent != home:
        pytest.fail("node folder must live in the given home")
    with pytest.raises(NodeStartError) as err:
        broken.up()
    message = str(err.value)
    assert "exited with code" in message
    assert "Last lines of" in message and "stdout.log" in message
    assert "12zz" in message  # the JVM's own complaint about the bad heap size is shown
    assert broken.running() is None


def test_unreachable_home_is_explained_for_root(tmp_path: Path) -> None:
    """Under root the node's service user must reach the home; a closed folder is named."""
    from sira_seek.esplugin.local.node import check_reachable

    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    with pytest.raises(NodeStartError, match="closed to other users"):
        check_reachable(closed / "home")
    check_reachable(Path("/usr/share"))  # a world-traversable path passes

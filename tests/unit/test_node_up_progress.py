"""``node up``'s status line: what ``LocalNode.up(on_status=)`` reports reaches stderr (in
place on a terminal, a few plain lines elsewhere), and nothing of it under ``--no-progress``
or ``--json``. The plain-line rule itself, for every command's displays: test_progress_lines.py.

``LocalNode.up`` is replaced by a scripted start (a double above the engine boundary: it only
calls the callback the real method calls), so no JVM starts here; real starts run in the
integration suite.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek.cli.main import cli
from sira_seek.esplugin.local import node as local_node
from sira_seek.esplugin.local.node import LocalNode, NodeState, starting_status


@pytest.fixture
def scripted_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    sent: list[str] = []

    def up(self: LocalNode, on_status: Callable[[str], None] | None = None) -> NodeState:
        # The real wait reports every quarter second: a 7-second start sends about 30.
        waits = [starting_status(self.spec, 0.25 * i) for i in range(1, 29)]
        for message in (
            f"downloading {self.spec.artifact} from Maven Central",
            starting_status(self.spec, 0.2),
            *waits,
            starting_status(self.spec, 3.4),
        ):
            sent.append(message)
            if on_status is not None:
                on_status(message)
        return NodeState(
            engine=self.spec.engine,
            version=self.spec.version,
            url="http://127.0.0.1:1",
            pid=2**22 + 7,  # no such process: reported as not alive
            node_dir=str(tmp_path),
        )

    monkeypatch.setattr(LocalNode, "running", lambda self: None)
    monkeypatch.setattr(LocalNode, "up", up)
    monkeypatch.setattr(local_node, "_pid_alive", lambda pid: False)
    return sent


def test_node_up_shows_download_and_waited_seconds(scripted_start: list[str]) -> None:
    result = CliRunner().invoke(cli, ["node", "up", "--engine", "opensearch"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "http://127.0.0.1:1"  # stdout stays the URL alone
    assert "from Maven Central" in result.stderr
    assert "starting opensearch" in result.stderr and "node, waited 3s [" in result.stderr
    assert len(scripted_start) == 31


def test_node_up_piped_writes_a_line_per_phase_not_per_redraw(scripted_start: list[str]) -> None:
    """stderr here is not a terminal (a log file, a pipe): the command's notice, then the
    download, the start, and the end with the time taken; not one line per status the 30
    waits sent."""
    result = CliRunner().invoke(cli, ["node", "up", "--engine", "opensearch"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 4, lines
    assert lines[0].endswith("(first run downloads it) ...")
    assert lines[1].endswith("from Maven Central")
    assert lines[2].endswith("node, waited 0s")
    assert lines[3].startswith(scripted_start[-1] + " [")  # the last wait, with the time taken
    assert "\r" not in result.stderr


@pytest.mark.parametrize("flag", ["--no-progress", "--json"])
def test_node_up_status_is_off_with_no_progress_and_json(
    scripted_start: list[str], flag: str
) -> None:
    result = CliRunner().invoke(cli, ["node", "up", "--engine", "opensearch", flag])
    assert result.exit_code == 0, result.output
    assert "waited" not in result.stderr and "Maven Central" not in result.stderr
    if flag == "--json":
        assert json.loads(result.stdout)["url"] == "http://127.0.0.1:1"

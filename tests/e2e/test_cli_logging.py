"""--verbose / --debug on both installed commands, against a real node.

A known failure is one line by default; --debug (or SIRA_SEEK_DEBUG=1) shows its traceback;
--verbose shows the library's INFO records; the group flags also work in front of sira-sync's
implied `run`. Logging is the CLI's, whatever engine answers: one engine
(tests/engine_matrix.py).
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from cli_runner import run_cli
from engine_matrix import ONE_ENGINE

pytestmark = [pytest.mark.e2e, ONE_ENGINE]


def run_sync(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    exe = Path(sys.executable).parent / "sira-sync"
    if not exe.exists():
        pytest.fail("the sira-sync console script is not installed (pip install -e .)")
    return subprocess.run(
        [str(exe), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        check=False,
    )


@pytest.fixture
def missing_index() -> str:
    return f"test-missing-{uuid.uuid4().hex[:8]}"


def test_a_known_failure_is_one_line_by_default_and_a_traceback_under_debug(
    node_urls: dict[str, str], engine: str, missing_index: str
) -> None:
    env = {"SIRA_SEEK_URL": node_urls[engine], "SIRA_SEEK_DEBUG": "0"}
    args = ["search", "who wrote it", "--index", missing_index]

    plain = run_cli(args, env=env)
    assert plain.returncode == 1
    assert plain.stderr.strip().splitlines() == [
        f"Error: index '{missing_index}' does not exist: ingest a corpus into it first"
    ]

    debug = run_cli(["--debug", *args], env=env)
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert "NotFound" in debug.stderr and "workflows/search.py" in debug.stderr

    by_env = run_cli(args, env={**env, "SIRA_SEEK_DEBUG": "1"})
    assert by_env.returncode == 1 and "Traceback (most recent call last)" in by_env.stderr


def test_verbose_shows_the_library_info_records_and_default_does_not(
    node_urls: dict[str, str], engine: str, missing_index: str
) -> None:
    env = {"SIRA_SEEK_URL": node_urls[engine], "SIRA_SEEK_DEBUG": "0"}
    args = ["search", "who wrote it", "--index", missing_index]
    quiet = run_cli(args, env=env)
    verbose = run_cli(["--verbose", *args], env=env)
    detected = f"INFO: {engine} "  # esplugin.engines.registry logs the detected engine and version
    assert detected in verbose.stderr and detected not in quiet.stderr
    # the client's expected 404 (index-exists probe) is not shown without --debug
    assert "404" not in verbose.stderr
    assert "Traceback" not in verbose.stderr


def test_sira_sync_takes_the_group_flags_before_its_implied_run(
    node_urls: dict[str, str], engine: str, missing_index: str, tmp_path: Path
) -> None:
    enrichments = tmp_path / "e.jsonl"
    enrichments.write_text('{"_id": "a", "keywords": ["x"]}\n')
    env = {"SIRA_SEEK_URL": node_urls[engine], "SIRA_SEEK_DEBUG": "0"}
    args = ["--index", missing_index, "--from-jsonl", str(enrichments), "--no-progress"]
    args += ["--state-dir", str(tmp_path / "state")]

    plain = run_sync(args, env)
    assert plain.returncode == 1, plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1 and plain.stderr.startswith("Error: ")

    debug = run_sync(["--debug", "-v", *args], env)
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert f"INFO sira_seek.esplugin.engines.registry: {engine} " in debug.stderr

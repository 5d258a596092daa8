"""The command line exactly as a user runs it: the installed console scripts, as subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect

BIN = Path(sys.executable).parent


def sira_seek_exe() -> str:
    exe = BIN / "sira-seek"
    found = str(exe) if exe.exists() else shutil.which("sira-seek")
    if not found:
        pytest.fail(
            "the sira-seek console script is not installed (pip install -e .)", pytrace=False
        )
    return found


def run_cli(
    args: Sequence[str], *, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sira_seek_exe(), *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )


@contextmanager
def ingested_collection(
    url: str,
    index: str,
    folder: Path,
    docs: Sequence[Mapping[str, Any]],
    queries: Mapping[str, str],
    qrels: Mapping[str, str],
) -> Iterator[None]:
    """A fresh ``index`` on the node at ``url`` holding ``docs``, ingested by the CLI as a
    user does, with ``folder``'s ``queries.jsonl`` and ``qrels.tsv`` (one judged document
    per query); the index is deleted after."""
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    (folder / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in qrels.items())
    )
    ingested = run_cli(["ingest", str(folder / "corpus.jsonl"), "--index", index, "--url", url])
    assert ingested.returncode == 0, ingested.stderr
    try:
        yield
    finally:
        connect(ClusterSettings(url=url)).delete_index(index)

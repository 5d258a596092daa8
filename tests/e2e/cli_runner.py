"""The command line exactly as a user runs it: the installed console scripts, as subprocesses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

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

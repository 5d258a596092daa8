"""Fixtures shared by every test layer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """../shared/data beside the repo, or $SIRA_SEEK_SHARED_DATA / $SIRA_SEEK_DATA."""
    for env in ("SIRA_SEEK_SHARED_DATA", "SIRA_SEEK_DATA"):
        if os.environ.get(env):
            return Path(os.environ[env])
    return REPO_ROOT.parent / "shared" / "data"


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

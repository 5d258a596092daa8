"""Fixtures for SIRA's unit tests; the fakes live in ``sira_fakes`` beside this file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from sira_fakes import DF, FakeBackend  # noqa: E402


@pytest.fixture
def fake_backend() -> FakeBackend:
    return FakeBackend(DF, doc_count=1000)

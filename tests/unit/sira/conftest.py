"""Fixtures for SIRA's unit tests; the doubles live in ``sira_doubles`` beside this file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# The SearchBackend double shared by every unit layer.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))

from sira_doubles import DF, DFTableBackend  # noqa: E402


@pytest.fixture
def fake_backend() -> DFTableBackend:
    return DFTableBackend(DF, doc_count=1000)

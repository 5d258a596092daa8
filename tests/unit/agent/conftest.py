"""Fixtures for the agent tools' unit tests: the shared in-memory ``SearchBackend`` double."""

from __future__ import annotations

import sys
from pathlib import Path

# The SearchBackend double shared by every unit layer.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))

"""Fixtures for sira-sync's unit tests; the backend double lives in ``tests/unit/doubles``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# The SearchBackend double shared by every unit layer.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
# The scripted LLM double lives with the LLM layer's unit tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from in_memory_backend import InMemoryBackend  # noqa: E402
from sync_doubles import layout_properties  # noqa: E402

from sira_seek.sync.settings import SyncSettings  # noqa: E402

# 20 documents; "river" is in every one of them (too common for any tau < 1).
DOCS = {
    f"d{i:02d}": {"title": f"Doc {i}", "text": f"river story number {i} about place{i}"}
    for i in range(20)
}


@pytest.fixture
def memory_index() -> InMemoryBackend:
    return InMemoryBackend(DOCS, properties=layout_properties())


@pytest.fixture
def settings(tmp_path: Path) -> SyncSettings:
    return SyncSettings(state_dir=tmp_path / "state", page_size=7, tau=0.2)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def standard_records(ids: list[str]) -> list[dict]:
    """Per doc: a new phrase (DF 0), a too-common one, a stopword-only one, a category."""
    return [
        {
            "_id": i,
            "keywords": [f"alias of {i}", "river", "the", f"place{int(i[1:])}"],
            "categories": [f"group {int(i[1:]) % 3}"],
        }
        for i in ids
    ]

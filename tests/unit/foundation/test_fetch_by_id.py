"""``sira_seek.documents``: the one fetch of stored documents by id (issue 40 item 3). Over the
in-memory ``SearchBackend`` double (above the protocol): which ids come back, which fields, and
how many round trips a run's worth of ids costs."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

UNIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(UNIT / "doubles"))
from in_memory_backend import InMemoryBackend  # noqa: E402

from sira_seek.documents import (  # noqa: E402
    fetch_documents,
    fetch_documents_many,
    field_text,
    missing_ids,
)
from sira_seek.fields import TEXT  # noqa: E402

DOCS = {
    f"d{i}": {"title": f"Title {i}", "text": f"text of {i}", "categories": ["c"]} for i in range(7)
}


class CountingBackend(InMemoryBackend):
    """Counts ``msearch`` round trips (the double's ``searches`` counts single bodies)."""

    def __init__(self, docs: Any) -> None:
        super().__init__(docs)
        self.msearches = 0

    def msearch(self, index: str, bodies: Any, params: Any = None) -> Any:
        self.msearches += 1
        return super().msearch(index, bodies, params)


def test_fetch_returns_only_held_ids_with_the_asked_fields() -> None:
    backend = InMemoryBackend(DOCS)
    found = fetch_documents(backend, "idx", ["d2", "gone", "d5"])
    assert sorted(found) == ["d2", "d5"]
    assert found["d2"] == {"title": "Title 2", "text": "text of 2"}
    assert missing_ids(["d2", "gone", "d5"], found) == ["gone"]
    whole = fetch_documents(backend, "idx", ["d1"], None)
    assert whole["d1"] == DOCS["d1"]


def test_no_ids_no_request() -> None:
    backend = CountingBackend(DOCS)
    assert fetch_documents(backend, "idx", []) == {}
    assert fetch_documents_many(backend, "idx", {"q1": [], "q2": []}) == {"q1": {}, "q2": {}}
    assert backend.searches == []
    assert backend.msearches == 0


def test_many_batches_keys_per_msearch_and_keeps_every_key() -> None:
    backend = CountingBackend(DOCS)
    ranking = {f"q{i}": [f"d{i}", f"d{(i + 1) % 7}"] for i in range(5)}
    ranking["empty"] = []
    found = fetch_documents_many(backend, "idx", ranking, (TEXT,), batch=2)
    assert backend.msearches == 3  # 5 keys with ids, 2 per round trip
    assert found["empty"] == {}
    assert found["q4"] == {"d4": {TEXT: "text of 4"}, "d5": {TEXT: "text of 5"}}


def test_field_text_reads_absent_and_null_as_empty() -> None:
    assert field_text({"title": None}, "title") == ""
    assert field_text({}, "title") == ""
    assert field_text({"title": "T"}, "title") == "T"


ROOT = Path(__file__).resolve().parents[3]

OTHER_ID_READS = {
    "sira_seek/ingest.py": "reads back only the ids that already hold a vector (an exists filter)",
    "sira_seek/sira/hit_explanation.py": "one hit's score explanation, with its stored fields",
}
"""Modules that still build their own ``ids`` query with a ``_source`` list, and why."""


def _reads_by_id(tree: ast.AST) -> bool:
    """Whether a dict literal in ``tree`` is a search body reading ``_source`` of an ``ids``
    query (``{"query": {"ids": ...}, "_source": ...}``, at any depth of its query)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        if "_source" in keys and any(
            isinstance(k, ast.Constant) and k.value == "ids"
            for sub in node.values
            for inner in ast.walk(sub)
            if isinstance(inner, ast.Dict)
            for k in inner.keys
        ):
            return True
    return False


def test_documents_are_fetched_by_id_in_one_module() -> None:
    readers = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "sira_seek").rglob("*.py")
        if _reads_by_id(ast.parse(path.read_text(), str(path)))
    )
    assert [r for r in readers if r not in OTHER_ID_READS] == []
    assert _reads_by_id(ast.parse('b = {"query": {"ids": {"values": x}}, "_source": ["t"]}'))
    assert not _reads_by_id(ast.parse('b = {"query": {"ids": {"values": x}}, "size": 3}'))

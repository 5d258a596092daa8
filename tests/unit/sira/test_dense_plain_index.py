"""``--method dense`` on an index not made by ``sira-seek ingest`` (no ``contents`` field: made
by another tool, or ``sira-sync migrate``, then given vectors by ``sira-sync --embed``): dense
sends no BM25 query, so it needs none of SIRA's layout; over the in-memory backend and the
bag-of-words embedder double (both above their protocols)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from embedder_double import BagOfWordsEmbedderDouble  # noqa: E402
from in_memory_backend import InMemoryBackend  # noqa: E402

from sira_seek.sira.index_profile import ProfileCache  # noqa: E402
from sira_seek.sync.embed_runner import EmbedRunner  # noqa: E402
from sira_seek.sync.settings import SyncSettings  # noqa: E402
from sira_seek.workflows import search as flow  # noqa: E402
from sira_seek.workflows.errors import WorkflowError  # noqa: E402

DOCS = {
    "paris": {"title": "Paris", "text": "capital city of France on the Seine"},
    "etna": {"title": "Etna", "text": "active volcano on the island of Sicily"},
}
PLAIN = {"title": {"type": "text"}, "text": {"type": "text"}}  # no contents, no shingles


@pytest.mark.parametrize("cached", [False, True], ids=["cli", "server-profile-cache"])
def test_dense_searches_an_index_without_the_sira_seek_layout(tmp_path: Path, cached: bool) -> None:
    backend = InMemoryBackend(DOCS, properties=PLAIN)
    embedder = BagOfWordsEmbedderDouble()
    EmbedRunner(backend, "idx", embedder, SyncSettings(state_dir=tmp_path)).run()
    request = flow.SearchRequest.build(
        query="volcano island Sicily", index="idx", method="dense", k=1
    )
    profiles = ProfileCache(10) if cached else None
    result = flow.search(backend, request, embedder=embedder, profiles=profiles)
    assert [h.id for h in result.hits] == ["etna"]
    # A method that sends a BM25 query still needs the layout, and says so.
    with pytest.raises(WorkflowError, match="no `contents` field"):
        flow.search(backend, request.model_copy(update={"method": "hybrid"}), embedder=embedder)

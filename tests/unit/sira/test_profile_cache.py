"""A long-lived caller's cache of index profiles (``serve``): one profile read per lifetime,
an index's existence still checked on every search, a deleted or failing index read anew.

The in-memory backend counts the mapping reads (one per profile read); the clock is the
test's, so no test waits."""

from __future__ import annotations

from typing import Any

import pytest
from in_memory_backend import InMemoryBackend, default_properties

from sira_seek.backend import EngineError
from sira_seek.fields import CONTENTS, CONTENTS_SHINGLES
from sira_seek.sira.index_profile import ProfileCache
from sira_seek.workflows.errors import NotFound, Unavailable
from sira_seek.workflows.search import SearchRequest, search

DOCS = {
    "d1": {"title": "Apollo 11", "text": "First crewed Moon landing, July 1969."},
    "d2": {"title": "Vostok 1", "text": "Yuri Gagarin, first human in space."},
}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class CountingBackend(InMemoryBackend):
    """Counts the profile reads (each reads the mapping once)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.mapping_reads = 0

    def get_mapping(self, index: str) -> dict[str, Any]:
        self.mapping_reads += 1
        return super().get_mapping(index)


def _request(text: str = "first human in space") -> SearchRequest:
    return SearchRequest.build(query=text, index="idx", method="sira", phrases=["Gagarin"])


def test_a_profile_is_read_once_per_lifetime_and_after_forget() -> None:
    backend, clock = CountingBackend(DOCS), Clock()
    cache = ProfileCache(10.0, clock=clock)
    first = cache.get(backend, "idx")
    assert cache.get(backend, "idx") is first and backend.mapping_reads == 1
    clock.now += 9.9
    assert cache.get(backend, "idx") is first and backend.mapping_reads == 1
    clock.now += 0.1  # ten seconds old: read again
    cache.get(backend, "idx")
    assert backend.mapping_reads == 2
    cache.forget("idx")
    cache.get(backend, "idx")
    assert backend.mapping_reads == 3


def test_a_zero_lifetime_reads_on_every_call() -> None:
    backend = CountingBackend(DOCS)
    cache = ProfileCache(0.0)
    for _ in range(3):
        cache.get(backend, "idx")
    assert backend.mapping_reads == 3


def test_searches_share_one_profile_read_and_equal_uncached_ones() -> None:
    backend = CountingBackend(DOCS)
    cache = ProfileCache(10.0)
    cached = [search(backend, _request(), profiles=cache) for _ in range(3)]
    assert backend.mapping_reads == 1
    plain = search(backend, _request())
    assert backend.mapping_reads == 2
    assert all(r.hits == plain.hits and r.body == plain.body for r in cached)
    assert [h.id for h in plain.hits][0] == "d2"


def test_a_deleted_index_is_not_found_at_once_and_its_successor_is_read_anew() -> None:
    backend = CountingBackend(DOCS)
    cache = ProfileCache(3600.0)
    search(backend, _request(), profiles=cache)
    assert cache.get(backend, "idx").shingle_field == CONTENTS_SHINGLES
    assert backend.mapping_reads == 1
    backend.delete_index("idx")
    with pytest.raises(NotFound, match="does not exist"):
        search(backend, _request(), profiles=cache)
    # Recreated without the shingles field: its profile differs from the old index's, which
    # would send the n-gram tier to a field that is no longer there.
    properties = default_properties()
    del properties[CONTENTS]["fields"]
    backend.create_index("idx", {"mappings": {"properties": properties}})
    backend.bulk_upsert("idx", [{"_id": k, **v} for k, v in DOCS.items()])
    reads = backend.mapping_reads
    search(backend, _request(), profiles=cache)
    assert backend.mapping_reads == reads + 1
    assert cache.get(backend, "idx").shingle_field is None
    assert backend.mapping_reads == reads + 1


def test_a_failed_search_forgets_the_profile() -> None:
    backend = CountingBackend(DOCS)
    cache = ProfileCache(3600.0)
    search(backend, _request(), profiles=cache)

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise EngineError("the cluster refused the search")

    backend.search = refuse  # type: ignore[method-assign]
    with pytest.raises(Unavailable):
        search(backend, _request(), profiles=cache)
    del backend.search  # the class's again
    search(backend, _request(), profiles=cache)
    assert backend.mapping_reads == 2


def test_the_library_client_keeps_profiles_only_when_asked() -> None:
    """``SiraSeek(profile_max_age=...)`` is the same cache as serve's; the default reads the
    profile on every search (a library user sees a newly enriched index at once)."""
    from sira_seek.client import SiraSeek

    for max_age, reads in ((0.0, 3), (60.0, 1)):
        backend = CountingBackend(DOCS)
        sk = SiraSeek(backend, profile_max_age=max_age)
        for _ in range(3):
            table = {"first human in space": ["Gagarin"]}
            found = sk.search("first human in space", index="idx", method="sira", expansions=table)
            hits = found.hits
            assert [h.id for h in hits][:1] == ["d2"]
        assert backend.mapping_reads == reads, max_age
    with pytest.raises(ValueError, match="profile_max_age"):
        SiraSeek(CountingBackend(DOCS), profile_max_age=-1)

"""A name that is not one index never reaches another endpoint of the cluster.

Before the workflows validated names and the engine plugins percent-encoded every path
segment, ``sira-seek search x --index 'idx/_refresh'`` made the engine refresh ``idx``
(and then fail with "no handler found"). Now the command exits 2 naming the index before any
request leaves, and even a direct backend call sends the name as one encoded segment: the
index's refresh count does not move either way.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cli_runner import run_cli

from sira_seek.backend import EngineError, SearchBackend

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def refreshes(backend: SearchBackend, index: str) -> int:
    stats = backend.request("GET", f"/{index}/_stats/refresh")  # type: ignore[attr-defined]
    return int(stats["_all"]["primaries"]["refresh"]["total"])


@pytest.fixture
def small_index(backend: SearchBackend, index_name: str) -> Iterator[str]:
    backend.ensure_corpus_index(index_name)
    yield index_name


@pytest.mark.parametrize(
    ("suffix", "says"),
    [
        ("/_refresh", "not an index name"),
        ("/_flush", "not an index name"),
        ("*", "not an index name"),
        (",other", "not an index name"),
    ],
)
def test_search_refuses_a_path_or_pattern_as_index_before_any_request(
    backend: SearchBackend,
    node_urls: dict[str, str],
    engine: str,
    small_index: str,
    suffix: str,
    says: str,
) -> None:
    before = refreshes(backend, small_index)
    name = small_index + suffix
    res = run_cli(["search", "x", "--index", name, "--url", node_urls[engine]])
    assert res.returncode == 2, res.stderr
    assert says in res.stderr and repr(name) in res.stderr
    assert refreshes(backend, small_index) == before


@pytest.mark.parametrize("name", ["_all", "WikiMH", "-idx", ".."])
def test_reserved_upper_case_and_dotted_names_exit_2_naming_the_index(
    node_urls: dict[str, str], engine: str, name: str
) -> None:
    res = run_cli(["search", "x", "--index", name, "--url", node_urls[engine]])
    assert res.returncode == 2 and "index: " in res.stderr and repr(name) in res.stderr


def test_the_backend_sends_a_slash_inside_one_encoded_segment(
    backend: SearchBackend, small_index: str
) -> None:
    """Below the workflows too: the engine gets ``idx%2F_refresh`` as one index name and
    refuses it; it never routes to ``POST idx/_refresh``."""
    before = refreshes(backend, small_index)
    with pytest.raises(EngineError):
        backend.count(f"{small_index}/_refresh")
    assert not backend.index_exists(f"{small_index}/_refresh")
    assert refreshes(backend, small_index) == before

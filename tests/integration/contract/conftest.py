"""Fixtures of the backend contract suite: one real node per registered engine, a backend
behind a request-counting proxy, and fresh uuid-named indexes; and the same for the unit
tests' in-memory double (``in-memory``), which starts no node.

Which node serves an engine: the session's ``node_urls`` for the built-in engines (started by
tests/conftest.py), else ``SIRA_SEEK_TEST_<ENGINE>_URL``. A registered engine with neither is a
FAILURE, never a skip: an engine that cannot be tested is not supported.

The other versions of the matrix (tests/engine_matrix.py: Elasticsearch 8.x, OpenSearch 3.x)
are targets too, ``engine@version``, each on a small node of its own (``matrix_nodes``,
tests/conftest.py).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from engine_matrix import MATRIX_IDS, split_matrix_id

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import available_engines, connect

from .kit import (
    ENGINE_HOOKS,
    IN_MEMORY,
    ContractTarget,
    CountingProxy,
    InMemoryBackend,
    RoundTripLog,
)

REGISTERED_ENGINES = sorted(available_engines())


@pytest.fixture(scope="session", params=[*REGISTERED_ENGINES, *MATRIX_IDS, IN_MEMORY])
def target(request: pytest.FixtureRequest) -> ContractTarget:
    engine = str(request.param)
    if engine == IN_MEMORY:  # no node: the nodes fixture is asked for by real engines only
        return ContractTarget(
            engine=IN_MEMORY, url=None, backend=InMemoryBackend(), hooks=ENGINE_HOOKS[IN_MEMORY]
        )
    if engine in MATRIX_IDS:
        engine, version = split_matrix_id(engine)
        url = request.getfixturevalue("matrix_nodes").url(engine, version)
        backend = connect(ClusterSettings(url=url))
        assert (backend.info.engine, backend.info.version) == (engine, version), url
        return ContractTarget(engine=engine, url=url, backend=backend, hooks=ENGINE_HOOKS[engine])
    node_urls: dict[str, str] = request.getfixturevalue("node_urls")
    url = node_urls.get(engine) or os.environ.get(f"SIRA_SEEK_TEST_{engine.upper()}_URL")
    if not url:
        pytest.fail(
            f"engine {engine!r} is registered (sira_seek.engines) but no node serves it: set "
            f"SIRA_SEEK_TEST_{engine.upper()}_URL; the contract suite never skips an engine",
            pytrace=False,
        )
    if engine not in ENGINE_HOOKS:
        pytest.fail(f"engine {engine!r} has no EngineHooks in the contract suite", pytrace=False)
    backend = connect(ClusterSettings(url=url))
    assert backend.info.engine == engine, f"{url} answered as {backend.info.engine}"
    return ContractTarget(engine=engine, url=url, backend=backend, hooks=ENGINE_HOOKS[engine])


@pytest.fixture
def be(target: ContractTarget) -> SearchBackend:
    return target.backend


@pytest.fixture
def new_index(target: ContractTarget) -> Iterator[Callable[..., str]]:
    """Creates fresh uuid-named corpus indexes (``ensure_corpus_index``), deleted afterwards."""
    made: list[str] = []

    def make(*, shards: int = 1, docs: list[dict[str, Any]] | None = None) -> str:
        name = f"contract-{uuid.uuid4().hex[:12]}"
        made.append(name)
        assert target.backend.ensure_corpus_index(name, shards=shards) is True
        if docs:
            result = target.backend.bulk_upsert(name, docs)
            assert not result.errors and result.succeeded == len(docs)
            target.backend.refresh(name)
        return name

    yield make
    for name in made:
        target.backend.delete_index(name)


@pytest.fixture
def counted(
    target: ContractTarget,
) -> Iterator[tuple[SearchBackend, CountingProxy | RoundTripLog]]:
    """A second backend of the same engine whose every request passes a counting proxy (for
    the in-memory double: the double itself, and the round trips it records)."""
    if target.url is None:
        assert isinstance(target.backend, InMemoryBackend)
        yield target.backend, RoundTripLog(target.backend)
        return
    proxy = CountingProxy(target.url)
    try:
        backend = connect(ClusterSettings(url=proxy.url))
        backend.capabilities()  # probes happen now, not inside a counted call
        proxy.reset()
        yield backend, proxy
        backend.close()
    finally:
        proxy.close()

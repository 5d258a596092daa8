"""Which tests run on both engines, and the mark for those that need only one.

The session's ``engine`` fixture (tests/conftest.py) runs every test that asks for it (directly
or through ``backend``, ``index_name``, ...) once per engine. That matrix is for what differs
per engine: the backend contract suite, DF and grounding, analyzers, shard layouts, security,
clusters, the write path of ingest and sira-sync, and the pinned BM25/SIRA figures.

A front end over the engine-neutral facade (the CLI's argument handling and JSON, the HTTP
API, the MCP server, the framework retrievers), file parsing, report rendering and LLM-side
faults behave the same whatever engine answers, and their tests compare the front end with
the facade or the CLI on the same node, so an engine difference would show on both sides
alike. Those tests take ``ONE_ENGINE``: the same ``engine`` fixture, parametrized to
OpenSearch only (indirectly, so the session's node, backend and wikimh index are shared with
the matrix tests rather than set up again).
"""

from __future__ import annotations

import pytest

from sira_seek.esplugin.local.distributions import DEFAULT_VERSIONS, TESTED_VERSIONS

ENGINE = "opensearch"
ONE_ENGINE = pytest.mark.parametrize("engine", [ENGINE], indirect=True)

# The version matrix: the engine majors other than the session's default nodes
# (DEFAULT_VERSIONS in esplugin/local/distributions.py: Elasticsearch 9.x, OpenSearch 2.x).
# What depends on the engine VERSION is the backend contract (tests/integration/contract) and
# the pinned BM25/SIRA figures (test_version_matrix_figures.py, in the same folder, stopping the
# matrix nodes when it ends); those run on each of these too, each on a small node of its own
# started on first use (``matrix_nodes`` in tests/conftest.py). Everything else runs on the
# default versions only.
# Derived from the one list `node up --help` shows (TESTED_VERSIONS), so a version added there is
# tested here.
MATRIX_VERSIONS: list[tuple[str, str]] = sorted(
    (engine, version)
    for engine, versions in TESTED_VERSIONS.items()
    for version in versions
    if version != DEFAULT_VERSIONS[engine]
)
MATRIX_IDS = [f"{engine}@{version}" for engine, version in MATRIX_VERSIONS]
"""Test ids and contract ``target`` params: ``engine@version``."""


def split_matrix_id(matrix_id: str) -> tuple[str, str]:
    engine, _, version = matrix_id.partition("@")
    return engine, version

"""Maven Central's "no such artifact" is told apart from a failed download, whether Maven
asks the repository or remembers an earlier miss.

A plugin Maven Central does not serve for a release (the k-NN plugin of OpenSearch 2.19.4,
the secured node's version) must leave the node running without it, with a warning. Maven
says so in two ways: "Could not find artifact" when it asked just now, and "... was not found
in https://repo.maven.apache.org/maven2 during a previous attempt" when its local repository
remembers the miss; a fresh-clone make test stopped the secured node on the second. Real
``mvn`` against Maven Central, as the node toolkit runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sira_seek.esplugin.local.node import (
    ArtifactNotServedError,
    fetch_artifact,
    not_served_marker,
)

# A version of the k-NN plugin that has never existed.
ABSENT = "org.opensearch.plugin:opensearch-knn:0.0.0.1:zip"


def test_an_absent_artifact_is_not_served_asked_or_remembered(tmp_path: Path) -> None:
    for attempt in (1, 2):  # the second mvn run reads Maven's own memory of the miss
        with pytest.raises(ArtifactNotServedError):
            fetch_artifact(ABSENT, tmp_path)
        marker = not_served_marker(ABSENT, tmp_path)
        assert marker.exists(), f"attempt {attempt}: the miss was not remembered"
        marker.unlink()  # make the next attempt run mvn again

"""The vector part of the ``SearchBackend`` contract: a vector field's mapping, documents with
vectors, and ``knn_search`` returning the nearest first, on every target of the contract suite
(see test_backend_contract.py for how targets are chosen and how a third engine joins).

Where a target has no vector search (Elasticsearch before 8.4; the OpenSearch 3.x matrix node,
whose k-NN plugin the local node toolkit does not assemble), the contract is the clear refusal:
``capabilities().vectors`` is False and a kNN call raises ``VectorsUnavailableError`` before any
request. Which targets have vectors is written down here (``vectors_expected``), not read from
the capability under test, so a detection bug fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sira_seek.backend import SearchBackend, VectorSimilarity
from sira_seek.esplugin.engines.errors import VectorsUnavailableError
from sira_seek.fields import VECTOR
from sira_seek.input_errors import InputError

from .kit import ContractTarget, CountingProxy, RoundTripLog

pytestmark = pytest.mark.integration

NewIndex = Callable[..., str]

# Directions in the plane, and one long vector: cosine ranks by angle alone, l2 by distance,
# so the two similarities order these differently from the query [1, 0].
VECTORS = {
    "east": [1.0, 0.0],
    "east-north-east": [0.9, 0.3],
    "north-east": [0.6, 0.6],
    "north": [0.0, 1.0],
    "far-east": [8.0, 0.5],
}
QUERY = [1.0, 0.0]
NEAREST = {
    "cosine": ["east", "far-east", "east-north-east", "north-east", "north"],
    "l2": ["east", "east-north-east", "north-east", "north", "far-east"],
}


def vectors_expected(target: ContractTarget) -> bool:
    """Whether the target's node has vector search: Elasticsearch from 8.4 (dense_vector and
    the ``knn`` search option, free on every licence); OpenSearch 2.x local nodes, which get
    the k-NN plugin from `node up`; the in-memory double and any other engine: yes."""
    version = tuple(int(p) for p in target.backend.info.version.split(".")[:2])
    if target.engine == "elasticsearch":
        return version >= (8, 4)
    if target.engine == "opensearch":
        return version[0] == 2
    return True


def vector_index(be: SearchBackend, new_index: NewIndex, similarity: VectorSimilarity) -> str:
    """A fresh corpus index (as ``ingest`` makes it) given a vector field afterwards, in place,
    as ``sira-sync --embed`` does, then five documents with text and a vector."""
    index = new_index()
    be.put_mapping(index, {VECTOR: be.vector_mapping(len(QUERY), similarity)})
    docs: list[dict[str, Any]] = [
        {"_id": name, "title": name, "text": f"point {name}", VECTOR: vector}
        for name, vector in VECTORS.items()
    ]
    result = be.bulk_upsert(index, docs)
    assert not result.errors and result.succeeded == len(docs), result
    be.refresh(index)
    return index


def test_capabilities_say_whether_the_target_has_vectors(target: ContractTarget) -> None:
    assert target.backend.capabilities().vectors is vectors_expected(target)


@pytest.mark.parametrize("similarity", ["cosine", "l2"])
def test_knn_search_returns_the_nearest_first(
    target: ContractTarget, new_index: NewIndex, similarity: VectorSimilarity
) -> None:
    be = target.backend
    if not vectors_expected(target):
        assert_refused(be)
        return
    index = vector_index(be, new_index, similarity)
    found = be.knn_search(index, VECTOR, QUERY, k=4, num_candidates=10)
    assert [h.id for h in found.hits] == NEAREST[similarity][:4]
    scores = [h.score for h in found.hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    # Whole sources come back without the vector itself.
    assert found.hits[0].source == {"title": "east", "text": "point east"}
    # k bounds the hits; the fields asked for are all that comes back.
    top = be.knn_search(index, VECTOR, QUERY, k=2, num_candidates=2, source=["title"])
    assert [(h.id, h.source) for h in top.hits] == [
        (name, {"title": name}) for name in NEAREST[similarity][:2]
    ]


def test_unit_vectors_under_dot_product_rank_as_cosine(
    target: ContractTarget, new_index: NewIndex
) -> None:
    """dot_product is for unit vectors (Elasticsearch refuses others): on them it ranks as
    cosine does. Scores are the engine's own (Elasticsearch (1 + dot) / 2, OpenSearch 1 + dot):
    only their order is the contract."""
    be = target.backend
    if not vectors_expected(target):
        assert_refused(be)
        return
    index = new_index()
    be.put_mapping(index, {VECTOR: be.vector_mapping(2, "dot_product")})
    units = {"a": [1.0, 0.0], "b": [0.8, 0.6], "c": [0.0, 1.0], "d": [-0.6, 0.8]}
    result = be.bulk_upsert(index, [{"_id": i, VECTOR: v} for i, v in units.items()])
    assert not result.errors
    be.refresh(index)
    found = be.knn_search(index, VECTOR, [0.6, 0.8], k=4, num_candidates=4, source=[])
    assert [h.id for h in found.hits] == ["b", "c", "a", "d"]
    assert not any(h.source for h in found.hits)  # no fields asked: none sent (an empty
    # _source list would make the engine send every one, the vector included)
    scores = [h.score for h in found.hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]


def test_a_knn_request_no_engine_can_answer_is_refused_before_any_request(
    counted: tuple[SearchBackend, CountingProxy | RoundTripLog],
) -> None:
    be, proxy = counted
    for vector, k, candidates in (
        ([], 1, 1),
        ([float("nan"), 1.0], 1, 1),
        ([1.0], 0, 1),
        ([1.0], 5, 4),
        ([1.0], 5, 10_001),
    ):
        with pytest.raises(InputError):
            be.knn_search("never-asked", VECTOR, vector, k=k, num_candidates=candidates)
    for dims, similarity in ((0, "cosine"), (3, "manhattan")):
        with pytest.raises(InputError):
            be.vector_mapping(dims, similarity)  # type: ignore[arg-type]
    assert list(proxy.requests) == []


def assert_refused(be: SearchBackend) -> None:
    """A target without vector search: no capability, and a clear refusal of each call."""
    assert be.capabilities().vectors is False
    with pytest.raises(VectorsUnavailableError, match="vector search"):
        be.vector_mapping(3, "cosine")
    with pytest.raises(VectorsUnavailableError, match="vector search"):
        be.knn_search("any", VECTOR, [1.0, 0.0, 0.0], k=1, num_candidates=1)

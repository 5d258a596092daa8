"""Destructive operations take concrete names only (issue 39, item 1).

``sira-seek ingest X --index 'zz-victim*' --recreate`` used to send ``DELETE /zz-victim%2A``,
and the engine deleted every index the pattern matched. Here, without a cluster: the one
index-name rule refuses every name that can mean several indexes; the library's recreate,
expunge and migrate entry points refuse them (and an alias of several indexes) with
``InvalidInput`` before touching the backend; and the engine layer's own destructive calls
refuse them before any request leaves (``NotConcreteNameError``, bad input everywhere).
The cluster-side proof (bystander indexes keep every document) is
tests/integration/test_destructive_names.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from in_memory_backend import InMemoryBackend

from sira_seek.backend import ClusterInfo
from sira_seek.esplugin.engines.base import concrete_name
from sira_seek.esplugin.engines.errors import NotConcreteNameError
from sira_seek.esplugin.engines.opensearch_backend import OpenSearchBackend
from sira_seek.ingest import delete_for_recreate, ingest_corpus
from sira_seek.input_errors import InputError
from sira_seek.sync.expunge import expunge_target
from sira_seek.sync.migrate import migrate_index
from sira_seek.workflows.errors import InvalidInput, classify
from sira_seek.workflows.validation import index_name

NOT_CONCRETE = ["*", "x*", "a,b", "_all", "-x", "a?b"]


@pytest.mark.parametrize("name", NOT_CONCRETE)
def test_the_one_index_name_rule_refuses_every_name_of_several_indexes(name: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        index_name(name)
    assert caught.value.field == "index" and repr(name) in str(caught.value)


@pytest.mark.parametrize("name", NOT_CONCRETE)
def test_the_engine_layer_guard_refuses_them_too_as_bad_input(name: str) -> None:
    with pytest.raises(NotConcreteNameError, match="one concrete index name") as caught:
        concrete_name(name, action="deleting an index")
    # Every front end reports it as bad input (exit 2, 422), not as a cluster failure.
    assert isinstance(caught.value, InputError)
    assert isinstance(classify(caught.value), InvalidInput)


@pytest.mark.parametrize("name", ["docs", "docs-v2", ".hidden-one", "a.b_c+d"])
def test_concrete_names_pass_both_checks(name: str) -> None:
    assert index_name(name) == name
    assert concrete_name(name, action="deleting an index") == name


class NoRequestBackend(OpenSearchBackend):
    """A REST backend whose transport fails the test: nothing may be sent at all."""

    def __init__(self) -> None:
        super().__init__(None, ClusterInfo(engine="opensearch", version="2.19.6", url="x"))

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        ignore: tuple[int, ...] = (),
    ) -> Any:
        raise AssertionError(f"a request left: {method} {path}")


@pytest.mark.parametrize("name", NOT_CONCRETE)
@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda b, n: b.delete_index(n), id="delete_index"),
        pytest.param(lambda b, n: b.expunge_deletes(n), id="expunge_deletes"),
        pytest.param(
            lambda b, n: b.update_aliases([{"add": {"index": "docs", "alias": n}}]), id="alias"
        ),
        pytest.param(
            lambda b, n: b.update_aliases([{"remove_index": {"index": n}}]), id="remove_index"
        ),
        pytest.param(
            lambda b, n: b.update_aliases([{"remove": {"indices": ["docs", n], "alias": "al"}}]),
            id="indices",
        ),
    ],
)
def test_destructive_backend_calls_refuse_before_any_request(
    name: str, call: Callable[[OpenSearchBackend, str], object]
) -> None:
    with pytest.raises(NotConcreteNameError):
        call(NoRequestBackend(), name)


def two_indexes_and_an_alias() -> InMemoryBackend:
    backend = InMemoryBackend()
    for index in ("ka", "kb"):
        backend.create_index(index, {})
        backend.bulk_index(index, [{"_id": "1", "title": index, "text": "kept"}])
    backend.update_aliases(
        [{"add": {"index": "ka", "alias": "both"}}, {"add": {"index": "kb", "alias": "both"}}]
    )
    backend.update_aliases([{"add": {"index": "ka", "alias": "one"}}])
    return backend


def counts(backend: InMemoryBackend) -> dict[str, int]:
    return {i: backend.count(i) for i in ("ka", "kb")}


@pytest.mark.parametrize("name", [*NOT_CONCRETE, "both", "one"])
def test_recreate_refuses_patterns_and_every_alias_and_deletes_nothing(
    name: str, tmp_path: Path
) -> None:
    """An alias of one index is refused too: deleting the index drops the alias with it, and
    ingest would then create an index under the alias's name."""
    backend = two_indexes_and_an_alias()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "n", "title": "new", "text": "doc"}\n')
    with pytest.raises(InvalidInput) as caught:
        ingest_corpus(backend, name, corpus, recreate=True)
    assert caught.value.field == "index"
    assert counts(backend) == {"ka": 1, "kb": 1}
    assert backend.resolve_name("both")[0] == ["ka", "kb"]


def test_recreate_deletes_a_concrete_index_by_its_name() -> None:
    backend = two_indexes_and_an_alias()
    assert delete_for_recreate(backend, "kb") is True
    assert not backend.index_exists("kb") and backend.count("ka") == 1
    assert delete_for_recreate(backend, "absent") is False


@pytest.mark.parametrize("name", [*NOT_CONCRETE, "both", "absent"])
def test_expunge_takes_one_concrete_index(name: str) -> None:
    with pytest.raises(InvalidInput):
        expunge_target(two_indexes_and_an_alias(), name)


def test_expunge_through_an_alias_of_one_index_merges_that_index() -> None:
    assert expunge_target(two_indexes_and_an_alias(), "one") == "ka"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        *[({"source_index": n}, "index") for n in [*NOT_CONCRETE, "both"]],
        *[({"target_index": n}, "into") for n in NOT_CONCRETE],
        *[({"alias": n}, "alias") for n in NOT_CONCRETE],
        ({"alias": "both"}, "alias"),  # moving it would drop kb from it
        ({"alias": "kb"}, "alias"),  # an index, not an alias
    ],
)
def test_migrate_refuses_before_creating_or_moving_anything(
    kwargs: dict[str, str], field: str
) -> None:
    backend = two_indexes_and_an_alias()
    args = {"source_index": "ka", "target_index": "ka-v2", **kwargs}
    with pytest.raises(InvalidInput) as caught:
        migrate_index(backend, args.pop("source_index"), args.pop("target_index"), **args)
    assert caught.value.field == field
    assert not backend.index_exists("ka-v2")
    assert backend.resolve_name("both")[0] == ["ka", "kb"] and counts(backend) == {"ka": 1, "kb": 1}

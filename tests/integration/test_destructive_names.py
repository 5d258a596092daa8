"""Destructive operations take concrete names only, on both engines (issue 39, item 1).

``sira-seek ingest X --index 'zz-victim*' --recreate`` sent ``DELETE /zz-victim%2A`` and the
engine deleted every index the pattern matched (on OpenSearch, whose
``action.destructive_requires_name`` is false, ``--index '*'`` emptied the cluster). Here
three bystander indexes of one document each, and an alias of two of them, meet every
destructive entry point with a pattern, a prefix pattern, a list, ``_all`` and the alias:
each is refused as bad input (exit 2, ``InvalidInput``) and every bystander keeps its document
and the alias its two indexes. A concrete recreate (the control) still deletes and refills its
own index, so a delete would show. The rule itself: tests/unit/sync/test_concrete_names.py.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek import SiraSeek
from sira_seek.backend import SearchBackend
from sira_seek.cli.main import cli
from sira_seek.cli.sync import main as sync_cli
from sira_seek.esplugin.engines.errors import NotConcreteNameError
from sira_seek.sync.mapping import MappingConflictError
from sira_seek.sync.migrate import migrate_index
from sira_seek.workflows.errors import InvalidInput

pytestmark = pytest.mark.integration


@dataclass
class Bystanders:
    backend: SearchBackend
    prefix: str
    indexes: list[str]
    alias: str  # of the first two
    corpus: Path  # one new document, for ingest
    phrases: Path  # one enrichment line, for sira-sync

    def names(self) -> list[str]:
        """Every name that can mean several indexes: ``*``, a prefix pattern, a list,
        ``_all`` and the alias of two."""
        return ["*", f"{self.prefix}-*", ",".join(self.indexes[:2]), "_all", self.alias]

    def assert_untouched(self, after: str) -> None:
        for index in self.indexes:
            assert self.backend.index_exists(index), f"{index} is gone after {after}"
            assert self.backend.count(index) == 1, f"{index} lost documents after {after}"
        members, _ = self.backend.resolve_name(self.alias)
        assert members == self.indexes[:2], f"the alias moved after {after}"


@pytest.fixture(scope="module")
def bystanders(
    backend: SearchBackend, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Bystanders]:
    prefix = f"zz-victim-{uuid.uuid4().hex[:8]}"
    indexes = [f"{prefix}-{n}" for n in ("a", "b", "c")]
    for index in indexes:
        backend.ensure_corpus_index(index)
        backend.bulk_upsert(index, [{"_id": "1", "title": index, "text": "a bystander"}])
        backend.refresh(index)
    alias = f"{prefix}-two"
    backend.update_aliases([{"add": {"index": i, "alias": alias}} for i in indexes[:2]])
    files = tmp_path_factory.mktemp("destructive")
    corpus = files / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "new", "title": "new", "text": "document"}) + "\n")
    phrases = files / "phrases.jsonl"
    phrases.write_text(json.dumps({"_id": "1", "keywords": ["bystander"]}) + "\n")
    yield Bystanders(backend, prefix, indexes, alias, corpus, phrases)
    for index in indexes:
        backend.delete_index(index)


def test_cli_ingest_recreate_exits_2_and_deletes_nothing(bystanders: Bystanders) -> None:
    url = bystanders.backend.info.url
    for name in bystanders.names():
        args = ["ingest", str(bystanders.corpus), "--index", name, "--recreate", "--url", url]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (name, result.output)
        assert repr(name) in result.stderr and "Traceback" not in result.output
        bystanders.assert_untouched(f"ingest --index {name!r} --recreate")


def test_library_recreate_raises_invalid_input_and_deletes_nothing(
    bystanders: Bystanders,
) -> None:
    client = SiraSeek(bystanders.backend)
    for name in bystanders.names():
        with pytest.raises(InvalidInput) as caught:
            client.ingest(bystanders.corpus, name, recreate=True)
        assert caught.value.field == "index"
        bystanders.assert_untouched(f"SiraSeek.ingest({name!r}, recreate=True)")


def test_the_engine_layer_refuses_a_pattern_delete_itself(bystanders: Bystanders) -> None:
    """Below every front end: a future caller that forgets the rule still deletes nothing."""
    for name in bystanders.names()[:4]:  # the alias: both engines refuse DELETE of an alias
        with pytest.raises(NotConcreteNameError):
            bystanders.backend.delete_index(name)
        with pytest.raises(NotConcreteNameError):
            bystanders.backend.expunge_deletes(name)
    bystanders.assert_untouched("backend.delete_index")


def test_sync_expunge_exits_2_before_enriching(bystanders: Bystanders, tmp_path: Path) -> None:
    url = bystanders.backend.info.url
    for name in bystanders.names():
        args = ["--index", name, "--from-jsonl", str(bystanders.phrases), "--expunge-deletes"]
        args += ["--state-dir", str(tmp_path), "--no-progress", "--url", url]
        result = CliRunner().invoke(sync_cli, args)
        assert result.exit_code == 2, (name, result.output)
        bystanders.assert_untouched(f"sira-sync --index {name!r} --expunge-deletes")
        # Refused up front: not one bystander was enriched.
        for index in bystanders.indexes:
            doc = bystanders.backend.get(index, "1")
            assert doc is not None and "sira_sync" not in (doc.source or {}), (name, index)


def test_sync_migrate_refuses_patterns_and_an_alias_of_two(bystanders: Bystanders) -> None:
    url = bystanders.backend.info.url
    target = f"{bystanders.prefix}-copy"
    source = bystanders.indexes[2]
    for args in (
        ["--index", f"{bystanders.prefix}-*", "--into", target],
        ["--index", source, "--into", target, "--alias", bystanders.alias],
    ):
        result = CliRunner().invoke(sync_cli, ["migrate", *args, "--no-progress", "--url", url])
        assert result.exit_code == 2, (args, result.output)
    for name in bystanders.names():
        for kwargs in ({"alias": name}, {"source_index": name}, {"target_index": name}):
            call = {"source_index": source, "target_index": target, **kwargs}
            # The alias of two as the new index's name: it exists, so it cannot be created.
            refusal = (
                MappingConflictError if call["target_index"] == bystanders.alias else (InvalidInput)
            )
            with pytest.raises(refusal):
                migrate_index(
                    bystanders.backend,
                    call.pop("source_index"),
                    call.pop("target_index"),
                    **call,
                )
    assert not bystanders.backend.index_exists(target)
    bystanders.assert_untouched("sira-sync migrate")


def test_control_a_concrete_recreate_still_replaces_its_own_index(
    bystanders: Bystanders,
) -> None:
    """Last in the module: it recreates bystander c, so a refused delete above would show."""
    victim = bystanders.indexes[2]
    report = SiraSeek(bystanders.backend).ingest(bystanders.corpus, victim, recreate=True)
    assert report.created_index and report.written == 1
    assert bystanders.backend.get(victim, "1") is None
    assert bystanders.backend.get(victim, "new") is not None
    for index in bystanders.indexes[:2]:
        assert bystanders.backend.count(index) == 1

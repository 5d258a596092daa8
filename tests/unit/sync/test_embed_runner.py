"""sira-sync --embed over the in-memory backend double with an embedder double (both above
their protocols): what is embedded, that re-runs and resumes redo nothing, the 409 guard, slices,
and the refusals (an index without OpenSearch's index.knn, another model's vectors)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import DOCS
from in_memory_backend import InMemoryBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from embedder_double import BagOfWordsEmbedderDouble, bag_vector  # noqa: E402

from sira_seek.cli.sync import main  # noqa: E402
from sira_seek.fields import VECTOR  # noqa: E402
from sira_seek.sira.dense import EmbedderMismatchError, passage_text  # noqa: E402
from sira_seek.sync.embed_runner import (  # noqa: E402
    EMBED_META,
    EmbedRunner,
    IndexNeedsVectorSettingsError,
    embed_text,
)
from sira_seek.sync.settings import SyncSettings  # noqa: E402
from sira_seek.sync.slicing import SliceSpec  # noqa: E402


@pytest.fixture
def backend() -> InMemoryBackend:
    return InMemoryBackend(DOCS)


def _run(backend: InMemoryBackend, settings: SyncSettings, embedder: Any, **kw: Any) -> Any:
    return EmbedRunner(backend, "idx", embedder, settings, **kw).run()


def test_every_document_gets_the_vector_of_its_fields_and_nothing_else_changes(
    backend: InMemoryBackend, settings: SyncSettings
) -> None:
    embedder = BagOfWordsEmbedderDouble()
    report = _run(backend, settings, embedder)
    assert report.counts.enriched == 20 and report.counts.new == 20
    for doc_id, source in DOCS.items():
        stored = backend.docs[doc_id].source
        assert stored[VECTOR] == bag_vector(f"{source['title']}. {source['text']}")
        assert stored["title"] == source["title"] and stored["text"] == source["text"]
        assert stored[EMBED_META]["model"] == "bag-of-words-double"
    # The index records the embedder as ingest --embed does, with the vector field mapped.
    mapping = backend.get_mapping("idx")["idx"]["mappings"]
    assert mapping["_meta"]["sira_seek"]["embedding"]["model"] == "bag-of-words-double"
    assert mapping["properties"][VECTOR]["dims"] == 16
    # knn finds a document by its own text.
    hit = backend.knn_search(
        "idx",
        VECTOR,
        bag_vector("Doc 7. river story number 7 about place7"),
        k=1,
        num_candidates=10,
    ).hits[0]
    assert hit.id == "d07"


def test_a_rerun_embeds_only_what_changed(backend: InMemoryBackend, settings: SyncSettings) -> None:
    _run(backend, settings, BagOfWordsEmbedderDouble())
    backend.edit("d03", text="a new text about mountains")
    again = BagOfWordsEmbedderDouble()
    report = _run(backend, settings, again)
    assert again.documents == ["Doc 3. a new text about mountains"]
    assert report.counts.current == 19 and report.counts.changed == 1
    assert backend.docs["d03"].source[VECTOR] == bag_vector("Doc 3. a new text about mountains")


def test_a_document_edited_mid_run_gets_the_vector_of_its_new_text(
    backend: InMemoryBackend, settings: SyncSettings
) -> None:
    def user_writes(b: InMemoryBackend, _updates: Any) -> None:
        b.edit("d00", text="edited while the page was embedded")

    backend.before_bulk = user_writes
    report = _run(backend, settings, BagOfWordsEmbedderDouble())
    assert report.counts.conflicts == 1 and report.counts.enriched == 20
    stored = backend.docs["d00"].source
    assert stored["text"] == "edited while the page was embedded"
    assert stored[VECTOR] == bag_vector("Doc 0. edited while the page was embedded")


def test_two_slices_embed_every_document_once(
    backend: InMemoryBackend, settings: SyncSettings
) -> None:
    embedders = [BagOfWordsEmbedderDouble(), BagOfWordsEmbedderDouble()]
    for i, embedder in enumerate(embedders):
        _run(backend, settings, embedder, slice_spec=SliceSpec(index=i, count=2))
    embedded = embedders[0].documents + embedders[1].documents
    assert len(embedded) == 20 and len(set(embedded)) == 20
    assert all(VECTOR in d.source for d in backend.docs.values())


def test_a_killed_run_resumes_without_embedding_a_document_twice(
    backend: InMemoryBackend, settings: SyncSettings
) -> None:
    killed = BagOfWordsEmbedderDouble()
    killed.fail_after = 10  # pages of 7: the second page is written, the third is not
    with pytest.raises(RuntimeError, match="killed"):
        _run(backend, settings, killed)
    assert sum(VECTOR in d.source for d in backend.docs.values()) == 7
    resumed = BagOfWordsEmbedderDouble()
    report = _run(backend, settings, resumed, resume=True)
    assert report.resumed and len(resumed.documents) == 13
    assert report.counts.seen == 20  # the killed run's page counted once
    assert all(VECTOR in d.source for d in backend.docs.values())


def test_another_models_vectors_are_refused_before_any_write(
    backend: InMemoryBackend, settings: SyncSettings
) -> None:
    _run(backend, settings, BagOfWordsEmbedderDouble("model-a"))
    before = {i: dict(d.source) for i, d in backend.docs.items()}
    other = BagOfWordsEmbedderDouble("model-b")
    with pytest.raises(EmbedderMismatchError, match="model-a"):
        _run(backend, settings, other)
    assert other.documents == [] and {i: d.source for i, d in backend.docs.items()} == before


class _OpenSearchLikeDouble(InMemoryBackend):
    """The double with OpenSearch's static index.knn: its indexes were made without it."""

    def vector_index_settings(self) -> dict[str, Any]:
        return {"knn": True}


def test_an_index_without_index_knn_is_refused_naming_migrate(settings: SyncSettings) -> None:
    backend = _OpenSearchLikeDouble(DOCS)
    embedder = BagOfWordsEmbedderDouble()
    with pytest.raises(IndexNeedsVectorSettingsError) as refused:
        _run(backend, settings, embedder)
    assert "index.knn: true" in str(refused.value)
    assert "sira-sync migrate --index idx --into idx-vectors" in str(refused.value)
    assert embedder.documents == [] and backend.put_mappings == []


def test_migrate_creates_the_copy_with_the_vector_settings(settings: SyncSettings) -> None:
    from sira_seek.sync.migrate import target_index_body

    body = target_index_body(_OpenSearchLikeDouble(DOCS, analyzers=()), "idx")
    assert body["settings"]["index"]["knn"] is True


def test_the_text_embedded_is_ingest_embeds() -> None:
    source = {"title": " Paris ", "text": "Capital of France. "}
    assert embed_text(source, ["title", "text"]) == passage_text(" Paris ", "Capital of France. ")
    assert embed_text({"title": "", "text": "only text"}, ["title", "text"]) == "only text"


def test_cli_refuses_enrichment_options_with_embed() -> None:
    result = CliRunner().invoke(main, ["--index", "idx", "--embed", "--llm", "cpu"])
    assert result.exit_code == 2 and "drop --llm" in result.output
    result = CliRunner().invoke(main, ["--index", "idx", "--embedder", "cpu", "--from-jsonl", "x"])
    assert result.exit_code == 2 and "--embedder applies with --embed only" in result.output


def test_sync_embed_after_ingest_embed_embeds_nothing(
    tmp_path: Path, settings: SyncSettings
) -> None:
    """ingest --embed writes the same per-document record as sira-sync --embed (source hash,
    model, time), so a sync run over the ingested index finds every document current; an edit
    after ingest is still found."""
    import json

    from sira_seek.ingest import ingest_corpus

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"_id": i, "title": s["title"], "text": s["text"]}) + "\n"
                for i, s in DOCS.items())
    )  # fmt: skip
    backend = InMemoryBackend({})
    report = ingest_corpus(backend, "idx", corpus, embedder=BagOfWordsEmbedderDouble())
    assert report.embedded == 20
    assert backend.docs["d01"].source[EMBED_META]["model"] == "bag-of-words-double"
    synced = BagOfWordsEmbedderDouble()
    report = _run(backend, settings, synced)
    assert synced.documents == [] and report.counts.enriched == 0
    assert report.counts.current == 20
    backend.edit("d03", text="a new text about mountains")
    again = _run(backend, settings, BagOfWordsEmbedderDouble())
    assert again.counts.enriched == 1 and again.counts.changed == 1

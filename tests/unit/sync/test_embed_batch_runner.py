"""``sira-sync --embed --embedder batch:DIR#MODEL`` over the in-memory backend double (above the
protocol): the export, the import of a test-made output (bag-of-words vectors from the double
in tests/unit/doubles, standing in for a batch job), partial and malformed outputs, a document
edited between export and import, and the refusals (another model, another length)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import DOCS
from in_memory_backend import InMemoryBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from embedder_double import BagOfWordsEmbedderDouble, bag_vector  # noqa: E402

from sira_seek.embed.batch import BatchEmbeddingsError  # noqa: E402
from sira_seek.fields import VECTOR  # noqa: E402
from sira_seek.sira.dense import EmbedderMismatchError, read_index_embedding  # noqa: E402
from sira_seek.sync.embed_batch import WaitingForEmbeddings  # noqa: E402
from sira_seek.sync.embed_runner import EMBED_META, EmbedRunner  # noqa: E402
from sira_seek.sync.settings import SyncSettings  # noqa: E402
from sira_seek.workflows.embed_sync import embed_index  # noqa: E402

MODEL = "intfloat/e5-small-v2"  # a model whose card asks for "passage: " before a document


@pytest.fixture
def backend() -> InMemoryBackend:
    return InMemoryBackend(DOCS)


def _run(backend: InMemoryBackend, settings: SyncSettings, folder: Path, **kw: Any) -> Any:
    return embed_index(
        backend,
        "idx",
        embedder_spec=f"batch:{folder}#{kw.pop('model', MODEL)}",
        state_dir=settings.state_dir,
        page_size=settings.page_size,
        **kw,
    )


def _wait(backend: InMemoryBackend, settings: SyncSettings, folder: Path) -> WaitingForEmbeddings:
    with pytest.raises(WaitingForEmbeddings) as caught:
        _run(backend, settings, folder)
    return caught.value


def _requests(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _answer(requests: list[dict[str, Any]], output: Path, *, extra: list[str] = ()) -> None:
    """What a batch job writes: one line per request, the vector of its input text."""
    lines = [
        json.dumps(
            {
                "custom_id": r["custom_id"],
                "response": {
                    "status_code": 200,
                    "body": {
                        "data": [{"index": 0, "embedding": bag_vector(r["body"]["input"][0])}]
                    },
                },
            }
        )
        for r in requests
    ]
    output.write_text("\n".join([*lines, *extra]) + "\n", encoding="utf-8")


def test_export_then_import_gives_every_document_its_vector_and_a_rerun_asks_nothing(
    backend: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    folder = tmp_path / "rounds"
    waiting = _wait(backend, settings, folder)
    requests = _requests(waiting.requests)
    assert waiting.requests == folder / "embed-001.requests.jsonl" and waiting.count == 20
    assert waiting.output == folder / "embed-001.output.jsonl" and str(waiting.output) in str(
        waiting
    )
    assert sorted(r["custom_id"].split("::")[0] for r in requests) == sorted(DOCS)
    by_id = {r["custom_id"].split("::")[0]: r for r in requests}
    assert by_id["d07"]["body"] == {
        "model": MODEL,
        "input": ["passage: Doc 7. river story number 7 about place7"],
    }
    assert not any(VECTOR in d.source for d in backend.docs.values())  # nothing written yet
    assert waiting.to_json()["waiting_for"] == str(waiting.requests)

    again = _wait(backend, settings, folder)  # no output yet: the same file, nothing new
    assert again.requests == waiting.requests and again.report is None
    assert sorted(folder.iterdir()) == [waiting.requests]

    _answer(requests, waiting.output)
    report = _run(backend, settings, folder)
    assert report.counts.enriched == 20 and report.batch.imported == 20
    assert report.batch.requested == 0 and report.dimensions == 16
    stored = backend.docs["d07"].source
    assert stored[VECTOR] == pytest.approx(
        bag_vector("passage: Doc 7. river story number 7 about place7")
    )
    assert stored[EMBED_META]["model"] == MODEL
    recorded = read_index_embedding(backend, "idx")
    assert recorded is not None and (recorded.model, recorded.dimensions) == (MODEL, 16)
    assert recorded.spec == f"openai:URL#{MODEL}"  # how its queries are embedded live
    query = bag_vector("passage: Doc 7. river story number 7 about place7")
    assert backend.knn_search("idx", VECTOR, query, k=1, num_candidates=20).hits[0].id == "d07"

    rerun = _run(backend, settings, folder)
    assert rerun.counts.enriched == 0 and rerun.counts.current == 20
    assert len(list(folder.glob("*.requests.jsonl"))) == 1


def test_a_partial_malformed_output_imports_what_it_has_and_asks_again_for_the_rest(
    backend: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    folder = tmp_path / "rounds"
    waiting = _wait(backend, settings, folder)
    requests = sorted(_requests(waiting.requests), key=lambda r: r["custom_id"])
    garbled = json.dumps({"custom_id": requests[5]["custom_id"], "response": {"body": {}}})
    _answer(requests[:5], waiting.output, extra=["{truncated", garbled])  # 5 good, 2 bad, 13 none
    second = _wait(backend, settings, folder)
    assert second.report is not None and second.report.batch is not None
    assert second.report.batch.imported == 5 and second.report.batch.bad_lines == 2
    assert "malformed" in str(second) and "embed-001.output.jsonl:6" in str(second)
    asked = _requests(second.requests)
    assert second.count == len(asked) == 15 and second.round == 2
    assert {r["custom_id"] for r in asked} == {r["custom_id"] for r in requests[5:]}
    assert sum(VECTOR in d.source for d in backend.docs.values()) == 5

    _answer(asked, second.output)
    final = _run(backend, settings, folder)
    assert final.counts.enriched == 15 and final.counts.current == 5
    assert all(VECTOR in d.source for d in backend.docs.values())


def test_a_document_edited_after_the_export_is_asked_again_never_given_its_old_vector(
    backend: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    folder = tmp_path / "rounds"
    waiting = _wait(backend, settings, folder)
    _answer(_requests(waiting.requests), waiting.output)
    backend.edit("d03", text="a new text about mountains")
    second = _wait(backend, settings, folder)
    assert second.report is not None and second.report.counts.enriched == 19
    (asked,) = _requests(second.requests)
    assert asked["body"]["input"] == ["passage: Doc 3. a new text about mountains"]
    assert VECTOR not in backend.docs["d03"].source


def test_another_recorded_model_is_refused_before_any_file_is_written(
    backend: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    EmbedRunner(backend, "idx", BagOfWordsEmbedderDouble(), settings).run()
    with pytest.raises(EmbedderMismatchError, match="bag-of-words-double"):
        _run(backend, settings, tmp_path / "rounds")
    assert not (tmp_path / "rounds").exists()


def test_vectors_of_another_length_than_the_index_holds_are_refused_before_any_write(
    backend: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    folder = tmp_path / "rounds"
    model = "bag-of-words-double"
    EmbedRunner(backend, "idx", BagOfWordsEmbedderDouble(), settings).run()  # 16 dimensions
    backend.edit("d03", text="a new text about mountains")
    with pytest.raises(WaitingForEmbeddings) as caught:
        _run(backend, settings, folder, model=model)
    (request,) = _requests(caught.value.requests)
    line = {
        "custom_id": request["custom_id"],
        "response": {"status_code": 200, "body": {"data": [{"embedding": [1.0, 0.0, 0.0]}]}},
    }
    caught.value.output.write_text(json.dumps(line) + "\n", encoding="utf-8")
    before = backend.docs["d03"].source.get(VECTOR)
    with pytest.raises(BatchEmbeddingsError, match="3 dimensions, index 'idx' holds 16"):
        _run(backend, settings, folder, model=model)
    assert backend.docs["d03"].source.get(VECTOR) == before


def test_the_command_line_exits_75_naming_the_file(
    backend: InMemoryBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sira_seek.cli import sync as sync_cli

    monkeypatch.setattr(sync_cli, "backend_from_options", lambda _cluster: backend)
    folder = tmp_path / "rounds"
    args = ["--index", "idx", "--embed", "--embedder", f"batch:{folder}#{MODEL}", "--json"]
    result = CliRunner().invoke(sync_cli.main, [*args, "--state-dir", str(tmp_path / "s")])
    assert result.exit_code == 75, result.output
    shown = json.loads(result.stdout.splitlines()[0])
    assert shown["waiting_for"] == str(folder / "embed-001.requests.jsonl")
    assert shown["requests"] == 20 and shown["report"]["batch"]["requested"] == 20

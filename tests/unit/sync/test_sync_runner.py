"""The write path against an in-memory index: what is written, what never is, 409s, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DOCS, standard_records, write_jsonl
from in_memory_backend import InMemoryBackend
from sync_doubles import layout_properties

from sira_seek.backend import EngineError, ScanContextLostError
from sira_seek.sync import resumable_scan
from sira_seek.sync.checkpoint import ResumeMismatchError, RunStateStore
from sira_seek.sync.mapping import MappingConflictError
from sira_seek.sync.phrase_sources import JsonlPhraseSource
from sira_seek.sync.runner import SyncRunner
from sira_seek.sync.settings import SyncSettings
from sira_seek.sync.slicing import SliceSpec
from sira_seek.sync.source_text import source_hash


def _source(tmp_path: Path, records: list[dict] | None = None, name: str = "e.jsonl"):
    records = records if records is not None else standard_records(sorted(DOCS))
    return JsonlPhraseSource(write_jsonl(tmp_path / name, records))


def _run(index: InMemoryBackend, source, settings: SyncSettings, **kw):
    return SyncRunner(index, "idx", source, settings, **kw).run()


def test_enriches_with_df_filter_and_keeps_sources(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    report = _run(memory_index, _source(tmp_path), settings)
    assert report.counts.enriched == 20 and report.counts.new == 20
    assert report.counts.phrases_too_common == 20  # "river" is in every document
    assert report.counts.phrases_no_terms == 20  # "the"
    doc = memory_index.docs["d03"].source
    assert doc["title"] == DOCS["d03"]["title"] and doc["text"] == DOCS["d03"]["text"]
    assert doc["sira_enrichment"] == {
        "phrases": ["alias of d03", "place3"],
        "categories": ["group 0"],
    }
    sync = doc["sira_sync"]
    assert sync["status"] == "enriched" and sync["model"] == "jsonl:e.jsonl"
    assert sync["source_hash"] == source_hash(DOCS["d03"], ["title", "text"])
    # DF bounds for each of 3 pages (the routing look-up, one analysis, the one statistics
    # request), and one live count, on the first page: "river" (in every document) is the
    # only phrase its bound leaves open, memoised afterwards.
    assert report.df_round_trips == 3 * 3 + 1


def test_second_run_writes_nothing_and_edits_redo_only_those(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    _run(memory_index, _source(tmp_path), settings)
    versions = {i: d.version for i, d in memory_index.docs.items()}
    again = _run(memory_index, _source(tmp_path), settings)
    assert again.counts.current == 20 and again.counts.enriched == 0
    assert {i: d.version for i, d in memory_index.docs.items()} == versions
    for doc_id in ("d01", "d07"):
        memory_index.edit(doc_id, text="a new text")
    third = _run(memory_index, _source(tmp_path), settings)
    assert third.counts.changed == 2 and third.counts.enriched == 2
    changed = {i for i, d in memory_index.docs.items() if d.version != versions[i]}
    assert changed == {"d01", "d07"}


def test_a_new_prompt_id_makes_every_doc_outdated(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    _run(memory_index, _source(tmp_path), settings)
    source = _source(tmp_path)
    source.prompt_id = "batch-v2"
    report = _run(memory_index, source, settings)
    assert report.counts.outdated == 20 and report.counts.enriched == 20


def test_doc_changed_mid_run_is_reread_not_clobbered(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    def someone_edits(index: InMemoryBackend, updates) -> None:
        index.edit("d02", text="edited by someone else meanwhile")

    memory_index.before_bulk = someone_edits
    report = _run(memory_index, _source(tmp_path), settings)
    assert report.counts.conflicts == 1 and report.counts.enriched == 20
    doc = memory_index.docs["d02"].source
    assert doc["text"] == "edited by someone else meanwhile"
    assert doc["sira_sync"]["source_hash"] == source_hash(doc, ["title", "text"])
    assert report.counts.write_errors == 0


def test_own_write_applied_before_a_retry_is_counted_not_lost(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    """A node lost mid-bulk: the client retries a request whose first attempt was applied, so
    the guarded writes answer 409 and the re-read finds the documents already current."""

    def first_attempt_lands(index: InMemoryBackend, updates) -> None:
        index.bulk_partial_update(index.index, list(updates))

    memory_index.before_bulk = first_attempt_lands
    report = _run(memory_index, _source(tmp_path), settings)
    first_page = report.counts.conflicts
    assert first_page > 0 and report.counts.current_on_reread == first_page
    assert report.counts.enriched + report.counts.current_on_reread == 20
    assert report.counts.write_errors == 0
    assert all(d.source["sira_sync"]["status"] == "enriched" for d in memory_index.docs.values())


def test_malformed_record_is_recorded_never_written_and_retried(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    records = standard_records(sorted(DOCS))
    records[4] = {"_id": "d04", "keywords": "not a list"}
    report = _run(memory_index, _source(tmp_path, records), settings)
    assert report.counts.failed == 1 and report.counts.enriched == 19
    doc = memory_index.docs["d04"].source
    assert "sira_enrichment" not in doc and doc["sira_sync"]["status"] == "failed"
    failures = [json.loads(line) for line in Path(report.failures_file).read_text().splitlines()]
    assert [f["doc_id"] for f in failures] == ["d04"]
    assert '"not a list"' in failures[0]["raw_text"]
    fixed = _run(memory_index, _source(tmp_path, standard_records(sorted(DOCS))), settings)
    assert fixed.counts.failed_before == 1 and fixed.counts.enriched == 1
    assert memory_index.docs["d04"].source["sira_sync"]["status"] == "enriched"


def test_docs_without_input_are_left_alone(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    report = _run(memory_index, _source(tmp_path, standard_records(["d00", "d01"])), settings)
    assert report.counts.enriched == 2 and report.counts.no_input == 18
    assert "sira_sync" not in memory_index.docs["d05"].source


def test_stale_record_hash_is_not_applied(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    records = standard_records(["d00", "d01"])
    records[0]["source_hash"] = "sha256:made-from-other-text"
    records[1]["source_hash"] = source_hash(DOCS["d01"], ["title", "text"])
    report = _run(memory_index, _source(tmp_path, records), settings)
    assert report.counts.enriched == 1 and report.counts.failed == 1
    assert "sira_enrichment" not in memory_index.docs["d00"].source


def test_dry_run_writes_nothing(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    report = _run(memory_index, _source(tmp_path), settings, dry_run=True)
    assert report.counts.new == 20 and report.counts.enriched == 0
    assert memory_index.bulk_calls == 0
    assert not settings.state_dir.exists()


def test_slices_split_the_work(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    a = _run(memory_index, _source(tmp_path), settings, slice_spec=SliceSpec.parse("0/2"))
    b = _run(memory_index, _source(tmp_path), settings, slice_spec=SliceSpec.parse("1/2"))
    assert a.counts.enriched + b.counts.enriched == 20 and min(a.counts.enriched, b.counts.enriched)
    assert all(d.version == 2 for d in memory_index.docs.values())


class _Crash(RuntimeError):
    pass


def test_resume_after_a_crash_skips_what_was_written(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    source = _source(tmp_path)
    calls = {"n": 0}
    original = source.propose

    def crash_on_third_page(items):
        calls["n"] += 1
        if calls["n"] == 3:
            raise _Crash
        return original(items)

    source.propose = crash_on_third_page  # type: ignore[method-assign]
    with pytest.raises(_Crash):
        _run(memory_index, source, settings)
    written = sum(d.version == 2 for d in memory_index.docs.values())
    assert written == 14
    resumed = _run(memory_index, _source(tmp_path), settings, resume=True)
    assert resumed.resumed and memory_index.scan_queries[-1] is not None
    assert resumed.counts.seen == 20  # 14 from the checkpoint + the 6 left
    assert resumed.counts.enriched == 20
    assert all(d.version == 2 for d in memory_index.docs.values())
    other = _source(tmp_path)
    other.prompt_id = "other"
    # The run finished: --resume with another prompt starts a fresh run instead of refusing.
    assert _run(memory_index, other, settings, resume=True).resumed is False


def test_a_failed_write_stops_the_run_with_only_written_pages_checkpointed(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    """A page's write runs beside the next page's preparation: when it fails, the run fails
    with the engine's error, the checkpoint counts the pages written before it and nothing of
    the page prepared meanwhile, and a resume finishes the job."""

    def fail_the_second_write(backend: InMemoryBackend, updates: list) -> None:
        def fail(backend: InMemoryBackend, updates: list) -> None:
            raise EngineError("the cluster refused the bulk request")

        backend.before_bulk = fail

    memory_index.before_bulk = fail_the_second_write
    with pytest.raises(EngineError, match="refused the bulk"):
        _run(memory_index, _source(tmp_path), settings)
    saved = RunStateStore(settings.state_dir, "idx", SliceSpec()).load()
    assert saved is not None and saved.pages == 1 and not saved.finished
    assert saved.counts["seen"] == 7 and saved.counts["enriched"] == 7
    assert sum(d.version == 2 for d in memory_index.docs.values()) == 7
    resumed = _run(memory_index, _source(tmp_path), settings, resume=True)
    assert resumed.counts.seen == 20 and resumed.counts.enriched == 20
    assert all(d.version == 2 for d in memory_index.docs.values())


def test_resume_refuses_another_runs_checkpoint(
    memory_index: InMemoryBackend, settings: SyncSettings, tmp_path: Path
) -> None:
    source = _source(tmp_path)
    source.propose = lambda items: (_ for _ in ()).throw(_Crash())  # type: ignore[method-assign]
    with pytest.raises(_Crash):
        _run(memory_index, source, settings)
    other = _source(tmp_path)
    other.prompt_id = "another-prompt"
    with pytest.raises(ResumeMismatchError):
        _run(memory_index, other, settings, resume=True)


def test_missing_enrichment_fields_are_added(settings: SyncSettings, tmp_path: Path) -> None:
    index = InMemoryBackend(DOCS, properties=layout_properties(enrichment=False))
    report = _run(index, _source(tmp_path), settings)
    assert "sira_enrichment.phrases" in report.mapping_fields_added
    assert set(index.put_mappings[0]) == {"sira_enrichment", "sira_sync"}


def test_mapping_that_cannot_take_the_fields_is_a_clear_error(
    settings: SyncSettings, tmp_path: Path
) -> None:
    mapping = layout_properties(enrichment=False)
    mapping["sira_enrichment"] = {"type": "keyword"}
    index = InMemoryBackend(DOCS, properties=mapping)
    with pytest.raises(MappingConflictError, match="sira_enrichment"):
        _run(index, _source(tmp_path), settings)
    assert index.put_mappings == [] and index.bulk_calls == 0


def test_missing_analyzers_are_a_clear_error(settings: SyncSettings, tmp_path: Path) -> None:
    index = InMemoryBackend(DOCS, properties=layout_properties(enrichment=False), analyzers=())
    with pytest.raises(MappingConflictError, match="analyzer"):
        _run(index, _source(tmp_path), settings)
    assert index.put_mappings == []


def test_expired_point_in_time_rescans_without_redoing(
    settings: SyncSettings, tmp_path: Path
) -> None:
    """The first scan's point in time is lost after one page (a slow LLM page)."""
    index = InMemoryBackend(DOCS, properties=layout_properties())
    index.lose_scan_context_after = 1
    report = _run(index, _source(tmp_path), settings)
    assert report.counts.scan_restarts == 1 and report.counts.enriched == 20
    assert index.scan_queries[0] is None and index.scan_queries[1] is not None
    assert all(d.version == 2 for d in index.docs.values())


class LosesContextBeforeFirstPage(InMemoryBackend):
    """Scripted double: its first ``losses`` scans lose their context before any page (a rolling
    restart taking the next member down right after the previous one is back)."""

    losses = 10**6

    def scan(self, index, **kw):  # type: ignore[override]
        self.scans = getattr(self, "scans", 0) + 1
        if self.scans <= self.losses:
            self.lose_scan_context_after = 0
        return super().scan(index, **kw)


def test_a_context_lost_before_any_page_every_time_stops_the_run_after_bounded_restarts(
    settings: SyncSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No page read means no progress: restarting forever could loop, so after
    MAX_STALLED_RESTARTS restarts in a row without a page the error surfaces."""
    monkeypatch.setattr(resumable_scan, "STALLED_WAIT_S", 0.0)
    index = LosesContextBeforeFirstPage(DOCS, properties=layout_properties())
    with pytest.raises(ScanContextLostError):
        _run(index, _source(tmp_path), settings)
    assert index.scans == resumable_scan.MAX_STALLED_RESTARTS + 1
    assert index.bulk_calls == 0


def test_a_context_lost_twice_before_any_page_then_the_scan_goes_on(
    settings: SyncSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resumable_scan, "STALLED_WAIT_S", 0.0)
    index = LosesContextBeforeFirstPage(DOCS, properties=layout_properties())
    index.losses = 2
    report = _run(index, _source(tmp_path), settings)
    assert index.scans == 3
    assert report.counts.scan_restarts == 2
    assert report.counts.enriched == len(DOCS)


def test_other_scan_errors_propagate(settings: SyncSettings, tmp_path: Path) -> None:
    class Broken(InMemoryBackend):
        def scan(self, index, **kw):  # type: ignore[override]
            yield next(super().scan(index, **kw))
            raise RuntimeError("HTTP 500: something else")

    with pytest.raises(RuntimeError, match="something else"):
        _run(Broken(DOCS, properties=layout_properties()), _source(tmp_path), settings)

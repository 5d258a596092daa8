"""sira-sync's write path on real nodes, over wikimh: enrichment lands in its own fields, source
fields stay exactly as ingested, re-runs change nothing, edits redo only what changed.

The write path differs per engine, so each engine gets the whole run: Elasticsearch over all of
wikimh (9,003 documents, 19 pages), OpenSearch over every 6th document (1,501, 4 pages of 500:
three full and a short last one). On all of wikimh one such run took 31-34 s here, 22 s of it the
first sync, mostly its live-DF counts of 18,000 distinct phrases; the slice keeps what the run
checks (page boundaries and a short last page, every document's source fields, "film" in more
than tau of the documents, the five edits among 1,501) at a sixth of the documents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_matrix import ONE_ENGINE

from sira_seek.backend import PartialUpdate, SearchBackend
from sira_seek.ingest import ingest_corpus
from sira_seek.sync.index_status import index_sync_status
from sira_seek.sync.phrase_sources import JsonlPhraseSource
from sira_seek.sync.runner import SyncRunner
from sira_seek.sync.settings import SyncSettings
from sira_seek.sync.source_text import source_hash

pytestmark = pytest.mark.integration

FIELDS = ["title", "text"]
ON_ELASTICSEARCH = pytest.mark.parametrize("engine", ["elasticsearch"], indirect=True)
SLICE_STEP = 6  # the OpenSearch run: every 6th wikimh document


def enrichment_records(corpus: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """Deterministic stand-ins for a GPU batch job's output: a new phrase (DF 0), the title
    (rare), a very common word (dropped by the DF filter) and a category."""
    out = []
    with corpus.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if limit is not None and number >= limit:
                break
            doc = json.loads(line)
            out.append(
                {
                    "_id": doc["_id"],
                    "keywords": [f"zq{doc['_id']} alias", doc["title"], "the", "film"],
                    "categories": [f"bucket {number % 7}"],
                }
            )
    return out


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def all_sources(backend: SearchBackend, index: str) -> dict[str, dict[str, Any]]:
    return {
        hit.id: hit.source or {} for page in backend.scan(index, page_size=2000) for hit in page
    }


def versions(backend: SearchBackend, index: str) -> dict[str, int]:
    body = {"size": 10000, "version": True, "_source": False, "query": {"match_all": {}}}
    raw = backend.request("POST", f"/{index}/_search", body=body)  # type: ignore[attr-defined]
    return {h["_id"]: int(h["_version"]) for h in raw["hits"]["hits"]}


def sync(backend: SearchBackend, index: str, jsonl: Path, state: Path, **kw: Any):
    source = JsonlPhraseSource(jsonl)
    try:
        settings = SyncSettings(state_dir=state, page_size=kw.pop("page_size", 500))
        return SyncRunner(backend, index, source, settings, **kw).run()
    finally:
        source.close()


@ON_ELASTICSEARCH
def test_full_wikimh_enrich_rerun_and_edit_five(
    backend: SearchBackend, index_name: str, wikimh_dir: Path, tmp_path: Path
) -> None:
    """All of wikimh, on Elasticsearch ("film" is in 28% of its documents)."""
    enrich_rerun_and_edit_five(backend, index_name, wikimh_dir / "corpus.jsonl", 9003, tmp_path)


@ONE_ENGINE
def test_wikimh_slice_enrich_rerun_and_edit_five(
    backend: SearchBackend, index_name: str, wikimh_dir: Path, tmp_path: Path, engine: str
) -> None:
    """Every 6th wikimh document, on OpenSearch ("film" is in 28% of them)."""
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines[::SLICE_STEP]) + "\n", encoding="utf-8")
    enrich_rerun_and_edit_five(backend, index_name, corpus, 1501, tmp_path)


def enrich_rerun_and_edit_five(
    backend: SearchBackend, index_name: str, corpus: Path, n_docs: int, tmp_path: Path
) -> None:
    """Enrich every document (pages of 500), check every source field and the phrase layout,
    re-run (nothing written), edit five documents, re-run (exactly those five redone)."""
    assert not ingest_corpus(backend, index_name, corpus).failed
    original = {json.loads(line)["_id"]: json.loads(line) for line in corpus.open(encoding="utf-8")}
    jsonl = write_jsonl(tmp_path / "enrich.jsonl", enrichment_records(corpus))

    report = sync(backend, index_name, jsonl, tmp_path / "state")
    backend.refresh(index_name)
    assert report.counts.enriched == len(original) == n_docs
    assert report.counts.failed == report.counts.write_errors == 0
    assert report.counts.phrases_no_terms == n_docs  # "the"
    assert report.counts.phrases_too_common == n_docs  # "film": DF above tau * |C|

    after = all_sources(backend, index_name)
    assert after.keys() == original.keys()
    for doc_id, doc in original.items():  # every source field exactly as in the corpus file
        assert after[doc_id]["title"] == doc["title"] and after[doc_id]["text"] == doc["text"]
        assert set(after[doc_id]) == {"title", "text", "sira_enrichment", "sira_sync"}
    sample = after["hp00000"]
    assert sample["sira_enrichment"]["phrases"] == ["zqhp00000 alias", "Demon Dice"]
    assert sample["sira_enrichment"]["categories"] == ["bucket 0"]
    assert sample["sira_sync"]["source_hash"] == source_hash(original["hp00000"], FIELDS)
    hits = backend.search(
        index_name, {"query": {"match_phrase": {"sira_enrichment.phrases": "zqhp00000 alias"}}}
    )
    assert [h.id for h in hits.hits] == ["hp00000"]
    # Windows never cross two phrases: "... alias" + "Demon Dice" are adjacent array entries.
    crossing = [
        {"match_phrase": {"sira_enrichment.phrases": "alias demon"}},
        {"term": {"sira_enrichment.phrases.shingles": "alia demon"}},
        {"term": {"sira_enrichment.phrases.shingles": "alias demon"}},
    ]
    for query in crossing:
        assert backend.count(index_name, query) == 0, query
    inside = {"match_phrase": {"sira_enrichment.phrases.shingles": "demon dice"}}
    assert backend.count(index_name, inside) >= 1

    before_rerun = versions(backend, index_name)
    assert set(before_rerun.values()) == {2}
    rerun = sync(backend, index_name, jsonl, tmp_path / "state")
    assert rerun.counts.current == n_docs and rerun.counts.enriched == 0
    backend.refresh(index_name)
    assert versions(backend, index_name) == before_rerun

    edited = sorted(original)[100:105]
    backend.bulk_upsert(
        index_name, ({"_id": i, "text": original[i]["text"] + " Edited."} for i in edited)
    )
    backend.refresh(index_name)
    status = index_sync_status(backend, index_name, FIELDS)
    assert (status.enriched, status.stale, status.never_enriched) == (n_docs - 5, 5, 0)
    third = sync(backend, index_name, jsonl, tmp_path / "state")
    backend.refresh(index_name)
    assert third.counts.changed == 5 and third.counts.enriched == 5
    now = versions(backend, index_name)
    redone = {i for i in now if now[i] != before_rerun[i]}
    assert redone == set(edited)
    assert all(now[i] == 4 for i in edited)  # ingest, enrich, edit, re-enrich
    assert index_sync_status(backend, index_name, FIELDS).enriched == n_docs


class EditsBeforeFirstWrite:
    """Wraps a real backend: just before the first bulk write, 'someone else' edits one doc."""

    def __init__(self, inner: SearchBackend, index: str, doc_id: str) -> None:
        self.inner, self.index, self.doc_id, self.done = inner, index, doc_id, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def bulk_partial_update(self, index: str, updates: Any) -> Any:
        if not self.done:
            self.done = True
            self.inner.bulk_partial_update(
                self.index, [PartialUpdate(id=self.doc_id, doc={"text": "Rewritten meanwhile."})]
            )
        return self.inner.bulk_partial_update(index, updates)


def _subset(wikimh_dir: Path, tmp_path: Path, n: int) -> Path:
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_doc_changed_mid_run_is_reread_never_clobbered(
    backend: SearchBackend, index_name: str, wikimh_dir: Path, tmp_path: Path
) -> None:
    corpus = _subset(wikimh_dir, tmp_path, 50)
    ingest_corpus(backend, index_name, corpus)
    jsonl = write_jsonl(tmp_path / "e.jsonl", enrichment_records(corpus))
    target = "hp00003"
    wrapped = EditsBeforeFirstWrite(backend, index_name, target)
    report = sync(wrapped, index_name, jsonl, tmp_path / "state")  # type: ignore[arg-type]
    assert report.counts.conflicts == 1 and report.counts.enriched == 50
    doc = backend.get(index_name, target)
    assert doc is not None and doc.source is not None
    assert doc.source["text"] == "Rewritten meanwhile."
    assert doc.source["sira_sync"]["source_hash"] == source_hash(doc.source, FIELDS)
    assert doc.source["sira_enrichment"]["phrases"][0] == f"zq{target} alias"


def test_malformed_record_is_recorded_and_not_written(
    backend: SearchBackend, index_name: str, wikimh_dir: Path, tmp_path: Path
) -> None:
    corpus = _subset(wikimh_dir, tmp_path, 30)
    ingest_corpus(backend, index_name, corpus)
    records = enrichment_records(corpus)
    bad_id = records[7]["_id"]
    records[7] = {"_id": bad_id, "keywords": {"not": "a list"}}
    report = sync(backend, index_name, write_jsonl(tmp_path / "e.jsonl", records), tmp_path / "s")
    assert report.counts.failed == 1 and report.counts.enriched == 29
    doc = backend.get(index_name, bad_id)
    assert doc is not None and "sira_enrichment" not in (doc.source or {})
    failure = json.loads(Path(report.failures_file or "").read_text().splitlines()[0])
    assert failure["doc_id"] == bad_id and '"not": "a list"' in failure["raw_text"]
    backend.refresh(index_name)
    status = index_sync_status(backend, index_name, FIELDS)
    assert (status.enriched, status.failed) == (29, 1)
    fixed = write_jsonl(tmp_path / "fixed.jsonl", enrichment_records(corpus))
    source = JsonlPhraseSource(fixed, model="jsonl:e.jsonl")
    retry = SyncRunner(backend, index_name, source, SyncSettings(state_dir=tmp_path / "s")).run()
    assert retry.counts.failed_before == 1 and retry.counts.enriched == 1

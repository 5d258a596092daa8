"""The SearchBackend contract, run identically against both engines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sira_seek.backend import PartialUpdate, SearchBackend
from sira_seek.esplugin.engines.base import RestBackend
from sira_seek.esplugin.engines.errors import EngineRequestError
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration

DOCS = [
    {"_id": "d1", "title": "Apollo 11", "text": "Apollo 11 landed the first humans on the Moon."},
    {"_id": "d2", "title": "Moon", "text": "The Moon is Earth's only natural satellite."},
    {"_id": "d3", "title": "Mars", "text": "Mars is the fourth planet from the Sun."},
    {"_id": "d4", "title": "Saturn V", "text": "The Saturn V rocket launched Apollo missions."},
]


def write_corpus(path: Path, records: list[object]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write((rec if isinstance(rec, str) else json.dumps(rec)) + "\n")
    return path


def test_engine_is_detected(backend: SearchBackend, engine: str) -> None:
    assert backend.info.engine == engine
    assert backend.info.major >= 2
    assert backend.wait_for_health("yellow", 10) in ("green", "yellow")


def test_index_analyzer_matches_capabilities(
    backend: SearchBackend, index_name: str, engine: str
) -> None:
    assert backend.ensure_corpus_index(index_name) is True
    assert backend.ensure_corpus_index(index_name) is False
    assert isinstance(backend, RestBackend)
    tokens = backend.request(
        "POST",
        f"/{index_name}/_analyze",
        body={"analyzer": "sira_text", "text": "The running foxes"},
    )["tokens"]
    words = [t["token"] for t in tokens]
    if backend.capabilities().english_analyzer:
        assert words == ["run", "fox"]
    else:
        assert words == ["running", "foxes"]
    if engine == "opensearch":  # analysis-common is assembled from its official jar
        assert backend.capabilities().english_analyzer


def test_only_the_engines_own_unknown_analyzer_answer_means_absent(
    backend: SearchBackend, engine: str
) -> None:
    """The real engine's answer for a missing analyzer or filter is what the probe reads as
    absent (the other outcomes, retried or raised, are in tests/unit/foundation/
    test_analyzer_probe.py); a malformed request is another 400, raised, not "absent"."""
    assert isinstance(backend, RestBackend)
    assert backend._analyzes({"tokenizer": "standard", "text": "a b"}) is True
    assert backend._analyzes({"analyzer": "no_such_analyzer_xyz", "text": "a"}) is False
    missing_filter = {"tokenizer": "standard", "filter": ["no_such_filter_xyz"], "text": "a"}
    assert backend._analyzes(missing_filter) is False
    with pytest.raises(EngineRequestError) as caught:
        backend.request("POST", "/_analyze", body={"analyzer": "no_such_analyzer_xyz", "text": "a"})
    assert (caught.value.status, caught.value.error_type) == (400, "illegal_argument_exception")
    with pytest.raises(EngineRequestError) as malformed:  # no text to analyze
        backend._analyzes({"analyzer": "standard"})
    assert malformed.value.status == 400
    assert malformed.value.error_type != "illegal_argument_exception"


def test_ingest_reports_bad_lines_and_is_idempotent(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    corpus = write_corpus(
        tmp_path / "corpus.jsonl",
        [
            DOCS[0],
            "{not json",
            {"title": "no id", "text": "x"},
            DOCS[1],
            {"_id": "e", "text": " "},
            DOCS[2],
            DOCS[3],
        ],
    )
    first = ingest_corpus(backend, index_name, corpus)
    assert first.written == 4
    assert [(b.line, b.reason.split(" ")[0]) for b in first.bad_records] == [
        (2, "not"),
        (3, "missing"),
        (5, "empty"),
    ]
    assert backend.count(index_name) == 4
    again = ingest_corpus(backend, index_name, corpus)
    assert again.written == 0 and again.unchanged == 4
    assert backend.count(index_name) == 4


def test_reingest_keeps_enrichment_and_source(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "corpus.jsonl", DOCS)
    ingest_corpus(backend, index_name, corpus)
    before = backend.get(index_name, "d1")
    assert before is not None
    result = backend.bulk_partial_update(
        index_name,
        [
            PartialUpdate(
                id="d1",
                doc={"sira_enrichment": {"phrases": ["lunar landing", "NASA"]}},
                if_seq_no=before.seq_no,
                if_primary_term=before.primary_term,
            )
        ],
    )
    assert result.succeeded == 1 and not result.errors
    ingest_corpus(backend, index_name, corpus)
    after = backend.get(index_name, "d1")
    assert after is not None and after.source is not None
    assert after.source["sira_enrichment"]["phrases"] == ["lunar landing", "NASA"]
    assert after.source["title"] == DOCS[0]["title"] and after.source["text"] == DOCS[0]["text"]
    backend.refresh(index_name)
    hits = backend.search(index_name, {"query": {"match": {"sira_enrichment.phrases": "lunar"}}})
    assert [h.id for h in hits.hits] == ["d1"]


def test_stale_update_is_rejected_not_clobbered(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    ingest_corpus(backend, index_name, write_corpus(tmp_path / "c.jsonl", DOCS))
    seen = backend.get(index_name, "d2")
    assert seen is not None
    # someone else writes first
    backend.bulk_partial_update(
        index_name, [PartialUpdate(id="d2", doc={"text": "changed by another writer"})]
    )
    stale = backend.bulk_partial_update(
        index_name,
        [
            PartialUpdate(
                id="d2",
                doc={"sira_enrichment": {"phrases": ["x"]}},
                if_seq_no=seen.seq_no,
                if_primary_term=seen.primary_term,
            )
        ],
    )
    assert stale.succeeded == 0 and [e.status for e in stale.errors] == [409]
    now = backend.get(index_name, "d2")
    assert now is not None and now.source is not None
    assert now.source["text"] == "changed by another writer"
    assert "sira_enrichment" not in now.source


def test_term_statistics_match_counts(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    ingest_corpus(backend, index_name, write_corpus(tmp_path / "c.jsonl", DOCS))
    stats = backend.term_statistics(index_name, "contents", ["Apollo", "Moon", "zyxxyqq", "Saturn"])
    df = {t.term: t.doc_freq for s in stats for t in s.terms}
    assert df["apollo"] == 2
    assert df["moon"] == 2
    assert df["zyxxyqq"] == 0  # absent terms come back without doc_freq
    assert df["saturn"] == 1
    for term, freq in df.items():
        assert freq == backend.count(index_name, {"term": {"contents": term}})
    assert stats[0].field_statistics is not None and stats[0].field_statistics.doc_count == 4
    bigrams = backend.term_statistics(index_name, "contents.shingles", ["Saturn V rocket"])
    assert any(t.doc_freq == 1 for t in bigrams[0].terms)


def test_scan_slices_cover_every_document_once(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    docs = [{"_id": f"doc{i}", "title": f"t{i}", "text": f"text number {i}"} for i in range(57)]
    ingest_corpus(backend, index_name, write_corpus(tmp_path / "c.jsonl", docs))
    whole = [h.id for page in backend.scan(index_name, page_size=10) for h in page]
    assert sorted(whole) == sorted(d["_id"] for d in docs)
    sliced: list[str] = []
    for slice_id in range(2):
        sliced += [
            h.id
            for page in backend.scan(index_name, page_size=10, slice_id=slice_id, max_slices=2)
            for h in page
        ]
    assert sorted(sliced) == sorted(whole)
    pages = list(backend.scan(index_name, page_size=10, source=["title"]))
    assert pages[0][0].seq_no is not None and set(pages[0][0].source or {}) <= {"title"}


def test_missing_index_gives_clear_error(backend: SearchBackend) -> None:
    from sira_seek.esplugin.engines.errors import SiraSeekEngineError

    with pytest.raises(SiraSeekEngineError, match="index_not_found|no such index"):
        backend.search("test-does-not-exist-42", {"query": {"match_all": {}}})


def test_conflicting_mapping_is_refused_before_writing(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    from sira_seek.ingest import IngestTargetError

    backend.create_index(index_name, {"mappings": {"properties": {"title": {"type": "long"}}}})
    with pytest.raises(IngestTargetError, match="maps 'title' as long"):
        ingest_corpus(backend, index_name, write_corpus(tmp_path / "c.jsonl", DOCS))
    assert backend.count(index_name) == 0


def test_alias_over_several_indexes_is_explained(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    from sira_seek.ingest import IngestTargetError

    other = f"{index_name}-b"
    backend.ensure_corpus_index(index_name)
    backend.ensure_corpus_index(other)
    assert isinstance(backend, RestBackend)
    alias = f"{index_name}-alias"
    actions = [{"add": {"index": i, "alias": alias}} for i in (index_name, other)]
    backend.request("POST", "/_aliases", body={"actions": actions})
    try:
        with pytest.raises(IngestTargetError, match="alias of 2 indexes .* no write index"):
            ingest_corpus(backend, alias, write_corpus(tmp_path / "c.jsonl", DOCS))
        backend.request(
            "POST",
            "/_aliases",
            body={"actions": [{"add": {"index": other, "alias": alias, "is_write_index": True}}]},
        )
        report = ingest_corpus(backend, alias, write_corpus(tmp_path / "c.jsonl", DOCS))
        assert report.written == 4 and backend.count(other) == 4 and backend.count(index_name) == 0
    finally:
        backend.delete_index(other)


def test_large_unicode_and_odd_documents(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    big = "lorem ipsum dolor " * 60_000  # ~1 MB of text
    docs = [
        {"_id": "big", "title": "Big", "text": big},
        {"_id": "ja", "title": "東京", "text": "東京は日本の首都です。"},
        {"_id": "ar", "title": "القاهرة", "text": "القاهرة عاصمة مصر"},
        {"_id": "ctl", "title": "ctl", "text": "nul\u0000 and bell\u0007 chars \ufffd"},
        {"_id": "emoji", "title": "🚀", "text": "rocket 🚀 launch"},
    ]
    report = ingest_corpus(backend, index_name, write_corpus(tmp_path / "c.jsonl", docs))
    assert report.written == 5 and not report.failed
    got = backend.get(index_name, "ja")
    assert got is not None and got.source is not None and got.source["text"] == docs[1]["text"]
    hits = backend.search(index_name, {"query": {"match": {"contents": "rocket"}}}).hits
    assert [h.id for h in hits] == ["emoji"]


def test_a_scan_left_open_at_exit_does_not_hang_the_process(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    """A caller that stops mid-scan (an error, a break) must still let the process end."""
    ingest_corpus(backend, index_name, write_corpus(tmp_path / "c.jsonl", DOCS))
    code = (
        "from sira_seek.config import ClusterSettings\n"
        "from sira_seek.esplugin.engines.registry import connect\n"
        f"pages = connect(ClusterSettings(url={backend.info.url!r})).scan({index_name!r}, "
        "page_size=1)\n"
        "print(len(next(pages)))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the process hung at exit with a scan still open")
    assert done.returncode == 0, done.stderr[-1000:]
    assert done.stdout.strip() == "1"

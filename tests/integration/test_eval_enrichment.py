"""`eval enrichment`: the same index searched before and after its enrichment fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sira_seek.backend import PartialUpdate, SearchBackend
from sira_seek.cli.main import cli
from sira_seek.index_layout import corpus_index_body
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration

DOCS = [
    {"_id": "moon", "title": "Apollo 11", "text": "The crew walked on the surface in 1969."},
    {"_id": "mars", "title": "Viking 1", "text": "The lander touched down in 1976."},
    {"_id": "sun", "title": "Parker probe", "text": "It flew closer than any craft before."},
]


def _eval(backend: SearchBackend, index: str, tmp_path: Path) -> dict[tuple[str, str], Any]:
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "enrichment",
            "--index",
            index,
            "--url",
            backend.info.url,
            "--json",
            "--queries",
            str(tmp_path / "q.jsonl"),
            "--qrels",
            str(tmp_path / "qrels.tsv"),
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    return {(r["method"], r["enrichment"]): {**r, **out} for r in out["rows"]}


def _index_and_enrich(
    backend: SearchBackend, index: str, tmp_path: Path, *, layout: str | None
) -> dict[tuple[str, str], Any]:
    """Ingest, evaluate, write what sira-sync writes, refresh; returns the first evaluation."""
    if layout is not None:
        backend.create_index(
            index, corpus_index_body(backend.capabilities(), enrichment_layout=layout)
        )
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    ingest_corpus(backend, index, corpus)
    (tmp_path / "q.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "first lunar landing"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "red planet lander"})
        + "\n"
    )
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tmoon\t1\nq2\tmars\t1\n")
    unenriched = _eval(backend, index, tmp_path)
    # what sira-sync writes: vocabulary searchers use but the documents lack
    backend.bulk_partial_update(
        index,
        [
            PartialUpdate(id="moon", doc={"sira_enrichment": {"phrases": ["lunar landing"]}}),
            PartialUpdate(id="mars", doc={"sira_enrichment": {"phrases": ["red planet"]}}),
        ],
    )
    backend.refresh(index)
    return unenriched


def test_enrichment_lifts_what_the_source_text_lacks(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    """Default layout (enrichment counted in contents): "before" is measured before the
    enrichment is written; afterwards the index has only "after" rows to offer."""
    unenriched = _index_and_enrich(backend, index_name, tmp_path, layout=None)
    before = unenriched["bm25", "before"]
    assert unenriched["bm25", "after"]["recall@10"] == before["recall@10"]
    assert before["enriched_docs"] == 0
    rows = _eval(backend, index_name, tmp_path)
    assert set(rows) == {("bm25", "after")}
    after = rows["bm25", "after"]
    assert before["recall@10"] == 0.5  # only "lander" finds mars; nothing finds moon
    assert after["recall@10"] == 1.0 and after["ndcg@10"] > before["ndcg@10"]
    assert after["enriched_docs"] == 2


def test_separate_field_layout_has_both_sides_in_one_index(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    """An index enriched with the old separate-field layout is searched with and without it."""
    _index_and_enrich(backend, index_name, tmp_path, layout="separate_field")
    rows = _eval(backend, index_name, tmp_path)
    before, after = rows["bm25", "before"], rows["bm25", "after"]
    assert before["recall@10"] == 0.5
    assert after["recall@10"] == 1.0 and after["ndcg@10"] > before["ndcg@10"]
    assert after["enriched_docs"] == 2

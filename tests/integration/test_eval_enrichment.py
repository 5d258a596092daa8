"""`eval enrichment`: the same index searched before and after its enrichment fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek.backend import PartialUpdate, SearchBackend
from sira_seek.cli.main import cli
from sira_seek.ingest import ingest_corpus

pytestmark = pytest.mark.integration

DOCS = [
    {"_id": "moon", "title": "Apollo 11", "text": "The crew walked on the surface in 1969."},
    {"_id": "mars", "title": "Viking 1", "text": "The lander touched down in 1976."},
    {"_id": "sun", "title": "Parker probe", "text": "It flew closer than any craft before."},
]


def test_enrichment_lifts_what_the_source_text_lacks(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    ingest_corpus(backend, index_name, corpus)
    # what sira-sync writes: vocabulary searchers use but the documents lack
    backend.bulk_partial_update(
        index_name,
        [
            PartialUpdate(id="moon", doc={"sira_enrichment": {"phrases": ["lunar landing"]}}),
            PartialUpdate(id="mars", doc={"sira_enrichment": {"phrases": ["red planet"]}}),
        ],
    )
    backend.refresh(index_name)
    (tmp_path / "q.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "first lunar landing"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "red planet lander"})
        + "\n"
    )
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tmoon\t1\nq2\tmars\t1\n")
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "enrichment",
            "--index",
            index_name,
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
    out = json.loads(res.output)
    rows = {(r["method"], r["enrichment"]): {**r, **out} for r in out["rows"]}
    before, after = rows["bm25", "before"], rows["bm25", "after"]
    assert before["recall@10"] == 0.5  # only "lander" finds mars; nothing finds moon
    assert after["recall@10"] == 1.0 and after["ndcg@10"] > before["ndcg@10"]
    assert after["enriched_docs"] == 2

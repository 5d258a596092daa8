"""The default enrichment layout helps with a strong model (issue 14, second acceptance line).

On an index of the 994 HotpotQA paragraphs (``hp*``) of wikimh: `eval enrichment` before any
enrichment, `sira-sync --from-jsonl` with the shared strong-LLM document enrichments, `eval
enrichment` again, SIRA with the shared strong-LLM query expansions. SIRA must gain on nDCG@10
and R@10, BM25 must not lose. With the old separate-field layout BM25 lost nDCG@10 (.7885 ->
.7664 here), so this fails if the default layout or its query side regresses to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sira_seek.backend import SearchBackend
from sira_seek.cli.main import cli
from sira_seek.cli.sync import main as sira_sync
from sira_seek.index_layout import corpus_index_body, enrichment_layouts
from sira_seek.ingest import ingest_corpus
from sira_seek.sira import SiraRetriever
from sira_seek.sira.index_profile import read_index_profile
from sira_seek.sync.migrate import migrate_index

pytestmark = pytest.mark.integration


def _pool_corpus(wikimh: Path, out: Path) -> Path:
    with open(wikimh / "corpus.jsonl") as src, open(out, "w") as dst:
        dst.writelines(line for line in src if json.loads(line)["_id"].startswith("hp"))
    return out


def _eval_enrichment(backend: SearchBackend, index: str, wikimh: Path) -> dict[str, Any]:
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "enrichment",
            "--index",
            index,
            "--url",
            backend.info.url,
            "--queries",
            str(wikimh / "queries-hotpotqa.jsonl"),
            "--qrels",
            str(wikimh / "qrels-hotpotqa.tsv"),
            "--expansions",
            str(wikimh / "expansions-hotpotqa.strong-llm.jsonl"),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def _row(report: dict[str, Any], method: str, side: str) -> dict[str, float]:
    (row,) = [r for r in report["rows"] if r["method"] == method and r["enrichment"] == side]
    return row


def _sync(backend: SearchBackend, index: str, wikimh: Path, state: Path) -> None:
    res = CliRunner().invoke(
        sira_sync,
        [
            "--index",
            index,
            "--url",
            backend.info.url,
            "--from-jsonl",
            str(wikimh / "enrichments-hotpotqa-pool.strong-llm.jsonl"),
            "--state-dir",
            str(state),
        ],
    )
    assert res.exit_code == 0, res.output


def test_default_layout_lifts_sira_and_keeps_bm25(
    backend: SearchBackend, index_name: str, wikimh_dir: Path, tmp_path: Path
) -> None:
    ingest_corpus(backend, index_name, _pool_corpus(wikimh_dir, tmp_path / "hp.jsonl"))
    assert backend.count(index_name) == 994
    before = _eval_enrichment(backend, index_name, wikimh_dir)
    assert before["enriched_docs"] == 0
    _sync(backend, index_name, wikimh_dir, tmp_path / "state")
    backend.refresh(index_name)
    after = _eval_enrichment(backend, index_name, wikimh_dir)
    assert after["enriched_docs"] > 950
    # enrichment counted in contents: no in-index "before" exists any more
    assert {r["enrichment"] for r in after["rows"]} == {"after"}

    sira_b, sira_a = _row(before, "sira", "before"), _row(after, "sira", "after")
    bm25_b, bm25_a = _row(before, "bm25", "before"), _row(after, "bm25", "after")
    print(f"{backend.info.engine}: sira {sira_b} -> {sira_a}; bm25 {bm25_b} -> {bm25_a}")
    assert sira_a["ndcg@10"] > sira_b["ndcg@10"] and sira_a["recall@10"] > sira_b["recall@10"]
    assert bm25_a["ndcg@10"] >= bm25_b["ndcg@10"] and bm25_a["recall@10"] >= bm25_b["recall@10"]

    profile = read_index_profile(backend, index_name)
    assert profile.enrichment_scoring == "in_contents" and profile.contents_enriched
    # queries and DF search contents only: the phrases are already there
    assert profile.df_fields() == ["contents", "contents.shingles"]
    hp0 = SiraRetriever(backend, index_name).search("Lester W. Smith dice game", phrases=[])
    # One plain match on contents (named only where the engine cannot score named clauses:
    # elsewhere the original part is derived from the score, as the hit shows)
    assert hp0.body["query"]["match"]["contents"]["query"] == "Lester W. Smith dice game"
    assert list(hp0.body["query"]) == ["match"] and list(hp0.body["query"]["match"]) == ["contents"]
    assert hp0.hits[0].id == "hp00000"  # "Lester W. Smith" exists only in its enrichment
    assert hp0.hits[0].matched_queries == (
        {"sira_original": hp0.hits[0].score}
        if backend.capabilities().named_queries_score
        else ["sira_original"]
    )


def test_old_layout_keeps_working_and_migrates(
    backend: SearchBackend, index_name: str, tmp_path: Path
) -> None:
    """An index enriched with the separate field keeps it (detected from its mapping) when
    sira-sync runs again; `sira-sync migrate` copies it into the default layout."""
    backend.create_index(
        index_name, corpus_index_body(backend.capabilities(), enrichment_layout="separate_field")
    )
    docs = [
        {"_id": "a", "title": "Dragon Dice", "text": "A dice game published by TSR."},
        {"_id": "b", "title": "Creutz", "text": "An algorithm for sampling."},
    ]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    ingest_corpus(backend, index_name, corpus)
    enrich = tmp_path / "e.jsonl"
    enrich.write_text(json.dumps({"_id": "a", "keywords": ["Lester Smith"]}) + "\n")
    res = CliRunner().invoke(
        sira_sync,
        [
            "--index",
            index_name,
            "--url",
            backend.info.url,
            "--from-jsonl",
            str(enrich),
            "--state-dir",
            str(tmp_path / "s"),
        ],
    )
    assert res.exit_code == 0, res.output
    backend.refresh(index_name)
    old = read_index_profile(backend, index_name)
    assert old.enrichment_scoring == "separate_field"
    assert old.unigram_fields() == ["contents", "sira_enrichment.phrases"]
    hits = SiraRetriever(backend, index_name).search("Lester Smith", phrases=[]).hits
    assert [h.id for h in hits] == ["a"]

    target = f"{index_name}-v2"
    try:
        migrate_index(backend, index_name, target)
        new = read_index_profile(backend, target)
        assert new.enrichment_scoring == "in_contents" and new.contents_enriched
        assert new.unigram_fields() == ["contents"]
        hits = SiraRetriever(backend, target).search("Lester Smith", phrases=[]).hits
        assert [h.id for h in hits] == ["a"]  # the copy put the phrase into contents
        default = enrichment_layouts()["default"]
        mapping = backend.get_mapping(target)[target]["mappings"]["properties"]
        copy_to = mapping["sira_enrichment"]["properties"]["phrases"].get("copy_to")
        assert copy_to == enrichment_layouts()["layouts"][default]["copy_to"]["phrases"]
    finally:
        backend.delete_index(target)

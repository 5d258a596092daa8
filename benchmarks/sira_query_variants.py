"""Two method details of SIRA's query side, measured: the DF keep rule and the bigram tier on the
original query.

    python benchmarks/sira_query_variants.py [--url URL] [--engine opensearch|elasticsearch]

- Keep rule: ``any_window`` (the reference: a phrase survives when SOME window of it has
  0 < DF <= tau*|C|) against ``phrase_occurs`` (every window occurs, so the phrase does).
- Bigram tier on the original query: ``original_ngrams`` off (classic unigram BM25 for the
  question) against on (the question's bigrams score on the shingle subfield too, as the
  reference sums both tiers for every query).

Two indexes, both with the shared strong-LLM query expansions and the 100 HotpotQA questions:
all 9,003 wikimh paragraphs (no corpus enrichment), and the 994 ``hp*`` paragraphs with the
shared strong-LLM document enrichments applied by the product's own sync path (the default
layout). Every row runs in this process on the same cluster; BM25 is the baseline of each.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
import uuid
from pathlib import Path

from _cluster import add_cluster_args, wikimh_backend
from enrichment_layouts import pool_corpus

from sira_seek.backend import SearchBackend
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.index_layout import corpus_index_body
from sira_seek.ingest import ingest_corpus
from sira_seek.sira.evaluation import evaluate_bm25, evaluate_sira
from sira_seek.sira.expansions import PrecomputedExpander
from sira_seek.sira.settings import KeepRule, SiraSettings
from sira_seek.sync import SyncRunner, SyncSettings
from sira_seek.sync.source_factory import build_phrase_source

METRICS = ("ndcg@10", "recall@10", "recall@100")
KEEP_RULES: tuple[KeepRule, ...] = ("any_window", "phrase_occurs")


def rows_for(backend: SearchBackend, index: str, data: Path) -> dict[str, dict[str, float]]:
    """BM25 (with and without the bigram tier) and SIRA under every combination."""
    queries = read_queries(data / "queries-hotpotqa.jsonl")
    qrels = read_qrels(data / "qrels-hotpotqa.tsv")
    expander = PrecomputedExpander.from_file(data / "expansions-hotpotqa.strong-llm.jsonl")
    rows = {"bm25": evaluate_bm25(backend, index, queries, qrels)}
    rows["bm25 +bigram original"] = evaluate_sira(
        backend, index, queries, qrels, expander=None, settings=SiraSettings(original_ngrams=True)
    )
    for rule, bigrams in itertools.product(KEEP_RULES, (False, True)):
        name = f"sira {rule}{' +bigram original' if bigrams else ''}"
        settings = SiraSettings(keep_rule=rule, original_ngrams=bigrams)
        rows[name] = evaluate_sira(
            backend, index, queries, qrels, expander=expander, settings=settings
        )
    return rows


def enriched_pool(backend: SearchBackend, data: Path, work: Path) -> str:
    """An index of the hp* paragraphs (default layout) with the strong enrichments synced."""
    index = f"sira-bench-variants-hp-{uuid.uuid4().hex[:6]}"
    corpus = work / "corpus-hp.jsonl"
    pool_corpus(data, corpus)
    backend.create_index(index, corpus_index_body(backend.capabilities()))
    ingest_corpus(backend, index, corpus)
    settings = SyncSettings(state_dir=work / "sync")
    source = build_phrase_source(
        settings, from_jsonl=data / "enrichments-hotpotqa-pool.strong-llm.jsonl"
    )
    try:
        SyncRunner(backend, index, source, settings).run()
    finally:
        source.close()
    backend.refresh(index)
    return index


def table(title: str, rows: dict[str, dict[str, float]]) -> str:
    lines = [title, f"{'run':<40}" + "".join(f"{m:>12}" for m in METRICS)]
    for name, row in rows.items():
        lines.append(f"{name:<40}" + "".join(f"{row[m]:>12.4f}" for m in METRICS))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_cluster_args(parser)
    args = parser.parse_args()
    backend = wikimh_backend(args)
    print(f"{backend.info.engine} {backend.info.version}")
    started = time.perf_counter()
    full = rows_for(backend, args.index, args.data)
    print(table(f"wikimh, 9,003 paragraphs ({args.index}), no corpus enrichment", full))
    with tempfile.TemporaryDirectory() as tmp:
        index = enriched_pool(backend, args.data, Path(tmp))
        try:
            pool = rows_for(backend, index, args.data)
        finally:
            backend.delete_index(index)
    print()
    print(table("994 hp* paragraphs, strong-LLM document enrichment (default layout)", pool))
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

"""Which index layout makes corpus-side enrichment help: one table, every layout, both methods.

    python benchmarks/enrichment_layouts.py [--url URL] [--engine opensearch|elasticsearch]
        [--layouts separate_field,in_contents,...] [--pool hotpotqa|musique|2wikimultihopqa]

For each layout of mappings/enrichment_layouts.json (those the engine can run): a fresh index of
the 994 HotpotQA paragraphs of wikimh (``hp*``), created with that layout; BM25 and SIRA (with
the shared strong-LLM query expansions) evaluated on the 100 HotpotQA questions BEFORE any
enrichment; the shared strong-LLM document enrichments applied with the product's own path
(``SyncRunner`` over the JSONL, the code behind ``sira-sync --from-jsonl``); the same
evaluation AFTER (``evaluate_enrichment``, the library function of ``eval enrichment``).
"Before" is measured on the fresh index, before sync, because a layout that counts phrases
in ``contents`` cannot search the index without them afterwards. Prints nDCG@10, R@10 and
R@100 before -> after per layout and method, and the acceptance verdict (SIRA after > before
on nDCG@10 and R@10, BM25 after >= before). When both ``in_contents`` and
``in_contents_categories`` ran, the category words are then compared beside each other: the
same enriched pool with the categories kept as their own keyword field (as the SIRA paper keeps
them, "protected lexical features") and with their names also copied into ``contents`` (issue
42 item 5).

``--pool`` picks the enriched pool (default hotpotqa, the one ``../shared/data`` ships): its
paragraphs are the corpus ids with the pool's prefix (hp, mq, 2w), and its files follow the
shipped pool's names, ``queries-POOL.jsonl``, ``qrels-POOL.tsv``,
``expansions-POOL.strong-llm.jsonl`` and ``enrichments-POOL-pool.strong-llm.jsonl``, so a
held-out pool in the same layout is measured with the same command.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path

from _cluster import DEFAULT_DATA

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.node import LocalNode
from sira_seek.index_layout import corpus_index_body, enrichment_layouts
from sira_seek.ingest import ingest_corpus
from sira_seek.sira.evaluation import evaluate_enrichment
from sira_seek.sira.expansions import PrecomputedExpander
from sira_seek.sync import SyncRunner, SyncSettings
from sira_seek.sync.source_factory import build_phrase_source

METRICS = ("ndcg@10", "recall@10", "recall@100")
POOL_PREFIXES = {"hotpotqa": "hp", "musique": "mq", "2wikimultihopqa": "2w"}
"""Each wikimh pool's id prefix (../shared/data/README.md)."""


def pool_corpus(data: Path, out: Path, pool: str) -> int:
    """The pool's paragraphs of wikimh (``hp*`` for hotpotqa), as their own corpus file."""
    n = 0
    with open(data / "corpus.jsonl") as src, open(out, "w") as dst:
        for line in src:
            if json.loads(line)["_id"].startswith(POOL_PREFIXES[pool]):
                dst.write(line)
                n += 1
    return n


def layout_runnable(backend: SearchBackend, layout: str) -> bool:
    scoring = enrichment_layouts()["layouts"][layout]["scoring"]
    return scoring != "combined_fields" or backend.capabilities().combined_fields


def measure_layout(
    backend: SearchBackend, layout: str, data: Path, corpus: Path, work: Path, pool: str
) -> dict[str, dict[str, float]]:
    """Rows ``{method} before|after`` for one layout, on an index of its own (deleted after)."""
    index = f"sira-bench-layout-{layout.replace('_', '-')}-{uuid.uuid4().hex[:6]}"
    backend.create_index(index, corpus_index_body(backend.capabilities(), enrichment_layout=layout))
    try:
        ingest_corpus(backend, index, corpus)
        queries = read_queries(data / f"queries-{pool}.jsonl")
        qrels = read_qrels(data / f"qrels-{pool}.tsv")
        expander = PrecomputedExpander.from_file(data / f"expansions-{pool}.strong-llm.jsonl")
        before = evaluate_enrichment(backend, index, queries, qrels, expander=expander)
        settings = SyncSettings(state_dir=work / index)
        source = build_phrase_source(
            settings, from_jsonl=data / f"enrichments-{pool}-pool.strong-llm.jsonl"
        )
        try:
            report = SyncRunner(backend, index, source, settings).run()
        finally:
            source.close()
        backend.refresh(index)
        after = evaluate_enrichment(backend, index, queries, qrels, expander=expander)
        rows = {}
        for method in ("bm25", "sira"):
            rows[f"{method} before"] = before[f"{method} before enrichment"]
            rows[f"{method} after"] = after[f"{method} after enrichment"]
        rows["sync"] = {"enriched": float(report.counts.enriched)}
        return rows
    finally:
        backend.delete_index(index)


CATEGORY_PAIR = ("in_contents", "in_contents_categories")
"""The two layouts that differ only in the category words being copied into ``contents``."""


def category_comparison(measured: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    """Lines comparing, after enrichment, the layouts without and with category words in
    ``contents``, per method (empty unless both ran)."""
    without, with_ = (measured.get(name) for name in CATEGORY_PAIR)
    if without is None or with_ is None:
        return []
    lines = [
        "category words in contents (after enrichment; without = in_contents, "
        "with = in_contents_categories)",
        f"{'method':<6}" + "".join(f"{m + ' without':>20}{'with':>9}{'delta':>9}" for m in METRICS),
    ]
    for method in ("bm25", "sira"):
        a, b = without[f"{method} after"], with_[f"{method} after"]
        cells = "".join(f"{a[m]:>20.4f}{b[m]:>9.4f}{b[m] - a[m]:>+9.4f}" for m in METRICS)
        lines.append(f"{method:<6}{cells}")
    return lines


def verdict(rows: dict[str, dict[str, float]]) -> str:
    sira_up = all(rows["sira after"][m] > rows["sira before"][m] for m in METRICS[:2])
    bm25_ok = all(rows["bm25 after"][m] >= rows["bm25 before"][m] for m in METRICS[:2])
    return "meets acceptance" if sira_up and bm25_ok else "fails acceptance"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="existing cluster (default: a local node)")
    parser.add_argument("--engine", choices=["opensearch", "elasticsearch"], default="opensearch")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="wikimh folder")
    parser.add_argument("--layouts", help="comma-separated (default: every runnable layout)")
    parser.add_argument("--pool", choices=sorted(POOL_PREFIXES), default="hotpotqa")
    args = parser.parse_args()
    url = args.url or LocalNode(NodeSettings(), args.engine).up().url
    backend = connect(ClusterSettings(url=url))
    names = args.layouts.split(",") if args.layouts else list(enrichment_layouts()["layouts"])
    print(
        f"{backend.info.engine} {backend.info.version}, default layout: "
        f"{enrichment_layouts()['default']}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = work / f"corpus-{args.pool}.jsonl"
        prefix = POOL_PREFIXES[args.pool]
        print(f"{pool_corpus(args.data, corpus, args.pool)} {prefix}* paragraphs ({args.pool})")
        header = f"{'layout':<24}{'method':<6}" + "".join(f"{m:>20}" for m in METRICS)
        lines = [header]
        measured: dict[str, dict[str, dict[str, float]]] = {}
        for layout in names:
            if not layout_runnable(backend, layout):
                print(f"{layout}: not supported by this engine version, left out")
                continue
            started = time.perf_counter()
            rows = measured[layout] = measure_layout(
                backend, layout, args.data, corpus, work, args.pool
            )
            for method in ("bm25", "sira"):
                b, a = rows[f"{method} before"], rows[f"{method} after"]
                cells = "".join(f"{b[m]:>9.4f} -> {a[m]:.4f}" for m in METRICS)
                lines.append(f"{layout:<24}{method:<6}{cells}")
            lines.append(f"{'':<24}{verdict(rows)} ({time.perf_counter() - started:.0f} s)")
            print("\n".join(lines[-3:]), flush=True)
        print("\n" + "\n".join(lines))
        comparison = category_comparison(measured)
        if comparison:
            print("\n" + "\n".join(comparison))


if __name__ == "__main__":
    main()

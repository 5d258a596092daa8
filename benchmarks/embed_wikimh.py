"""Dense retrieval quality of an embedder on wikimh / HotpotQA, beside BM25's pinned figure.

    python benchmarks/embed_wikimh.py [--embedder cpu | openai:URL#MODEL] [--data PATH/wikimh]
        [--pool hotpotqa | all]

Embeds the corpus passages (title and text, as the index's ``title`` + ``text`` fields carry
them) and the 100 HotpotQA questions with ``sira_seek.embed.make_embedder(SPEC)`` (the
product's embedders: prefixes and normalisation as in the product), ranks by brute-force
cosine in numpy (exact kNN: what an engine's HNSW approximates) and scores nDCG@10 / R@10 /
R@100 with ir_measures, printed beside BM25's OpenSearch 2.19.6 row from
``tests/regression/bm25_wikimh_hotpotqa.json`` (docs/benchmarks/retrieval.md). Embedding
seconds and passages per second are printed too. ``--pool hotpotqa`` embeds only the 994
HotpotQA paragraphs (a smaller, easier pool, for a quick look); the default embeds all 9,003.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import ir_measures
import numpy as np
from ir_measures import R, nDCG

from sira_seek.embed import make_embedder

ROOT = Path(__file__).resolve().parents[1]
MEASURES = [nDCG @ 10, R @ 10, R @ 100]


def _jsonl(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def passage_text(doc: dict[str, str]) -> str:
    """Title and text, one passage (the corpus's BM25 field pair, as one string)."""
    title = doc.get("title", "").strip()
    return f"{title}. {doc['text']}" if title else doc["text"]


def bm25_rows() -> list[str]:
    """BM25's pinned figures on each engine (tests/regression/bm25_wikimh_hotpotqa.json)."""
    pinned = json.loads((ROOT / "tests" / "regression" / "bm25_wikimh_hotpotqa.json").read_text())
    rows = []
    for engine, entry in pinned["engines"].items():
        m = entry["metrics"]
        rows.append(
            f"BM25 {engine} {entry['version']} (pinned): nDCG@10={m['ndcg@10']:.4f} "
            f"R@10={m['recall@10']:.4f} R@100={m['recall@100']:.4f}"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="cpu")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wikimh")
    parser.add_argument("--pool", choices=["all", "hotpotqa"], default="all")
    args = parser.parse_args()

    corpus = _jsonl(args.data / "corpus.jsonl")
    if args.pool == "hotpotqa":
        corpus = [d for d in corpus if d["_id"].startswith("hp")]
    queries = _jsonl(args.data / "queries-hotpotqa.jsonl")
    # BEIR tsv with a header: query-id, corpus-id, score
    lines = (args.data / "qrels-hotpotqa.tsv").read_text().splitlines()[1:]
    qrels = [ir_measures.Qrel(q, d, int(s)) for q, d, s in (ln.split("\t") for ln in lines if ln)]

    embedder = make_embedder(args.embedder)
    started = time.perf_counter()
    docs = np.asarray(embedder.embed_documents([passage_text(d) for d in corpus]), np.float32)
    doc_s = time.perf_counter() - started
    qs = np.asarray(embedder.embed_queries([q["text"] for q in queries]), np.float32)
    embedder.close()

    scores = qs @ docs.T  # unit vectors: cosine
    run = []
    for qi, q in enumerate(queries):
        top = np.argsort(-scores[qi])[:100]
        run += [
            ir_measures.ScoredDoc(q["_id"], corpus[i]["_id"], float(scores[qi, i])) for i in top
        ]
    figures = ir_measures.calc_aggregate(MEASURES, qrels, run)
    print(f"embedder {embedder.spec} ({embedder.model}, {embedder.dimensions} dims)")
    print(
        f"embedded {len(corpus)} passages in {doc_s:.1f} s ({len(corpus) / doc_s:.0f}/s); "
        f"pool {args.pool}"
    )
    print("dense (exact cosine): " + " ".join(f"{m}={figures[m]:.4f}" for m in MEASURES))
    for row in bm25_rows():
        print(row)


if __name__ == "__main__":
    main()

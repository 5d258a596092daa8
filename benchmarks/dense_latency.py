"""Search latency of ``dense`` and ``hybrid`` beside BM25's, in one run on one index.

    python benchmarks/dense_latency.py --url http://127.0.0.1:9200 [--data PATH/wikimh]
        [--limit N] [--queries Q] [--embedder cpu | openai:URL#MODEL]

Ingests the first N wikimh passages (default 1,000) with vectors into a fresh one-shard index
(``sira_seek.ingest.ingest_corpus`` with the embedder, as ``sira-seek ingest --embed``), then
searches the first Q HotpotQA queries (default 100) with each method through one
``SiraRetriever`` per method (as ``sira-seek search``; one embedder, loaded and warmed before
the clock starts, shared by dense and hybrid), k = 10, kNN num_candidates 100, each query
once per method after one warm-up pass, and prints p50 / p95 / mean wall-clock milliseconds per
query, and the query-embedding part alone. The index is deleted at the end.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from itertools import islice
from pathlib import Path

from sira_seek.config import ClusterSettings
from sira_seek.corpus import read_corpus, read_queries
from sira_seek.embed import make_embedder
from sira_seek.esplugin.engines.registry import connect
from sira_seek.ingest import ingest_corpus
from sira_seek.sira.retriever import SiraRetriever
from sira_seek.sira.settings import SiraSettings

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("bm25", "dense", "hybrid")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wikimh")
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--embedder", default=None)
    args = parser.parse_args()
    backend = connect(ClusterSettings(url=args.url))
    corpus = Path(tempfile.mkdtemp()) / "corpus.jsonl"
    docs = list(islice(read_corpus(args.data / "corpus.jsonl"), args.limit))
    corpus.write_text("".join(d.model_dump_json() + "\n" for d in docs), encoding="utf-8")
    queries = [
        q.text for q in islice(read_queries(args.data / "queries-hotpotqa.jsonl"), args.queries)
    ]
    embedder = make_embedder(args.embedder)
    embedder.embed_queries(["warm up"])
    index = f"bench-dense-{uuid.uuid4().hex[:8]}"
    try:
        started = time.perf_counter()
        report = ingest_corpus(backend, index, corpus, embedder=embedder)
        backend.request("POST", f"/{index}/_refresh")  # type: ignore[attr-defined]
        print(
            f"{backend.info.engine} {backend.info.version}: {report.written} passages ingested "
            f"--embed ({embedder.model}) in {time.perf_counter() - started:.1f} s; "
            f"{len(queries)} queries, k=10"
        )
        settings = SiraSettings(size=10, num_candidates=100)
        embed_ms = []
        for text in queries:
            t0 = time.perf_counter()
            embedder.embed_queries([text])
            embed_ms.append((time.perf_counter() - t0) * 1000)
        print(f"{'query embedding alone':24} p50 {_pct(embed_ms, .5):7.1f}  p95 "
              f"{_pct(embed_ms, .95):7.1f}  mean {statistics.mean(embed_ms):7.1f} ms")  # fmt: skip
        for method in METHODS:
            retriever = SiraRetriever(
                backend,
                index,
                settings=settings,
                method=None if method == "bm25" else method,
                embedder=embedder if method != "bm25" else None,
            )
            for text in queries:  # warm-up pass
                retriever.search(text)
            ms = []
            for text in queries:
                t0 = time.perf_counter()
                retriever.search(text)
                ms.append((time.perf_counter() - t0) * 1000)
            print(f"{method:24} p50 {_pct(ms, .5):7.1f}  p95 {_pct(ms, .95):7.1f}  "
                  f"mean {statistics.mean(ms):7.1f} ms")  # fmt: skip
    finally:
        backend.delete_index(index)
        embedder.close()


if __name__ == "__main__":
    main()

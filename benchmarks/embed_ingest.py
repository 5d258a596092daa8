"""``ingest`` beside ``ingest --embed``: documents per second and index size per document.

    python benchmarks/embed_ingest.py --url http://127.0.0.1:9200 [--data PATH/wikimh]
        [--limit N] [--embedder cpu | openai:URL#MODEL]

Ingests the first N passages of the corpus (default all 9,003 of wikimh) twice into fresh
one-shard indexes, once plain and once with vectors (``sira_seek.ingest.ingest_corpus`` with
the embedder, as ``sira-seek ingest --embed`` does; the embedder is loaded before the clock
starts), and prints the two side by side: seconds, documents per second, and the primary store
size per document after a refresh. Then it re-runs the embedded ingest to show the resumable
path (nothing re-embedded). The indexes are deleted at the end.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from itertools import islice
from pathlib import Path

from sira_seek.config import ClusterSettings
from sira_seek.corpus import read_corpus
from sira_seek.embed import make_embedder
from sira_seek.esplugin.engines.registry import connect
from sira_seek.ingest import ingest_corpus

ROOT = Path(__file__).resolve().parents[1]


def _store_bytes(backend: object, index: str) -> int:
    body = backend.request("GET", f"/{index}/_stats/store")  # type: ignore[attr-defined]
    return int(body["_all"]["primaries"]["store"]["size_in_bytes"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wikimh")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--embedder", default=None)
    args = parser.parse_args()
    backend = connect(ClusterSettings(url=args.url))
    corpus = Path(tempfile.mkdtemp()) / "corpus.jsonl"
    docs = list(islice(read_corpus(args.data), args.limit))
    corpus.write_text("".join(d.model_dump_json() + "\n" for d in docs), encoding="utf-8")
    embedder = make_embedder(args.embedder)
    rows = []
    names = []
    try:
        for label, model in (("ingest", None), ("ingest --embed", embedder)):
            index = f"bench-embed-{uuid.uuid4().hex[:8]}"
            names.append(index)
            started = time.perf_counter()
            report = ingest_corpus(backend, index, corpus, embedder=model)
            seconds = time.perf_counter() - started
            backend.request("POST", f"/{index}/_forcemerge?max_num_segments=1")  # type: ignore[attr-defined]
            size = _store_bytes(backend, index) / max(1, report.written)
            rows.append((label, report.written, seconds, report.written / seconds, size))
        started = time.perf_counter()
        again = ingest_corpus(backend, names[1], corpus, embedder=embedder)
        rerun = time.perf_counter() - started
    finally:
        embedder.close()
        for index in names:
            backend.delete_index(index)
    print(f"{backend.info.engine} {backend.info.version}, {len(docs)} passages, {embedder.model}")
    print(f"{'':16s} {'docs':>6s} {'seconds':>9s} {'docs/s':>8s} {'bytes/doc':>10s}")
    for label, n, seconds, rate, size in rows:
        print(f"{label:16s} {n:6d} {seconds:9.1f} {rate:8.1f} {size:10.0f}")
    print(f"re-run --embed: {again.embedded} embedded, {again.unchanged} unchanged, {rerun:.1f} s")


if __name__ == "__main__":
    main()

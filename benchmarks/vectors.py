"""Vectors beside BM25, in one run per cluster: ingest rate, index size, search latency.

    python benchmarks/vectors.py --url http://127.0.0.1:9410 --url http://127.0.0.1:9420
        [--data PATH/wikimh] [--limit N] [--queries Q] [--embedder cpu | openai:URL#MODEL]
        [--json] [--compare-with CHECKOUT [--pairs P]]

The embedder is loaded and warmed before any clock starts and shared by every cluster; first
the N passages (default 300 of wikimh) are embedded with no engine involved, in ingest's text
and chunks, so the model's share of ``ingest --embed`` is seen on its own.

For each cluster, the passages are ingested twice into fresh one-shard indexes with
``sira_seek.ingest.ingest_corpus`` (what ``sira-seek ingest`` runs): plain, then with vectors
(``ingest --embed``). Printed side by side: documents per second of each, and the primary store
size per document of each after a refresh and a merge to one segment (same documents, two
indexes: the difference is the vectors, their HNSW graph, and, where the engine keeps it, the
vector as JSON in ``_source``; whether it does is read back from one document). A re-run of the
embedded ingest shows the resumable path (nothing re-embedded).

Then the first Q HotpotQA questions (default 100) are searched on the embedded index with
``bm25``, ``dense`` and ``hybrid`` through one ``SiraRetriever`` per method (as ``sira-seek
search``), k = 10, kNN ``num_candidates`` 100, one warm-up pass per method before the clock,
and the p50 / p95 / mean milliseconds per query are printed (``sira_seek.stats.percentile``),
with the query-embedding part alone. ``hybrid`` sends its BM25 and kNN requests one after the
other, each ``FUSION_DEPTH`` (100) deep, and fuses them by RRF in the client. The 1-minute load
average before and after each cluster is printed: on a shared machine it explains outliers.
Both indexes are deleted at the end.

``--compare-with`` runs this script against another checkout's code and this one's,
alternating (``benchmarks/_compare.py``), and prints the medians side by side.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import Any

import click
from _cluster import DEFAULT_DATA
from _compare import forwarded_args, run_pairs, side_by_side

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings
from sira_seek.corpus import Document, read_corpus, read_queries
from sira_seek.embed import make_embedder
from sira_seek.embed.base import Embedder
from sira_seek.esplugin.engines.registry import connect
from sira_seek.fields import VECTOR
from sira_seek.ingest import CHUNK, ingest_corpus
from sira_seek.sira.dense import passage_text
from sira_seek.sira.retriever import SiraRetriever
from sira_seek.sira.settings import SiraSettings
from sira_seek.stats import percentile

METHODS = ("bm25", "dense", "hybrid")


def _store(backend: SearchBackend, index: str) -> dict[str, int]:
    """Primary store size after a refresh and a merge to one segment, with the segment and
    deleted-document counts it was read with (a second copy of the documents, kept as soft
    deletes, would double the size: the counts show it).

    ``SearchBackend`` has no merge-to-N-segments nor store-size primitive (the library never
    needs either), so this goes through esplugin's raw ``request``, as df_lookup.py does: a
    benchmark-only reach past the protocol, never done by sira_seek itself."""
    request: Any = backend.request  # type: ignore[attr-defined]  # benchmark only
    backend.refresh(index)
    request("POST", f"/{index}/_forcemerge", params={"max_num_segments": 1})
    backend.refresh(index)
    primaries = request("GET", f"/{index}/_stats/store,segments,docs")["_all"]["primaries"]
    return {
        "bytes": int(primaries["store"]["size_in_bytes"]),
        "segments": int(primaries["segments"]["count"]),
        "deleted": int(primaries["docs"].get("deleted", 0)),
    }


def embedding_alone(embedder: Embedder, docs: list[Document]) -> dict[str, Any]:
    """The passages embedded with no engine involved, in ingest's chunks and text
    (``passage_text``): the part of ``ingest --embed``'s time the model takes."""
    texts = [passage_text(d.title, d.text) for d in docs]
    started = time.perf_counter()
    for at in range(0, len(texts), CHUNK):
        embedder.embed_documents(texts[at : at + CHUNK])
    seconds = time.perf_counter() - started
    return {
        "docs": len(texts),
        "seconds": round(seconds, 2),
        "docs_per_s": round(len(texts) / seconds, 2),
    }


def _timings(ms: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "mean_ms": round(statistics.mean(ms), 2),
    }


def ingest_rows(
    backend: SearchBackend, corpus: Path, embedder: Embedder, names: list[str]
) -> dict[str, Any]:
    """Plain and embedded ingest of the same documents: docs/s and bytes per document."""
    rows: dict[str, Any] = {}
    for label, model in (("ingest", None), ("ingest --embed", embedder)):
        index = f"bench-vectors-{uuid.uuid4().hex[:8]}"
        names.append(index)
        started = time.perf_counter()
        report = ingest_corpus(backend, index, corpus, embedder=model)
        seconds = time.perf_counter() - started
        rows[label] = {
            "docs": report.written,
            "seconds": round(seconds, 2),
            "docs_per_s": round(report.written / seconds, 2),
        }
        store = _store(backend, index)
        rows[label]["bytes_per_doc"] = round(store["bytes"] / max(1, report.written))
        rows[label]["segments"], rows[label]["deleted"] = store["segments"], store["deleted"]
    started = time.perf_counter()
    again = ingest_corpus(backend, names[1], corpus, embedder=embedder)
    rows["rerun --embed"] = {
        "embedded": again.embedded,
        "unchanged": again.unchanged,
        "seconds": round(time.perf_counter() - started, 2),
    }
    # Whether the engine keeps the vector in _source (JSON text: most of the size difference).
    first = next(iter(read_corpus(corpus))).id
    hit = backend.get(names[1], first)
    rows["vector_in_source"] = hit is not None and VECTOR in (hit.source or {})
    return rows


def latency_rows(
    backend: SearchBackend, index: str, queries: list[str], embedder: Embedder
) -> dict[str, Any]:
    """Query embedding alone, then BM25, dense and hybrid on one index, one warm-up pass each."""
    embed_ms = []
    for text in queries:
        t0 = time.perf_counter()
        embedder.embed_queries([text])
        embed_ms.append((time.perf_counter() - t0) * 1000)
    rows = {"query embedding alone": _timings(embed_ms)}
    settings = SiraSettings(size=10, num_candidates=100)
    for method in METHODS:
        retriever = SiraRetriever(
            backend,
            index,
            settings=settings,
            method=method,
            embedder=None if method == "bm25" else embedder,
        )
        for text in queries:  # warm-up pass
            retriever.search(text)
        ms = []
        for text in queries:
            t0 = time.perf_counter()
            retriever.search(text)
            ms.append((time.perf_counter() - t0) * 1000)
        rows[method] = _timings(ms)
    return rows


def measure(url: str, corpus: Path, queries: list[str], embedder: Embedder) -> dict[str, Any]:
    backend = connect(ClusterSettings(url=url))
    names: list[str] = []
    load = [round(os.getloadavg()[0], 2)]  # 1-minute load: the machine may be shared
    try:
        ingest = ingest_rows(backend, corpus, embedder, names)
        latency = latency_rows(backend, names[1], queries, embedder)
    finally:
        for index in names:
            backend.delete_index(index)
    load.append(round(os.getloadavg()[0], 2))
    return {
        "cluster": f"{backend.info.engine} {backend.info.version}",
        "load_1min_before_after": load,
        "ingest": ingest,
        "latency": latency,
    }


def render(report: dict[str, Any]) -> list[str]:
    lines = [f"{report['embedder']}; {report['docs']} passages, {report['queries']} queries, k=10"]
    a = report["embedding_alone"]
    lines.append(
        f"document embedding alone (no engine): {a['docs']} passages in {a['seconds']:.1f} s, "
        f"{a['docs_per_s']:.1f} docs/s"
    )
    for run in report["clusters"]:
        c = run["cluster"]
        head = f"{'docs':>6s} {'seconds':>8s} {'docs/s':>8s} {'bytes/doc':>10s} segments deleted"
        lines.append(f"{c:28s} {'':16s} {head}")
        for label in ("ingest", "ingest --embed"):
            r = run["ingest"][label]
            lines.append(
                f"{c:28s} {label:16s} {r['docs']:6d} {r['seconds']:8.1f} {r['docs_per_s']:8.1f} "
                f"{r['bytes_per_doc']:10d} {r['segments']:8d} {r['deleted']:7d}"
            )
        r = run["ingest"]["rerun --embed"]
        lines.append(
            f"{c:28s} re-run --embed: {r['embedded']} embedded, {r['unchanged']} unchanged, "
            f"{r['seconds']:.1f} s; vector kept in _source: {run['ingest']['vector_in_source']}"
        )
        lines.append(f"{c:28s} {'search':22s} {'p50 ms':>8s} {'p95 ms':>8s} {'mean ms':>8s}")
        for name, t in run["latency"].items():
            lines.append(
                f"{c:28s} {name:22s} {t['p50_ms']:8.1f} {t['p95_ms']:8.1f} {t['mean_ms']:8.1f}"
            )
        before, after = run["load_1min_before_after"]
        lines.append(f"{c:28s} load average (1 min) {before} before, {after} after")
    return lines


def compare(argv: list[str], checkout: Path, pairs: int) -> None:
    """Medians over ``pairs`` runs of each side: docs/s of both ingests, p50 of each method."""
    before, after = run_pairs(Path(__file__), argv, checkout, pairs)
    click.echo(f"vectors, before = {checkout}, after = this checkout")
    for n, run in enumerate(after[0]["clusters"]):
        c = run["cluster"]

        def pick(*keys: str, n: int = n) -> Callable[[Any], float]:
            def get(r: Any) -> float:
                value = r["clusters"][n]
                for key in keys:
                    value = value[key]
                return float(value)

            return get

        labels = ("ingest", "ingest --embed")
        rate = [(f"{c} {lab} docs/s", pick("ingest", lab, "docs_per_s")) for lab in labels]
        click.echo("\n".join(side_by_side(rate, before, after, unit="docs/s")))
        p50 = [(f"{c} {m} p50", pick("latency", m, "p50_ms")) for m in METHODS]
        click.echo("\n".join(side_by_side(p50, before, after)))


@click.command()
@click.option("--url", "urls", multiple=True, required=True, help="One per cluster.")
@click.option("--data", type=click.Path(path_type=Path), default=DEFAULT_DATA)
@click.option("--limit", type=int, default=300, show_default=True, help="Passages ingested.")
@click.option("--queries", "n_queries", type=int, default=100, show_default=True)
@click.option("--embedder", default=None, help="Embedder spec (default: the CPU embedder).")
@click.option("--json", "as_json", is_flag=True)
@click.option("--compare-with", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--pairs", type=int, default=3, show_default=True, help="Runs per side to compare.")
def main(
    urls: tuple[str, ...],
    data: Path,
    limit: int,
    n_queries: int,
    embedder: str | None,
    as_json: bool,
    compare_with: Path | None,
    pairs: int,
) -> None:
    if compare_with is not None:
        compare(forwarded_args(), compare_with, pairs)
        return
    corpus = Path(tempfile.mkdtemp()) / "corpus.jsonl"
    docs = list(islice(read_corpus(data / "corpus.jsonl"), limit))
    corpus.write_text("".join(d.model_dump_json() + "\n" for d in docs), encoding="utf-8")
    queries = [q.text for q in islice(read_queries(data / "queries-hotpotqa.jsonl"), n_queries)]
    model = make_embedder(embedder)
    try:
        model.embed_queries(["warm up"])
        model.embed_documents(["warm up"])
        alone = embedding_alone(model, docs)
        clusters = [measure(url, corpus, queries, model) for url in urls]
    finally:
        model.close()
    report = {
        "embedder": f"{model.spec} ({model.model}, {model.dimensions} dims)",
        "docs": len(docs),
        "queries": len(queries),
        "embedding_alone": alone,
        "clusters": clusters,
    }
    click.echo(json.dumps(report, indent=2) if as_json else "\n".join(render(report)))


if __name__ == "__main__":
    main()

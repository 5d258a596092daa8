"""Per-query latency of SIRA's engine work against a plain BM25 query, in one run.

SIRA's engine work is the DF check (analysis + one live-count search) plus the weighted query;
the LLM is excluded by using the precomputed strong-LLM expansions. BM25 and SIRA run
interleaved, query by query, so both see the same cache and load conditions. ``bm25`` and the
SIRA query use global statistics (``dfs_query_then_fetch``, the default); ``bm25_qtf`` is the
same BM25 query with per-shard statistics, to show what the global statistics cost.

    python benchmarks/sira_latency.py --url http://127.0.0.1:9410 --url http://127.0.0.1:9420

The index (default ``sira-bench-wikimh``) is ingested from the wikimh data when missing.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import click

from sira_seek.backend import SearchBackend
from sira_seek.bm25 import bm25_query
from sira_seek.config import ClusterSettings
from sira_seek.corpus import read_queries
from sira_seek.esplugin.engines.registry import connect
from sira_seek.ingest import ingest_corpus
from sira_seek.sira import PrecomputedExpander, SiraRetriever, SiraSettings
from sira_seek.stats import percentile

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikimh"


def measure(
    backend: SearchBackend, index: str, data: Path, rounds: int, size: int
) -> dict[str, dict[str, float]]:
    queries = read_queries(data / "queries-hotpotqa.jsonl")
    expander = PrecomputedExpander.from_file(data / "expansions-hotpotqa.strong-llm.jsonl")
    retriever = SiraRetriever(backend, index, expander=expander, settings=SiraSettings(size=size))
    samples: dict[str, list[float]] = {
        "bm25_qtf": [],
        "bm25": [],
        "sira_df_check": [],
        "sira_query": [],
        "sira_engine": [],
    }
    for query in queries[:10]:  # warm-up: caches, JIT, connections
        backend.search(index, {**bm25_query(query.text), "size": size, "_source": False})
        retriever.search(query.text, query_id=query.id)
    per_shard = {"search_type": "query_then_fetch"}  # what dfs_query_then_fetch costs
    for _ in range(rounds):
        for query in queries:
            started = time.perf_counter()
            body = {**bm25_query(query.text), "size": size, "_source": False}
            backend.search(index, body, per_shard)
            samples["bm25_qtf"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            backend.search(index, {**bm25_query(query.text), "size": size, "_source": False})
            samples["bm25"].append((time.perf_counter() - started) * 1000)
            t = retriever.search(query.text, query_id=query.id).timings
            samples["sira_df_check"].append(t.df_check_ms)
            samples["sira_query"].append(t.search_ms)
            samples["sira_engine"].append(t.engine_ms)
    return {
        name: {
            "p50_ms": round(percentile(v, 50), 2),
            "p95_ms": round(percentile(v, 95), 2),
            "mean_ms": round(statistics.fmean(v), 2),
            "n": len(v),
        }
        for name, v in samples.items()
    }


@click.command()
@click.option("--url", "urls", multiple=True, required=True, help="One per cluster.")
@click.option("--index", default="sira-bench-wikimh", show_default=True)
@click.option("--data", type=click.Path(path_type=Path), default=DEFAULT_DATA)
@click.option("--rounds", type=int, default=3, show_default=True)
@click.option("--size", type=int, default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def main(
    urls: tuple[str, ...], index: str, data: Path, rounds: int, size: int, as_json: bool
) -> None:
    report: dict[str, dict[str, object]] = {}
    for url in urls:
        backend = connect(ClusterSettings(url=url))
        if not backend.index_exists(index):
            click.echo(f"ingesting {data} into {index} on {url} ...", err=True)
            ingest_corpus(backend, index, data)
        stats = measure(backend, index, data, rounds, size)
        bm25, sira = stats["bm25"], stats["sira_engine"]
        report[f"{backend.info.engine} {backend.info.version}"] = {
            **stats,
            "ratio_p50": round(sira["p50_ms"] / bm25["p50_ms"], 2),
            "ratio_p95": round(sira["p95_ms"] / bm25["p95_ms"], 2),
        }
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"{'cluster':28s} {'stage':14s} {'p50 ms':>8s} {'p95 ms':>8s} {'mean ms':>8s}")
    for cluster, row in report.items():
        for stage in ("bm25_qtf", "bm25", "sira_df_check", "sira_query", "sira_engine"):
            s = row[stage]
            assert isinstance(s, dict)
            click.echo(
                f"{cluster:28s} {stage:14s} {s['p50_ms']:8.2f} {s['p95_ms']:8.2f} "
                f"{s['mean_ms']:8.2f}"
            )
        click.echo(
            f"{cluster:28s} {'SIRA/BM25':14s} {row['ratio_p50']:7.2f}x {row['ratio_p95']:7.2f}x"
        )


if __name__ == "__main__":
    main()

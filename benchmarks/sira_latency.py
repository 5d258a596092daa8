"""Per-query latency of SIRA's engine work against a plain BM25 query, in one run.

SIRA's engine work is the DF check (one ``_mtermvectors`` request while the index holds no
deleted document, its |C| and deleted count reused for ``--df-stats-max-age`` seconds) plus the
weighted query; the LLM is excluded by using the precomputed strong-LLM expansions. BM25 and
SIRA run interleaved, query by query, so both see the same cache and load conditions. ``bm25``
and the SIRA query use global statistics (``dfs_query_then_fetch``, the default); ``bm25_qtf``
is the same BM25 query with per-shard statistics, to show what the global statistics cost.
``df_check_live`` is the same DF check on the live route (analysis, then a live count: two
round trips, what every query paid before), timed in the same loop; its candidate tables are
compared with the one-request route's (``tables_differ`` must be 0). Each row of the DF check
also reports its round trips (``df_round_trips``: p50 / p95 / max, the first query's reading
of the counts and routing look-up included) and the routes taken. ``sira_unnamed`` is the
same weighted query sent again without its clause names (no ``matched_queries`` per hit),
to show what the names cost; its rankings are compared with the named query's.

    python benchmarks/sira_latency.py --url http://127.0.0.1:9410 --shards 5

The index (default ``sira-bench-wikimh``, ``sira-bench-wikimh-<N>sh`` with ``--shards N``) is
ingested from the wikimh data when missing. Every round repeats the 100 questions (the same
phrases again): nothing of the DF check is cached per phrase, so the rounds cost alike.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from _compare import forwarded_args, run_pairs, side_by_side

from sira_seek.backend import SearchBackend
from sira_seek.bm25 import bm25_query
from sira_seek.config import ClusterSettings
from sira_seek.corpus import read_queries
from sira_seek.esplugin.engines.registry import connect
from sira_seek.ingest import ingest_corpus
from sira_seek.sira import PrecomputedExpander, SiraRetriever, SiraSettings
from sira_seek.sira.df_check import DocFrequencyChecker
from sira_seek.sira.keyword_parsing import clean_phrases
from sira_seek.stats import percentile

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikimh"


STAGES = (
    "bm25_qtf",
    "bm25",
    "df_check_live",
    "sira_df_check",
    "sira_query",
    "sira_unnamed",
    "sira_engine",
)


def without_names(node: Any) -> Any:
    """The body with every ``_name`` removed: no ``matched_queries`` to compute per hit."""
    if isinstance(node, dict):
        return {k: without_names(v) for k, v in node.items() if k != "_name"}
    if isinstance(node, list):
        return [without_names(v) for v in node]
    return node


def measure(
    backend: SearchBackend,
    index: str,
    data: Path,
    rounds: int,
    size: int,
    max_age: float,
) -> dict[str, object]:
    queries = read_queries(data / "queries-hotpotqa.jsonl")
    expander = PrecomputedExpander.from_file(data / "expansions-hotpotqa.strong-llm.jsonl")
    settings = SiraSettings(size=size, df_stats_max_age=max_age)
    retriever = SiraRetriever(backend, index, expander=expander, settings=settings)
    c = retriever.checker
    live_checker = DocFrequencyChecker(
        backend,
        retriever.profile,
        tau=c.tau,
        max_candidates=c.max_candidates,
        max_kept=c.max_kept,
        max_phrase_words=c.max_phrase_words,
        drop_query_copies=c.drop_query_copies,
        keep_rule=c.keep_rule,
        stats_max_age_s=0.0,
    )
    samples: dict[str, list[float]] = {name: [] for name in STAGES}
    round_trips: list[int] = []
    routes: dict[str, int] = {}
    differ = 0
    rankings_differ = 0
    for n, query in enumerate(queries[:10]):  # warm-up: caches, JIT, connections
        backend.search(index, {**bm25_query(query.text), "size": size, "_source": False})
        first = retriever.search(query.text, query_id=query.id)
        if n == 0:  # the first DF check reads the counts and looks the routing values up
            round_trips.append(first.candidates.round_trips)
        live_checker.check(clean_phrases(first.expansion.phrases), query=first.query)
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
            result = retriever.search(query.text, query_id=query.id)
            t = result.timings
            samples["sira_df_check"].append(t.df_check_ms)
            samples["sira_query"].append(t.search_ms)
            samples["sira_engine"].append(t.engine_ms)
            round_trips.append(result.candidates.round_trips)
            route = result.candidates.df_route
            routes[route] = routes.get(route, 0) + 1
            started = time.perf_counter()  # the same weighted query without clause names
            unnamed = backend.search(index, without_names(result.body))  # global stats too
            samples["sira_unnamed"].append((time.perf_counter() - started) * 1000)
            rankings_differ += [h.id for h in unnamed.hits] != [h.id for h in result.hits]
            live = live_checker.check(clean_phrases(result.expansion.phrases), query=result.query)
            samples["df_check_live"].append(live.took_ms)
            differ += live.candidates != result.candidates.candidates
    out: dict[str, object] = {
        name: {
            "p50_ms": round(percentile(v, 50), 2),
            "p95_ms": round(percentile(v, 95), 2),
            "mean_ms": round(statistics.fmean(v), 2),
            "n": len(v),
        }
        for name, v in samples.items()
    }
    out["df_round_trips"] = {
        "p50": percentile([float(r) for r in round_trips], 50),
        "p95": percentile([float(r) for r in round_trips], 95),
        "max": max(round_trips),
        "first_query": round_trips[0],
    }
    out["df_routes"] = routes
    out["tables_differ"] = differ
    out["unnamed_rankings_differ"] = rankings_differ
    return out


@click.command()
@click.option("--url", "urls", multiple=True, required=True, help="One per cluster.")
@click.option("--index", default=None, help="Default: sira-bench-wikimh[-<N>sh].")
@click.option("--shards", type=int, default=1, show_default=True, help="Of a new index.")
@click.option("--data", type=click.Path(path_type=Path), default=DEFAULT_DATA)
@click.option("--rounds", type=int, default=3, show_default=True)
@click.option("--size", type=int, default=10, show_default=True)
@click.option(
    "--df-stats-max-age",
    type=float,
    default=SiraSettings.model_fields["df_stats_max_age"].default,
    show_default=True,
    help="SIRA_SEEK_SIRA_DF_STATS_MAX_AGE for the SIRA side (0: the live route).",
)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--compare-with",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    default=None,
    help="Another checkout (e.g. a git worktree of HEAD): run this script against its code and "
    "this one's, alternating, and print both side by side (benchmarks/_compare.py).",
)
@click.option("--pairs", type=int, default=3, show_default=True, help="Runs per side to compare.")
def main(
    urls: tuple[str, ...],
    index: str | None,
    shards: int,
    data: Path,
    rounds: int,
    size: int,
    df_stats_max_age: float,
    as_json: bool,
    compare_with: Path | None,
    pairs: int,
) -> None:
    if compare_with is not None:
        compare(forwarded_args(), compare_with, pairs)
        return
    index = index or ("sira-bench-wikimh" if shards == 1 else f"sira-bench-wikimh-{shards}sh")
    report: dict[str, dict[str, object]] = {}
    for url in urls:
        backend = connect(ClusterSettings(url=url))
        if not backend.index_exists(index):
            click.echo(f"ingesting {data} into {index} ({shards} shards) on {url} ...", err=True)
            ingest_corpus(backend, index, data, shards=shards)
        stats = measure(backend, index, data, rounds, size, df_stats_max_age)
        bm25, sira = stats["bm25"], stats["sira_engine"]
        assert isinstance(bm25, dict) and isinstance(sira, dict)
        report[f"{backend.info.engine} {backend.info.version}"] = {
            **stats,
            "index": index,
            "shards": int(next(iter(backend.index_settings(index).values()))["number_of_shards"]),
            "ratio_p50": round(sira["p50_ms"] / bm25["p50_ms"], 2),
            "ratio_p95": round(sira["p95_ms"] / bm25["p95_ms"], 2),
        }
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"{'cluster':28s} {'stage':14s} {'p50 ms':>8s} {'p95 ms':>8s} {'mean ms':>8s}")
    for cluster, row in report.items():
        for stage in STAGES:
            s = row[stage]
            assert isinstance(s, dict)
            click.echo(
                f"{cluster:28s} {stage:14s} {s['p50_ms']:8.2f} {s['p95_ms']:8.2f} "
                f"{s['mean_ms']:8.2f}"
            )
        click.echo(
            f"{cluster:28s} {'SIRA/BM25':14s} {row['ratio_p50']:7.2f}x {row['ratio_p95']:7.2f}x"
        )
        trips = row["df_round_trips"]
        assert isinstance(trips, dict)
        click.echo(
            f"{cluster:28s} DF check round trips p50 {trips['p50']:g}, p95 {trips['p95']:g}, "
            f"max {trips['max']} (first query {trips['first_query']}); routes {row['df_routes']}; "
            f"tables differing from the live route: {row['tables_differ']}; rankings of the "
            f"unnamed query differing: {row['unnamed_rankings_differ']}; "
            f"{row['index']} ({row['shards']} shards)"
        )


def compare(argv: list[str], checkout: Path, pairs: int) -> None:
    """This script against ``checkout``'s code and this checkout's, side by side: per cluster
    the median over the runs of BM25's, the DF check's and SIRA's engine work's p50, and
    SIRA/BM25 at p50 (the acceptance figure: no worse after a change)."""
    before, after = run_pairs(Path(__file__), argv, checkout, pairs)
    click.echo(f"sira_latency, before = {checkout}, after = this checkout")
    for cluster in after[0]:

        def stage(name: str, cluster: str = cluster) -> Callable[[Any], float]:
            return lambda run: float(run[cluster][name]["p50_ms"])

        def ratio(run: Any, cluster: str = cluster) -> float:
            return float(run[cluster]["ratio_p50"])

        rows = [(f"{cluster} {name} p50", stage(name)) for name in STAGES]
        rows.append((f"{cluster} SIRA/BM25 p50 (x)", ratio))
        click.echo("\n".join(side_by_side(rows, before, after)))


if __name__ == "__main__":
    main()

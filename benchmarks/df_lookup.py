"""The DF check for 30 candidate phrases: the routes considered, measured in one process.

    python benchmarks/df_lookup.py [--url URL[,URL...]] [--engine opensearch|elasticsearch]
                                   [--shards 5] [--replicas 0] [--rounds 30]

On one index of wikimh (created with ``--shards`` shards when missing), for the 30 first
strong-LLM candidate phrases and every field SIRA grounds on, each round times:

- ``exact`` (what sira-seek uses): ``analyze_terms`` (``_mtermvectors`` of artificial documents
  without statistics) + ``live_doc_freqs`` (ONE size-0 search, a ``filters`` aggregation of term
  queries, exact total = |C|): live documents over every shard, 2 round trips;
- its two halves alone (analysis, counting);
- ``counting by _msearch``: the same counts as one ``_msearch`` of size-0 term searches;
- ``one-shard term vectors``: the old route, one ``_mtermvectors`` with ``term_statistics``
  (1 round trip, but DF and |C| of ONE shard, and deleted copies counted);
- ``_count per phrase``: one ``match_phrase`` ``_count`` request per phrase (30 round trips);
- ``SIRA bounds``: SIRA's one-request check (``grounding_term_statistics`` with the index's
  counts kept: ``sira.df_bounds.analyze_with_doc_freq_bounds``, one ``term_vectors`` request);
- ``sync bounds``: sira-sync's pack filter (``sira.df_bounds.term_doc_freq_bounds``: the
  routing look-up, one ``analyze`` per analyzer, one ``term_vectors`` request).

The two bounds routes run the code of the checkout the library is imported from, so the same
script measures the code before and after a change (docs/benchmarks/df-bounds.md):

    PYTHONPATH=<old checkout's site> python benchmarks/df_lookup.py --url URL --shards 2

Prints p50 / p95 wall milliseconds per full look-up and how many phrases' DF each route gets
wrong against the exact one. The benchmark talks to the engine's raw REST for the routes
sira-seek does not use (through esplugin's ``request``), which the library never does.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _cluster import add_cluster_args, wikimh_backend
from _compare import forwarded_args, run_pairs, side_by_side

from sira_seek.backend import SearchBackend, TermDocFreqBounds
from sira_seek.sira.index_profile import read_index_profile
from sira_seek.sira.term_vectors import batch_term_statistics, grounding_term_statistics
from sira_seek.stats import percentile

try:
    from sira_seek.sira.df_bounds import term_doc_freq_bounds
except ImportError:  # the code before the algorithm moved out of the engines (before/after)

    def term_doc_freq_bounds(
        backend: SearchBackend, index: str, fields: list[str], texts: list[str]
    ) -> TermDocFreqBounds | None:
        return backend.term_doc_freq_bounds(index, fields, texts)  # type: ignore[attr-defined,no-any-return]


def candidate_phrases(path: str, n: int = 30) -> list[str]:
    phrases: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            for kw in json.loads(line)["keywords"]:
                if kw not in phrases:
                    phrases.append(kw)
                if len(phrases) == n:
                    return phrases
    return phrases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_cluster_args(parser)
    parser.add_argument("--shards", type=int, default=5)
    parser.add_argument("--replicas", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="p50/p95 per route as JSON")
    parser.add_argument(
        "--compare-with",
        type=Path,
        metavar="CHECKOUT",
        help="another checkout (e.g. a git worktree of HEAD): run this script against its code "
        "and this one's, alternating, and print both side by side (benchmarks/_compare.py)",
    )
    parser.add_argument("--pairs", type=int, default=3, help="runs per side with --compare-with")
    args = parser.parse_args()
    if args.compare_with:
        compare(args)
        return
    if args.index == "sira-bench-wikimh":
        args.index = f"sira-bench-wikimh-{args.shards}sh"
    backend = wikimh_backend(args, shards=args.shards, replicas=args.replicas)
    request: Any = backend.request  # type: ignore[attr-defined]  # benchmark only
    index = args.index
    fields = read_index_profile(backend, index).df_fields()
    phrases = candidate_phrases(str(args.data / "expansions-hotpotqa.strong-llm.jsonl"))
    analysed = backend.analyze_terms(index, fields, phrases)
    terms = sorted({(f, t) for per in analysed for f, ts in per.items() for t in ts})

    def exact() -> dict[str, dict[str, int]]:
        stats = batch_term_statistics(backend, index, fields, phrases)
        return {
            e.text: {s.term: s.doc_freq for f in fields for s in e.fields[f]} for e in stats.texts
        }

    def analysis_only() -> None:
        backend.analyze_terms(index, fields, phrases)

    def counting_only() -> None:
        backend.live_doc_freqs(index, terms)

    def counting_msearch() -> None:
        bodies = [
            {"size": 0, "track_total_hits": True, "query": {"term": {f: t}}} for f, t in terms
        ]
        backend.msearch(index, bodies, params={"search_type": "query_then_fetch"})

    def one_shard_term_vectors() -> dict[str, dict[str, int]]:
        docs = [
            {
                "doc": {"title": p, "text": p},
                "fields": fields,
                "term_statistics": True,
                "field_statistics": True,
                "positions": False,
                "offsets": False,
            }
            for p in phrases
        ]
        raw = request("POST", f"/{index}/_mtermvectors", body={"docs": docs})
        return {
            p: {
                term: int(s.get("doc_freq", 0))
                for f in fields
                for term, s in d.get("term_vectors", {}).get(f, {}).get("terms", {}).items()
            }
            for p, d in zip(phrases, raw["docs"], strict=True)
        }

    def sira_bounds() -> dict[str, dict[str, int]]:
        stats = grounding_term_statistics(backend, index, fields, phrases, max_age_s=3600)
        assert stats.route == "term_statistics", stats.route
        return {
            e.text: {s.term: s.doc_freq for f in fields for s in e.fields[f]} for e in stats.texts
        }

    def sync_bounds() -> None:
        assert term_doc_freq_bounds(backend, index, fields, phrases) is not None

    def count_per_phrase() -> None:
        for p in phrases:
            query = {"multi_match": {"query": p, "type": "phrase", "fields": ["title", "text"]}}
            backend.count(index, query)

    routes = {
        "exact: analysis + live counts (2 trips)": exact,
        "  analysis alone (1 trip)": analysis_only,
        "  live counts alone (1 trip)": counting_only,
        "counting by _msearch (1 trip)": counting_msearch,
        "one-shard term vectors (1 trip)": one_shard_term_vectors,
        f"_count per phrase ({len(phrases)} trips)": count_per_phrase,
        "SIRA bounds (1 trip)": sira_bounds,
        "sync bounds (analysis + 1 trip)": sync_bounds,
    }
    for fn in routes.values():  # warm caches and connections
        fn()
    timings: dict[str, list[float]] = {name: [] for name in routes}
    for _ in range(args.rounds):
        for name, fn in routes.items():  # interleaved: every route sees the same conditions
            start = time.perf_counter()
            fn()
            timings[name].append((time.perf_counter() - start) * 1000)
    truth, shard_local = exact(), one_shard_term_vectors()
    wrong = sum(
        any(shard_local[p].get(term) != df for term, df in truth[p].items()) for p in phrases
    )
    bounded = sira_bounds()
    bounds_wrong = sum(bounded[p] != truth[p] for p in phrases)
    if args.json:
        report = {
            name: {"p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95)}
            for name, v in timings.items()
        }
        print(json.dumps({"routes": report, "bounds_wrong": bounds_wrong}))
        return
    (settings,) = backend.index_settings(index).values()
    print(
        f"{backend.info.engine} {backend.info.version}, index {index} "
        f"({settings['number_of_shards']} shards), {len(phrases)} phrases, {len(fields)} fields "
        f"({len(terms)} distinct terms), {args.rounds} rounds"
    )
    print(f"{'route':42s} {'p50 ms':>9s} {'p95 ms':>9s}")
    for name, values in timings.items():
        print(f"{name:42s} {percentile(values, 50):9.2f} {percentile(values, 95):9.2f}")
    print(f"phrases whose DF the one-shard route gets wrong: {wrong} of {len(phrases)}")
    print(f"phrases whose DF SIRA's bounds route gets wrong: {bounds_wrong} of {len(phrases)}")


def compare(args: argparse.Namespace) -> None:
    """This script against ``--compare-with``'s code and this checkout's, side by side."""
    before, after = run_pairs(Path(__file__), forwarded_args(), args.compare_with, args.pairs)
    routes = list(after[0]["routes"])
    rows = [(f"{name} p50", _p50(name)) for name in routes]
    print(
        f"df_lookup, {args.url or args.engine}, before = {args.compare_with}, after = this checkout"
    )
    print("\n".join(side_by_side(rows, before, after)))
    wrong = [(r["bounds_wrong"], a["bounds_wrong"]) for r, a in zip(before, after, strict=True)]
    print(f"phrases whose DF SIRA's bounds route gets wrong (before, after) per run: {wrong}")


def _p50(route: str) -> Callable[[Any], float]:
    return lambda run: float(run["routes"][route]["p50_ms"])


if __name__ == "__main__":
    main()

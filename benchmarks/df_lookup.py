"""DF look-up cost for 30 candidate phrases: one batched term-statistics request
(``_mtermvectors`` with artificial documents) versus one ``_count`` request per phrase.

    python benchmarks/df_lookup.py [--url URL] [--engine opensearch|elasticsearch] [--rounds 30]

Both run in the same process against the same index; the number printed is wall time per
full look-up of all 30 phrases (median and p95 over rounds) and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from _cluster import add_cluster_args, wikimh_backend

from sira_seek.fields import CONTENTS


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
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    backend = wikimh_backend(args)
    phrases = candidate_phrases(str(args.data / "expansions-hotpotqa.strong-llm.jsonl"))

    def batched() -> None:
        backend.term_statistics(args.index, CONTENTS, phrases)

    def per_phrase() -> None:
        for p in phrases:
            backend.count(args.index, {"match_phrase": {CONTENTS: p}})

    timings: dict[str, list[float]] = {
        "batched _mtermvectors (1 request)": [],
        "naive _count (30 requests)": [],
    }
    batched(), per_phrase()  # warm caches and connections
    for _ in range(args.rounds):
        for name, fn in zip(timings, (batched, per_phrase), strict=True):
            start = time.perf_counter()
            fn()
            timings[name].append((time.perf_counter() - start) * 1000)
    print(
        f"{backend.info.engine} {backend.info.version}, index {args.index}, "
        f"{len(phrases)} phrases, {args.rounds} rounds"
    )
    print(f"{'method':36s} {'p50 ms':>9s} {'p95 ms':>9s}")
    p50s = []
    for name, values in timings.items():
        values.sort()
        p50, p95 = statistics.median(values), values[int(0.95 * (len(values) - 1))]
        p50s.append(p50)
        print(f"{name:36s} {p50:9.2f} {p95:9.2f}")
    print(f"ratio naive/batched (p50): {p50s[1] / p50s[0]:.1f}x")


if __name__ == "__main__":
    main()

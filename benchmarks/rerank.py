"""SIRA's rerank (§3.1) on wikimh / HotpotQA with the embedded CPU model: BM25 and SIRA (the
shared strong-LLM query expansions), each without and with an LLM rerank of the top 10 by
relevance to the query, side by side in one process.

    python benchmarks/rerank.py [--url URL] [--engine opensearch|elasticsearch]
        [--data PATH/wikimh] [--llm llamacpp:gemma3-270m] [--rerank 10] [--sample 25]
        [--seed 0] [--threads 2]

The rerank is the product's: ``sira_seek.sira.evaluation.rerank_run``, what
``sira-seek eval retrieval --rerank N`` runs on every query's run before scoring (the same
``LLMReranker`` and prompt as ``sira-seek search --rerank N``). One model is loaded once and
warmed up before any timing; the response cache is off (``SIRA_SEEK_LLM_CACHE=false``), so
every rerank call is a real one and the two methods' shared documents are read twice.
Seconds per query are wall time: retrieval (batched, as ``eval retrieval``) plus the rerank.

The CPU model takes seconds per call and a rerank of the top 10 is 10 calls per query, so by
default a random sample of the 100 questions is measured (``--sample``, drawn with ``--seed``
and printed); ``--sample 0`` runs all of them. The rows without a rerank are also printed on
all 100 questions, to show how the sample compares.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

from _cluster import add_cluster_args, wikimh_backend

from sira_seek.backend import SearchBackend
from sira_seek.corpus import Query, read_qrels, read_queries
from sira_seek.metrics.retrieval import Run, evaluate_run
from sira_seek.sira.evaluation import bm25_run, rerank_run, sira_run
from sira_seek.sira.expansions import QueryExpander
from sira_seek.sira.rerank import LLMReranker
from sira_seek.sira.results import SiraHit
from sira_seek.workflows.sira_setup import choose_expander, choose_reranker

METRICS = ("ndcg@10", "recall@10")


def sample(queries: list[Query], size: int, seed: int) -> list[Query]:
    """``size`` queries drawn with ``seed``, in file order (all of them when ``size`` is 0)."""
    if size <= 0 or size >= len(queries):
        return list(queries)
    chosen = {q.id for q in random.Random(seed).sample(queries, size)}
    return [q for q in queries if q.id in chosen]


def retrieve(
    backend: SearchBackend, index: str, queries: list[Query], expander: QueryExpander | None
) -> tuple[Run, float]:
    """The method's top 100 per query (as ``eval retrieval`` batches it) and its seconds."""
    started = time.perf_counter()
    if expander is None:
        run = bm25_run(backend, index, queries)
    else:
        run = sira_run(backend, index, queries, expander=expander)
    return run, time.perf_counter() - started


def warm_up(reranker: LLMReranker) -> None:
    """One call, untimed: the model loads on its first request."""
    hit = SiraHit(id="w", score=1.0, bm25_rank=1)
    reranker.rerank("warm-up", [hit], {"w": ("Warm-up", "A short text.")}, top_n=1)


def rows_for(
    backend: SearchBackend,
    index: str,
    queries: list[Query],
    qrels: dict[str, dict[str, int]],
    expander: QueryExpander,
    reranker: LLMReranker,
    depth: int,
) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    for name, exp in (("bm25", None), ("sira (strong expansions)", expander)):
        run, seconds = retrieve(backend, index, queries, exp)
        rows[name] = {**evaluate_run(run, qrels), "s/query": seconds / len(queries)}
        started = time.perf_counter()
        done = rerank_run(backend, index, queries, run, reranker, top_n=depth)
        seconds += time.perf_counter() - started
        rows[f"{name} + rerank {depth}"] = {
            **evaluate_run(done.run, qrels),
            "s/query": seconds / len(queries),
            "calls": done.calls,
            "unusable": done.unusable,
        }
        for note in done.notes:
            print(f"  note ({name} + rerank {depth}): {note}")
    return rows


def table(title: str, rows: dict[str, dict[str, float]]) -> str:
    head = f"{'run':<36}" + "".join(f"{m:>11}" for m in METRICS) + f"{'s/query':>10}"
    lines = [title, head + f"{'LLM calls (unusable)':>24}"]
    for name, row in rows.items():
        cells = "".join(f"{row[m]:>11.4f}" for m in METRICS)
        calls = f"{row['calls']:.0f} ({row['unusable']:.0f})" if "calls" in row else "-"
        lines.append(f"{name:<36}{cells}{row['s/query']:>10.2f}{calls:>24}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_cluster_args(parser)
    parser.add_argument("--llm", default="llamacpp:gemma3-270m", help="the reranking model")
    parser.add_argument("--rerank", type=int, default=10, help="rerank depth N")
    parser.add_argument("--sample", type=int, default=25, help="questions measured (0: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    args = parser.parse_args()
    os.environ["SIRA_SEEK_LLM_CACHE"] = "false"
    os.environ.setdefault("SIRA_SEEK_LLM_N_THREADS", str(args.threads))
    data: Path = args.data
    backend = wikimh_backend(args)
    every = read_queries(data / "queries-hotpotqa.jsonl")
    qrels = read_qrels(data / "qrels-hotpotqa.tsv")
    judged = [q for q in every if q.id in qrels]
    queries = sample(judged, args.sample, args.seed)
    expander = choose_expander("sira", expansions=data / "expansions-hotpotqa.strong-llm.jsonl")
    assert expander is not None
    reranker = choose_reranker(args.llm, args.rerank)
    assert reranker is not None
    print(f"{backend.info.engine} {backend.info.version}, index {args.index}")
    print(
        f"sample: {len(queries)} of {len(judged)} questions, seed {args.seed}; rerank "
        f"{args.rerank} with {args.llm} ({os.environ['SIRA_SEEK_LLM_N_THREADS']} threads, "
        "response cache off)"
    )
    print("ids: " + " ".join(q.id.removeprefix("hotpotqa-") for q in queries))
    started = time.perf_counter()
    try:
        warm_up(reranker)
        print(f"model loaded and warmed up in {time.perf_counter() - started:.1f} s")
        rows = rows_for(backend, args.index, queries, qrels, expander, reranker, args.rerank)
    finally:
        reranker.close()
    title = f"wikimh / HotpotQA, {len(queries)} questions (seed {args.seed})"
    print(table(title, rows))
    if len(queries) < len(judged):
        full = {}
        for name, exp in (("bm25", None), ("sira (strong expansions)", expander)):
            run, seconds = retrieve(backend, args.index, judged, exp)
            full[name] = {**evaluate_run(run, qrels), "s/query": seconds / len(judged)}
        print()
        print(table(f"the same without a rerank, all {len(judged)} questions", full))
    expander.close()
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

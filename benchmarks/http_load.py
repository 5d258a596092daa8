"""Load on ``sira-seek serve``: requests/s and p50/p95 latency of ``POST /search`` at 1, 8 and
32 concurrent clients, against the same SIRA searches run directly on the cluster.

Both sides run the 100 wikimh/HotpotQA questions with the shared strong-LLM expansions
(precomputed, so no LLM is timed): the HTTP side posts them to a ``sira-seek serve`` process
this script starts on a free loopback port (httpx async clients); the direct side calls the
library (``SiraSeek.search``, what the endpoint calls) from as many threads as there are
clients. Every API answer is checked against the direct hits, so the table compares the same
work. Each level runs ``--rounds`` API/direct pairs (default 3), alternating which side goes
first, and reports each side's medians. Bounded: ``--requests`` per level and round (default
200), loopback only.

    python benchmarks/http_load.py --url http://127.0.0.1:9410 --engine opensearch

The index (default ``sira-bench-wikimh``) is ingested from the wikimh data when missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from _cluster import add_cluster_args, wikimh_backend

from sira_seek.client import SiraSeek
from sira_seek.corpus import read_queries
from sira_seek.stats import percentile

LEVELS = (1, 8, 32)
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def start_server(url: str, index: str, workers: int = 1) -> tuple[subprocess.Popen[bytes], str]:
    """``sira-seek serve`` on a free loopback port with ``workers`` processes, without access
    log (it would be timed)."""
    port = free_port()
    exe = Path(sys.executable).with_name("sira-seek")
    cmd = [str(exe), "serve", "--host", LOOPBACK, "--port", str(port), "--url", url]
    proc = subprocess.Popen(
        [*cmd, "--index", index, "--no-access-log", "--workers", str(workers)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    base = f"http://{LOOPBACK}:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("sira-seek serve did not become healthy within 60 s")


def summarise(latencies_ms: list[float], wall_s: float) -> dict[str, float]:
    return {
        "rps": round(len(latencies_ms) / wall_s, 1),
        "p50_ms": round(percentile(latencies_ms, 50), 1),
        "p95_ms": round(percentile(latencies_ms, 95), 1),
        "n": len(latencies_ms),
    }


def median_row(rows: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over the rounds (``statistics.median``)."""
    return {key: round(statistics.median(r[key] for r in rows), 1) for key in rows[0]}


async def load_http(
    base: str, bodies: list[dict[str, Any]], clients: int, expected: list[list[str]]
) -> dict[str, float]:
    """``clients`` workers, each with its own connection, post until ``bodies`` run out."""
    latencies: list[float] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(bodies)):
        queue.put_nowait(i)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:

        async def worker() -> None:
            while not queue.empty():
                i = queue.get_nowait()
                started = time.perf_counter()
                res = await http.post("/search", json=bodies[i])
                latencies.append((time.perf_counter() - started) * 1000)
                res.raise_for_status()
                ids = [h["_id"] for h in res.json()["hits"]]
                if ids != expected[i]:
                    raise SystemExit(f"API hits differ from the direct ones for {bodies[i]}")

        wall = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return summarise(latencies, time.perf_counter() - wall)


def load_direct(call: Callable[[int], list[str]], n: int, clients: int) -> dict[str, float]:
    latencies: list[float] = []

    def one(i: int) -> None:
        started = time.perf_counter()
        call(i)
        latencies.append((time.perf_counter() - started) * 1000)

    wall = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(n)))
    return summarise(latencies, time.perf_counter() - wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_cluster_args(parser)
    parser.add_argument("--requests", type=int, default=200, help="per concurrency level")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=1, help="serve --workers")
    parser.add_argument(
        "--rounds", type=int, default=3, help="API/direct pairs per level, order alternating"
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args()
    backend = wikimh_backend(args)
    sk = SiraSeek(backend)
    queries = read_queries(args.data / "queries-hotpotqa.jsonl")
    path = args.data / "expansions-hotpotqa.strong-llm.jsonl"
    table = {r["_id"]: r["keywords"] for r in map(json.loads, path.read_text().splitlines())}
    bodies = [
        {"index": args.index, "query": q.text, "expansions": table[q.id], "k": args.k}
        for q in (queries[i % len(queries)] for i in range(args.requests))
    ]

    def direct(i: int) -> list[str]:
        body = bodies[i]
        found = sk.search(
            body["query"],
            index=args.index,
            method="sira",
            expansions={"q": body["expansions"]},
            query_id="q",
            k=args.k,
        )
        return [h.id for h in found.hits]

    expected = [direct(i) for i in range(min(len(bodies), len(queries)))]  # also warms up
    expected = [expected[i % len(expected)] for i in range(len(bodies))]
    proc, base = start_server(backend.info.url, args.index, args.workers)
    rows: list[dict[str, Any]] = []
    try:
        asyncio.run(load_http(base, bodies[:20], 4, expected[:20]))  # warm-up
        for clients in LEVELS:
            # Rounds alternate which side goes first (the node's caches and JIT favour the
            # second); each side's figures are the medians over the rounds.
            apis, libs = [], []
            for r in range(args.rounds):
                if r % 2 == 0:
                    apis.append(asyncio.run(load_http(base, bodies, clients, expected)))
                    libs.append(load_direct(direct, len(bodies), clients))
                else:
                    libs.append(load_direct(direct, len(bodies), clients))
                    apis.append(asyncio.run(load_http(base, bodies, clients, expected)))
            api, lib = median_row(apis), median_row(libs)
            rows.append({"clients": clients, "api": api, "direct": lib})
            print(f"clients={clients}: api {api} direct {lib}", file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    info = backend.info
    print(
        f"\n{info.engine} {info.version}, index {args.index}, {len(bodies)} requests per "
        f"level, median of {args.rounds} rounds (SIRA, strong-LLM expansions, k={args.k}), "
        f"loopback, serve --workers {args.workers}\n"
    )
    print("| clients | API req/s | API p50 / p95 ms | direct req/s | direct p50 / p95 ms |")
    print("|---|---|---|---|---|")
    for row in rows:
        a, d = row["api"], row["direct"]
        print(
            f"| {row['clients']} | {a['rps']} | {a['p50_ms']} / {a['p95_ms']} | "
            f"{d['rps']} | {d['p50_ms']} / {d['p95_ms']} |"
        )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()

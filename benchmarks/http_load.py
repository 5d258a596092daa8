"""Load on ``sira-seek serve``: requests/s and p50/p95 latency of ``POST /search`` at 1, 8 and
32 concurrent clients, against the same SIRA searches run directly on the cluster.

Both sides run the 100 wikimh/HotpotQA questions with the shared strong-LLM expansions
(precomputed, so no LLM is timed): the HTTP side posts them to a ``sira-seek serve`` process
this script starts on a free loopback port (lean kept-alive clients parsing with httptools,
or ``--client aiohttp|httpx``: see ``KeptAliveConnection``); the direct side calls the
library (``SiraSeek.search``, what the endpoint calls) from as many threads as there are
clients. Every API answer is checked against the direct hits, so the
table compares the same hits; both sides keep the index's profile between searches for
serve's default ``--profile-max-age``, so both send the same engine requests. Each level
runs ``--rounds`` API/direct pairs (default 9), alternating which side goes first, and reports
each side's medians; the ratio is the median of the pairs' own ratios (each pair's two sides
ran seconds apart, so the machine's speed, which on a VM moves by 2x within minutes, cancels
out of it) with the lowest and highest pair beside it. Bounded: ``--requests`` per level and
round (default 200), loopback only.

Beside the times, the CPU each side spends per request, which other load on a shared machine
moves less than wall time (it still moves it: cores and caches are shared): the ``serve``
process's (and its workers') user+system time per API request, this process's per direct
search (the library's work; the API side's clients' CPU is printed apart), and the node's per
request on either side (read from ``/proc``: Linux; the node is the local process listening on
the URL's port, ``n/a`` when there is none).

    python benchmarks/http_load.py --url http://127.0.0.1:9410 --engine opensearch

The index (default ``sira-bench-wikimh``) is ingested from the wikimh data when missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, TypeVar, cast
from urllib.parse import urlsplit

import httpx
import orjson
from _cluster import add_cluster_args, wikimh_backend

from sira_seek.client import SiraSeek
from sira_seek.corpus import read_queries
from sira_seek.gc_settings import settle_server_heap
from sira_seek.service.settings import DEFAULT_PROFILE_MAX_AGE_S
from sira_seek.stats import percentile

LEVELS = (1, 8, 32)
LOOPBACK = "127.0.0.1"


T = TypeVar("T")
POOL_FULL = "Connection pool is full"


class PoolFullCounter(logging.Handler):
    """Counts urllib3's "Connection pool is full" warnings of the direct side."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += POOL_FULL in record.getMessage()


JSON = {"Content-Type": "application/json"}


def run_loop(work: Coroutine[Any, Any, T]) -> T:
    """``work`` in an event loop of uvloop's (installed with the serve extra, which this
    script needs anyway), the loop ``serve`` itself runs on: the clients share the cores
    with the server, and asyncio's own loop costs them more CPU per request."""
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(work)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def start_server(
    url: str, index: str, log: IO[bytes], workers: int = 1
) -> tuple[subprocess.Popen[bytes], str]:
    """``sira-seek serve`` on a free loopback port with ``workers`` processes, without access
    log (it would be timed); its stderr goes to ``log``, read for warnings afterwards."""
    port = free_port()
    exe = Path(sys.executable).with_name("sira-seek")
    cmd = [str(exe), "serve", "--host", LOOPBACK, "--port", str(port), "--url", url]
    proc = subprocess.Popen(
        [*cmd, "--index", index, "--no-access-log", "--workers", str(workers)],
        stdout=subprocess.DEVNULL,
        stderr=log,
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


TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(pid: int) -> list[str] | None:
    try:
        # The command name (field 2) may hold spaces: split after its closing parenthesis.
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def tree_cpu_s(root: int) -> float:
    """User+system CPU seconds of ``root`` and its living descendants (``serve --workers``
    forks workers under a supervisor), from ``/proc/PID/stat``."""
    parent: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is not None:
            parent[int(entry.name)] = int(fields[1])
            times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / TICKS_PER_S
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [p for p, pp in parent.items() if pp == pid and p not in tree]
        tree.update(children)
        frontier += children
    return sum(times.get(pid, 0.0) for pid in tree)


def listener_pid(port: int) -> int | None:
    """The local process listening on TCP ``port`` (the node), or None."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{cols[9]}]")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) in inodes:
                    return int(entry.name)
            except OSError:
                continue
    return None


class CpuMeter:
    """CPU milliseconds per request of this process, the server and the node, over one load."""

    def __init__(self, server_pid: int | None, node_pid: int | None) -> None:
        self.server_pid = server_pid
        self.node_pid = node_pid

    def snapshot(self) -> tuple[float, float | None, float | None]:
        return (
            time.process_time(),
            tree_cpu_s(self.server_pid) if self.server_pid else None,
            tree_cpu_s(self.node_pid) if self.node_pid else None,
        )

    @staticmethod
    def per_request(
        before: tuple[float, float | None, float | None],
        after: tuple[float, float | None, float | None],
        n: int,
    ) -> dict[str, float]:
        names = ("self_cpu_ms", "server_cpu_ms", "node_cpu_ms")
        return {
            name: round((b - a) * 1000 / n, 2)
            for name, a, b in zip(names, before, after, strict=True)
            if a is not None and b is not None
        }


def summarise(latencies_ms: list[float], wall_s: float) -> dict[str, float]:
    return {
        "rps": round(len(latencies_ms) / wall_s, 1),
        "p50_ms": round(percentile(latencies_ms, 50), 1),
        "p95_ms": round(percentile(latencies_ms, 95), 1),
        "n": len(latencies_ms),
    }


def median_row(rows: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over the rounds (``statistics.median``)."""
    return {key: round(statistics.median(r[key] for r in rows), 2) for key in rows[0]}


def cpu_cell(row: dict[str, float], key: str) -> str:
    return f"{row[key]:.2f}" if key in row else "n/a"


class KeptAliveConnection(asyncio.Protocol):
    """One kept-alive HTTP/1.1 connection of the ``raw`` load generator: it writes requests
    encoded beforehand and parses the answers with httptools, the C parser ``serve`` itself
    runs on (uvicorn's), installed with the serve extra.

    Why not a client library: the load generator shares the two cores with the server and
    the node, so every millisecond it spends is taken from the API side's throughput.
    aiohttp's client spent 0.50-0.87 ms of CPU per request here (this script's CPU columns,
    2026-12-03), httpx's 1.9-4.5; this one parses the same answers for less (the table's
    "API clients" column says how much). ``--client aiohttp`` or ``httpx`` measure with them.
    """

    def __init__(self) -> None:
        import httptools

        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._body: list[bytes] = []
        self._answer: asyncio.Future[tuple[int, bytes]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast("asyncio.Transport", transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self._parser.feed_data(data)

    def on_body(self, body: bytes) -> None:  # httptools callback
        self._body.append(body)

    def on_message_complete(self) -> None:  # httptools callback
        if self._answer is not None and not self._answer.done():
            self._answer.set_result((self._parser.get_status_code(), b"".join(self._body)))

    def connection_lost(self, exc: Exception | None) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(exc or ConnectionError("serve closed the connection"))

    async def exchange(self, request: bytes) -> tuple[int, bytes]:
        """Send one encoded request; its status and body."""
        assert self._transport is not None
        self._body = []
        self._answer = asyncio.get_running_loop().create_future()
        self._transport.write(request)
        return await self._answer

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


def encoded_post(netloc: str, path: str, body: bytes) -> bytes:
    """A complete HTTP/1.1 POST with a JSON ``body``, as bytes on the wire."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


async def load_http(
    base: str,
    bodies: list[dict[str, Any]],
    clients: int,
    expected: list[list[str]],
    client: str = "raw",
) -> dict[str, float]:
    """``clients`` workers, each with its own connection, post until ``bodies`` run out.

    The clients share the machine with the server and the node, so their own CPU is taken
    from the API's side (its own column in the table): bodies are encoded once beforehand,
    answers read with orjson, in an event loop of uvloop's (``run_loop``); the default
    ``raw`` clients are ``KeptAliveConnection``s, ``--client aiohttp`` or ``httpx`` use
    those libraries' async clients instead. Every answer is checked against the direct hits."""
    latencies: list[float] = []
    payloads = [orjson.dumps(body) for body in bodies]
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(bodies)):
        queue.put_nowait(i)

    def check(i: int, status: int, answer: bytes) -> None:
        if status != 200:
            raise SystemExit(f"serve answered {status} to {bodies[i]}: {answer[:500]!r}")
        ids = [h["_id"] for h in orjson.loads(answer)["hits"]]
        if ids != expected[i]:
            raise SystemExit(f"API hits differ from the direct ones for {bodies[i]}")

    if client == "raw":
        where = urlsplit(base)
        host, port = where.hostname or LOOPBACK, where.port or 80
        requests = [encoded_post(where.netloc, "/search", payload) for payload in payloads]
        loop = asyncio.get_running_loop()

        async def raw_worker() -> None:
            _, conn = await loop.create_connection(KeptAliveConnection, host, port)
            try:
                while not queue.empty():
                    i = queue.get_nowait()
                    started = time.perf_counter()
                    status, answer = await conn.exchange(requests[i])
                    latencies.append((time.perf_counter() - started) * 1000)
                    check(i, status, answer)
            finally:
                conn.close()

        wall = time.perf_counter()
        await asyncio.gather(*(raw_worker() for _ in range(clients)))
        return summarise(latencies, time.perf_counter() - wall)

    if client == "httpx":
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:

            async def worker() -> None:
                while not queue.empty():
                    i = queue.get_nowait()
                    started = time.perf_counter()
                    res = await http.post("/search", content=payloads[i], headers=JSON)
                    latencies.append((time.perf_counter() - started) * 1000)
                    check(i, res.status_code, res.content)

            wall = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(clients)))
            return summarise(latencies, time.perf_counter() - wall)

    import aiohttp

    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(base, connector=connector, timeout=timeout) as session:

        async def aio_worker() -> None:
            while not queue.empty():
                i = queue.get_nowait()
                started = time.perf_counter()
                async with session.post("/search", data=payloads[i], headers=JSON) as res:
                    answer = await res.read()
                latencies.append((time.perf_counter() - started) * 1000)
                check(i, res.status, answer)

        wall = time.perf_counter()
        await asyncio.gather(*(aio_worker() for _ in range(clients)))
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
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="serve --workers (default: one per core, what the HTTP tutorial recommends)",
    )
    parser.add_argument(
        "--rounds", type=int, default=9, help="API/direct pairs per level, order alternating"
    )
    parser.add_argument(
        "--client",
        choices=["raw", "aiohttp", "httpx"],
        default="raw",
        help="the API side's HTTP client (its CPU is printed: it shares the cores)",
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args()
    backend = wikimh_backend(args)
    sk = SiraSeek(backend, profile_max_age=DEFAULT_PROFILE_MAX_AGE_S)  # as serve's
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
    # The collector settings `serve` has (sira_seek/gc_settings.py), so that the two sides
    # differ only in the HTTP service: the direct side is 15-25% cheaper this way too.
    settle_server_heap()
    expected = [expected[i % len(expected)] for i in range(len(bodies))]
    pool_full = PoolFullCounter()
    logging.getLogger().addHandler(pool_full)
    serve_log = tempfile.TemporaryFile()  # noqa: SIM115 (read after serve stops, gone at exit)
    proc, base = start_server(backend.info.url, args.index, serve_log, args.workers)
    node_port = urlsplit(backend.info.url).port
    node_pid = listener_pid(node_port) if node_port else None
    api_meter, lib_meter = CpuMeter(proc.pid, node_pid), CpuMeter(None, node_pid)
    rows: list[dict[str, Any]] = []

    def api_round(clients: int) -> dict[str, float]:
        before = api_meter.snapshot()
        row = run_loop(load_http(base, bodies, clients, expected, args.client))
        return row | CpuMeter.per_request(before, api_meter.snapshot(), len(bodies))

    def direct_round(clients: int) -> dict[str, float]:
        before = lib_meter.snapshot()
        row = load_direct(direct, len(bodies), clients)
        return row | CpuMeter.per_request(before, lib_meter.snapshot(), len(bodies))

    try:
        run_loop(load_http(base, bodies[:20], 4, expected[:20], args.client))  # warm-up
        for clients in LEVELS:
            # Rounds alternate which side goes first (the node's caches and JIT favour the
            # second); each side's figures are the medians over the rounds.
            apis: list[dict[str, float]] = []
            libs: list[dict[str, float]] = []
            for r in range(args.rounds):
                if r % 2 == 0:
                    apis.append(api_round(clients))
                    libs.append(direct_round(clients))
                else:
                    libs.append(direct_round(clients))
                    apis.append(api_round(clients))
            api, lib = median_row(apis), median_row(libs)
            ratios = sorted(a["rps"] / d["rps"] for a, d in zip(apis, libs, strict=True))
            rows.append({"clients": clients, "api": api, "direct": lib, "ratios": ratios})
            print(f"clients={clients}: api {api} direct {lib}", file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    serve_log.seek(0)
    served = serve_log.read().decode("utf-8", "replace").splitlines()
    info = backend.info
    print(
        f"\n{info.engine} {info.version}, index {args.index}, {len(bodies)} requests per "
        f"level, median of {args.rounds} rounds (SIRA, strong-LLM expansions, k={args.k}), "
        f"loopback, serve --workers {args.workers}, {args.client} clients; API / direct: the "
        f"median of the rounds' ratios, lowest-highest beside it\n"
    )
    print(
        "| clients | API req/s | API p50 / p95 ms | direct req/s | direct p50 / p95 ms | "
        "API / direct | rounds |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        a, d, ratios = row["api"], row["direct"], row["ratios"]
        print(
            f"| {row['clients']} | {a['rps']:.1f} | {a['p50_ms']:.1f} / {a['p95_ms']:.1f} | "
            f"{d['rps']:.1f} | {d['p50_ms']:.1f} / {d['p95_ms']:.1f} | "
            f"{statistics.median(ratios):.2f}x | {ratios[0]:.2f}-{ratios[-1]:.2f} |"
        )
    print(
        "\nCPU ms per request (user+system, medians): the serve process(es) per API request, "
        "this process per direct search (the library), the API clients, the node on each side\n"
    )
    print("| clients | serve | direct (library) | API clients | node, API | node, direct |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        a, d = row["api"], row["direct"]
        print(
            f"| {row['clients']} | {cpu_cell(a, 'server_cpu_ms')} | {cpu_cell(d, 'self_cpu_ms')} "
            f"| {cpu_cell(a, 'self_cpu_ms')} | {cpu_cell(a, 'node_cpu_ms')} | "
            f"{cpu_cell(d, 'node_cpu_ms')} |"
        )
    print(
        f"\nErrors: none (every answer checked, any failure stops the run). Connection-pool-full "
        f"warnings: serve {sum(POOL_FULL in line for line in served)}, this process "
        f"{pool_full.count}; serve's log lines at ERROR or with a traceback: "
        f"{sum(('ERROR' in line) or ('Traceback' in line) for line in served)}"
    )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()

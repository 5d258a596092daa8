"""LLM client throughput against one local llama.cpp server: 1 request in flight vs N, and the
response cache's speed-up on a repeated run; with ``--vllm``, vLLM against llama.cpp in-process.

    python benchmarks/llm_throughput.py                 # starts llama_cpp.server with Gemma 270M
    python benchmarks/llm_throughput.py --url http://127.0.0.1:8000/v1 --model NAME
    python benchmarks/llm_throughput.py --servers 2     # round-robin over 2 local servers
    python benchmarks/llm_throughput.py --vllm          # vLLM (prefix caching on, then off) vs
                                                        # llama.cpp in-process, 1/8/32 in flight
    python benchmarks/llm_throughput.py --vllm --url http://127.0.0.1:8011/v1   # a running vLLM

llama-cpp-python's server answers one request at a time (no continuous batching), so against
one such server the N-in-flight ratio stays near 1; against vLLM it is where throughput comes
from. ``--servers`` shows the client spreading load over several endpoints instead.

The workload is the real one: few-shot keyword prompts decoded under the keywords JSON schema.
Each phase uses its own distinct texts, so neither the response cache nor the server's prompt
cache answers for another phase. Needs the cpu extra (sira-seek llm install cpu) unless --url.

``--vllm`` measures what sira-sync sends: the corpus-side enrichment prompt (few-shot completion
form, the one a base model answers) over wikimh paragraphs, under the document JSON schema. Every
such prompt starts with the same instructions and worked examples, which is what vLLM's prefix
caching reuses, so the benchmark starts its own vLLM server twice (``--enable-prefix-caching``,
then ``--no-enable-prefix-caching``; one at a time, each stopped before the next) and runs the
same documents at 1, 8 and 32 requests in flight on both; the prefix-cache hit rate is read from
the server's ``/metrics``. The llama.cpp rows come from the embedded CPU default
(``llamacpp:gemma3-270m``, in this process, while no vLLM server runs) on the same documents at
1 and 8 in flight. Phases never share documents, so no prompt is cached whole. Needs vLLM's
environment (``sira-seek llm install vllm``, or ``SIRA_SEEK_VLLM_PYTHON``) unless --url.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path

from sira_seek.llm.cache import CachingLLMClient, ResponseCache
from sira_seek.llm.client import LLMClient
from sira_seek.llm.openai_http import HTTPClientSettings, OpenAICompatibleClient
from sira_seek.llm.prompts import keyword_request
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMResponse
from sira_seek.sync.document_prompt import document_request

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikimh" / "corpus.jsonl"

SUBJECTS = [
    "the Amazon river", "photosynthesis", "the Treaty of Westphalia", "Python asyncio",
    "vaccines", "the Great Barrier Reef", "inflation", "Mount Everest", "BM25 ranking",
    "Jupiter's Great Red Spot", "the printing press", "plate tectonics", "the Roman Senate",
    "neural networks", "the water cycle", "Antarctic ice sheets",
]  # fmt: skip


@dataclass
class PhaseResult:
    name: str
    in_flight: int
    requests: int
    errors: int
    seconds: float
    completion_tokens: int

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.seconds

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.seconds


def _requests(phase: str, count: int, max_tokens: int) -> list[LLMRequest]:
    return [
        keyword_request(
            f"A short note ({phase} {i}) about {SUBJECTS[i % len(SUBJECTS)]}.",
            max_tokens=max_tokens,
        )
        for i in range(count)
    ]


def _merge(parts: list[PhaseResult]) -> PhaseResult:
    return PhaseResult(
        name=parts[0].name,
        in_flight=parts[0].in_flight,
        requests=sum(p.requests for p in parts),
        errors=sum(p.errors for p in parts),
        seconds=sum(p.seconds for p in parts),
        completion_tokens=sum(p.completion_tokens for p in parts),
    )


async def _phase(
    name: str, client: LLMClient, requests: list[LLMRequest], in_flight: int
) -> PhaseResult:
    started = time.perf_counter()
    results = await client.generate_many(requests, in_flight)
    seconds = time.perf_counter() - started
    ok = [r for r in results if isinstance(r, LLMResponse)]
    return PhaseResult(
        name=name,
        in_flight=in_flight,
        requests=len(requests),
        errors=len(results) - len(ok),
        seconds=seconds,
        completion_tokens=sum(r.usage.completion_tokens for r in ok),
    )


async def run(args: argparse.Namespace, urls: list[str], model: str | None) -> dict[str, object]:
    settings = HTTPClientSettings(max_in_flight=max(args.in_flight, 1), read_timeout_s=600.0)
    http = OpenAICompatibleClient(endpoints=urls, model=model, settings=settings)
    with tempfile.TemporaryDirectory(prefix="sira-llm-bench-cache-") as cache_dir:
        cached = CachingLLMClient(http, ResponseCache(cache_dir))
        try:
            await http.generate(_requests("warm-up", 1, args.max_tokens)[0])
            # Alternate the two phases in rounds so load drifting on a shared machine hits both.
            serial_parts, parallel_parts = [], []
            per_round = max(1, args.requests // args.rounds)
            for r in range(args.rounds):
                serial_parts.append(
                    await _phase(
                        "1 in flight", http, _requests(f"serial{r}", per_round, args.max_tokens), 1
                    )
                )
                parallel_parts.append(
                    await _phase(
                        f"{args.in_flight} in flight",
                        http,
                        _requests(f"parallel{r}", per_round, args.max_tokens),
                        args.in_flight,
                    )
                )
            serial, parallel = _merge(serial_parts), _merge(parallel_parts)
            repeat = _requests("cache", args.requests, args.max_tokens)
            cold = await _phase("cache cold", cached, repeat, args.in_flight)
            warm = await _phase("cache warm (repeat)", cached, repeat, args.in_flight)
        finally:
            await http.aclose()
    phases = [serial, parallel, cold, warm]
    print(
        f"server(s) {', '.join(urls)} model {await http.model_name()}, "
        f"{args.requests} requests per phase"
    )
    print(f"{'phase':<22}{'in flight':>10}{'errors':>8}{'seconds':>10}{'req/s':>10}{'tok/s':>10}")
    for p in phases:
        print(
            f"{p.name:<22}{p.in_flight:>10}{p.errors:>8}{p.seconds:>10.2f}"
            f"{p.requests_per_s:>10.2f}{p.tokens_per_s:>10.1f}"
        )
    ratio = parallel.requests_per_s / serial.requests_per_s
    speedup = cold.seconds / warm.seconds
    print(f"throughput ratio, {args.in_flight} in flight / 1 in flight: {ratio:.2f}x (requests/s)")
    print(f"response cache speed-up on the repeated run: {speedup:.0f}x")
    return {
        "phases": [{**asdict(p), "requests_per_s": p.requests_per_s} for p in phases],
        "in_flight_ratio": ratio,
        "cache_speedup": speedup,
    }


# ---------------------------------------------------------------------------------------------
# --vllm: the enrichment workload on vLLM (prefix caching on / off) and llama.cpp in-process.


def _wikimh_texts(corpus: Path, count: int, seed: int) -> list[str]:
    """``count`` distinct wikimh paragraphs ("title. text", cut to sira-sync's default budget),
    drawn with ``seed`` so every backend sees the same documents."""
    with corpus.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    picked = random.Random(seed).sample(rows, count)
    return [f"{r.get('title', '')}. {r.get('text', '')}"[:4000] for r in picked]


def _document_requests(texts: list[str], max_tokens: int) -> list[LLMRequest]:
    return [
        document_request(text, style="completion", doc_id=f"bench-{i}", max_tokens=max_tokens)
        for i, text in enumerate(texts)
    ]


def _plan(in_flights: list[int], serial_requests: int, waves: int = 2) -> list[tuple[int, int]]:
    """(in flight, requests) per phase: one at a time gets ``serial_requests``; N in flight gets
    ``waves`` x N requests, so a batching server's phase measures full batches, not a ragged
    tail (llama.cpp in-process answers one at a time anyway: one wave shows it)."""
    return [(n, serial_requests if n == 1 else waves * n) for n in in_flights]


def _prefix_cache_counters(base_url: str) -> tuple[float, float] | None:
    """(queries, hits) of vLLM's prefix cache, in tokens, from its Prometheus ``/metrics``."""
    import httpx

    try:
        text = httpx.get(base_url.removesuffix("/v1") + "/metrics", timeout=10.0).text
    except httpx.HTTPError:
        return None
    totals = {"queries": 0.0, "hits": 0.0}
    for line in text.splitlines():
        match = re.match(r"vllm:prefix_cache_(queries|hits)(?:_total)?(?:\{[^}]*\})? (\S+)", line)
        if match:
            totals[match.group(1)] += float(match.group(2))
    return totals["queries"], totals["hits"]


async def _measure_backend(
    label: str,
    client: LLMClient,
    texts: list[str],
    plan: list[tuple[int, int]],
    max_tokens: int,
    metrics_url: str | None = None,
) -> list[dict[str, object]]:
    """Run each phase of ``plan`` on its own slice of ``texts``; one row per phase."""
    rows: list[dict[str, object]] = []
    await client.generate_many(_document_requests(texts[:1], max_tokens), 1)  # warm-up
    offset = 1
    for in_flight, count in plan:
        requests = _document_requests(texts[offset : offset + count], max_tokens)
        offset += count
        before = _prefix_cache_counters(metrics_url) if metrics_url else None
        result = await _phase(f"{label}", client, requests, in_flight)
        after = _prefix_cache_counters(metrics_url) if metrics_url else None
        hit_rate = None
        if before is not None and after is not None and after[0] > before[0]:
            hit_rate = (after[1] - before[1]) / (after[0] - before[0])
        row = {
            **asdict(result),
            "requests_per_s": result.requests_per_s,
            "tokens_per_s": result.tokens_per_s,
            "prefix_cache_hit_rate": hit_rate,
        }
        print(
            f"  {label:<34}{in_flight:>4} in flight {count:>3} req {result.errors:>2} err "
            f"{result.seconds:>8.1f}s {result.requests_per_s:>7.3f} req/s "
            f"{result.tokens_per_s:>7.1f} tok/s"
            + (f"  prefix-cache hits {hit_rate:.0%}" if hit_rate is not None else ""),
            flush=True,
        )
        rows.append(row)
    return rows


async def _vllm_rows(
    label: str, url: str, model: str | None, texts: list[str], args: argparse.Namespace
) -> list[dict[str, object]]:
    settings = HTTPClientSettings(max_in_flight=max(args.vllm_in_flight), read_timeout_s=900.0)
    http = OpenAICompatibleClient(endpoints=[url], model=model, settings=settings)
    try:
        return await _measure_backend(
            label, http, texts, _plan(args.vllm_in_flight, args.serial_requests),
            args.max_tokens, metrics_url=url,
        )  # fmt: skip
    finally:
        await http.aclose()


async def _llamacpp_rows(texts: list[str], args: argparse.Namespace) -> list[dict[str, object]]:
    from sira_seek.llm.factory import create_llm_client
    from sira_seek.llm.settings import LLMSettings
    from sira_seek.llm.spec import LlamaCppBackendSpec

    client = create_llm_client(
        LlamaCppBackendSpec(model="gemma3-270m"),
        settings=LLMSettings(n_threads=args.n_threads),
        use_cache=False,
    )
    try:
        return await _measure_backend(
            "llama.cpp in-process", client, texts,
            _plan(args.llamacpp_in_flight, args.serial_requests, waves=1), args.max_tokens,
        )  # fmt: skip
    finally:
        await client.aclose()


def run_vllm(args: argparse.Namespace) -> dict[str, object]:
    """vLLM rows (own servers, prefix caching on then off, or ``--url``) and llama.cpp rows."""
    plan = _plan(args.vllm_in_flight, args.serial_requests)
    needed = 1 + sum(count for _, count in plan)
    texts = _wikimh_texts(args.corpus, needed, args.seed)
    print(
        f"seed {args.seed}: {needed} wikimh documents, enrichment prompt (few-shot completion), "
        f"max_tokens {args.max_tokens}",
        flush=True,
    )
    rows: dict[str, list[dict[str, object]]] = {}
    if args.url:
        rows["vllm (as served)"] = asyncio.run(
            _vllm_rows("vLLM at --url", args.url, args.model, texts, args)
        )
    else:
        from sira_seek.llm.vllm_server import VllmServerProcess, resolve_model

        model_path, served = resolve_model("gemma3-270m")
        for prefix_caching in (True, False):
            label = f"vLLM, prefix caching {'on' if prefix_caching else 'off'}"
            server = VllmServerProcess(
                model=model_path,
                served_model_name=served,
                prefix_caching=prefix_caching,
                max_num_seqs=max(args.vllm_in_flight),
            )
            print(f"starting {' '.join(server.command())}", file=sys.stderr, flush=True)
            started = time.perf_counter()
            with server:
                ready_s = time.perf_counter() - started
                print(f"{label}: ready in {ready_s:.0f}s", flush=True)
                rows[label] = asyncio.run(_vllm_rows(label, server.base_url, served, texts, args))
                for row in rows[label]:
                    row["server_ready_s"] = round(ready_s, 1)
    if not args.no_llamacpp:
        rows["llama.cpp in-process"] = asyncio.run(_llamacpp_rows(texts, args))
    return {"seed": args.seed, "max_tokens": args.max_tokens, "backends": rows}


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--url", help="an existing OpenAI-compatible base URL (else start one)")
    parser.add_argument("--model", help="model name at --url (default: first listed)")
    parser.add_argument("--requests", type=int, default=16, help="requests per phase")
    parser.add_argument("--in-flight", type=int, default=8, help="N for the concurrent phase")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the two phases")
    parser.add_argument("--n-threads", type=int, default=2, help="llama.cpp threads in total")
    parser.add_argument("--servers", type=int, default=1, help="local servers to round-robin")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    vllm = parser.add_argument_group("--vllm: the enrichment workload, vLLM vs llama.cpp")
    vllm.add_argument("--vllm", action="store_true", help="vLLM (own servers or --url) mode")
    vllm.add_argument("--vllm-in-flight", type=_ints, default=[1, 8, 32], help="e.g. 1,8,32")
    vllm.add_argument("--llamacpp-in-flight", type=_ints, default=[1, 8], help="e.g. 1,8")
    vllm.add_argument("--serial-requests", type=int, default=6, help="requests at 1 in flight")
    vllm.add_argument("--no-llamacpp", action="store_true", help="skip the llama.cpp rows")
    vllm.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="wikimh corpus.jsonl")
    vllm.add_argument("--seed", type=int, default=17, help="which documents (printed)")
    args = parser.parse_args()
    if args.vllm:
        if "--max-tokens" not in sys.argv:
            args.max_tokens = 200  # sira-sync's own budget for a document answer
        numbers = run_vllm(args)
        if args.json:
            args.json.write_text(json.dumps(numbers, indent=2))
        return 0
    if args.in_flight < 8:
        parser.error("--in-flight must be at least 8")

    with ExitStack() as stack:
        urls, model = ([args.url] if args.url else []), args.model
        if not urls:
            from sira_seek.llm.gemma_model import ensure_gemma_model
            from sira_seek.llm.llamacpp_server import LlamaCppServerProcess
            from sira_seek.llm.settings import LLMSettings

            gguf = ensure_gemma_model(LLMSettings().model_dir)
            for _ in range(args.servers):
                server = LlamaCppServerProcess(
                    model_path=gguf,
                    model_alias="gemma3-270m",
                    n_threads=max(1, args.n_threads // args.servers),
                )
                print(f"starting {' '.join(server.command())}", file=sys.stderr)
                stack.enter_context(server)
                urls.append(server.base_url)
            model = "gemma3-270m"
        numbers = asyncio.run(run(args, urls, model))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

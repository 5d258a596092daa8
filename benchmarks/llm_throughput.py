"""LLM client throughput against one local llama.cpp server: 1 request in flight vs N, and the
response cache's speed-up on a repeated run.

    python benchmarks/llm_throughput.py                 # starts llama_cpp.server with Gemma 270M
    python benchmarks/llm_throughput.py --url http://127.0.0.1:8000/v1 --model NAME
    python benchmarks/llm_throughput.py --servers 2     # round-robin over 2 local servers

llama-cpp-python's server answers one request at a time (no continuous batching), so against
one such server the N-in-flight ratio stays near 1; against vLLM it is where throughput comes
from. ``--servers`` shows the client spreading load over several endpoints instead.

The workload is the real one: few-shot keyword prompts decoded under the keywords JSON schema.
Each phase uses its own distinct texts, so neither the response cache nor the server's prompt
cache answers for another phase. Needs the cpu extra (scripts/install_cpu_llm.sh) unless --url.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
    args = parser.parse_args()
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

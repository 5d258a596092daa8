"""Decoding speed of vLLM's CPU build with its compute threads on every core (what ``sira-seek
llm up`` sets on a machine of at most 8 cores, ``cpu_engine_env``) beside vLLM's own binding
(``VLLM_CPU_OMP_THREADS_BIND=auto``: a core kept for its scheduler), in one run.

    python benchmarks/vllm_cpu_binding.py [--tokens 96] [--in-flight 1,4]

Each side starts its own server on the packaged Gemma 3 270M (one at a time, each stopped
before the next), warms it with one short request, then decodes ``--tokens`` tokens greedily
(``ignore_eos``) for 1 and for N requests at once; prints tokens/s for both sides. Needs vLLM's
environment (``sira-seek llm install vllm``). Meaningless with a GPU (the CUDA build).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from sira_seek.llm.vllm_server import VllmServerProcess, cpu_engine_env, resolve_model, vllm_python


def decode(base_url: str, model: str, tokens: int, in_flight: int) -> float:
    """Tokens per second for ``in_flight`` greedy completions of ``tokens`` tokens each."""

    def one(i: int) -> int:
        body = {
            "model": model,
            "prompt": f"Write a long story about river number {i}.",
            "max_tokens": tokens,
            "temperature": 0,
            "ignore_eos": True,
        }
        reply = httpx.post(f"{base_url}/completions", json=body, timeout=900)
        reply.raise_for_status()
        return int(reply.json()["usage"]["completion_tokens"])

    started = time.perf_counter()
    with ThreadPoolExecutor(in_flight) as pool:
        done = sum(pool.map(one, range(in_flight)))
    return done / (time.perf_counter() - started)


def measure(label: str, tokens: int, levels: list[int]) -> dict[int, float]:
    python = vllm_python()
    target, served = resolve_model("gemma3-270m", python)
    server = VllmServerProcess(model=target, served_model_name=served, python=python, gpu=False)
    print(f"{label}: starting vLLM ({server.env})", flush=True)
    with server:
        decode(server.base_url, served, 4, 1)  # warm-up
        return {n: decode(server.base_url, served, tokens, n) for n in levels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--in-flight", default="1,4", help="e.g. 1,4")
    args = parser.parse_args()
    levels = [int(x) for x in args.in_flight.split(",")]
    print(f"usable cores: {sorted(os.sched_getaffinity(0))}; engine env: {cpu_engine_env(2)}")
    os.environ["VLLM_CPU_OMP_THREADS_BIND"] = "auto"  # a user's setting wins: vLLM's own
    own = measure("vLLM's binding", args.tokens, levels)
    del os.environ["VLLM_CPU_OMP_THREADS_BIND"]
    every = measure("every core", args.tokens, levels)
    print(f"\n{'in flight':>9}  {'vLLM binding tok/s':>18}  {'every core tok/s':>16}  ratio")
    for n in levels:
        print(f"{n:>9}  {own[n]:>18.1f}  {every[n]:>16.1f}  {every[n] / own[n]:.2f}x")


if __name__ == "__main__":
    main()

"""SEEK throughput, side by side on the same questions:

1. generated tokens per question for slot filling (one evidence paragraph per gist, filled in
   code) versus rewriting the whole page at every step (the reference code's approach);
2. questions/second with 1 question in flight versus N.

    python benchmarks/seek_throughput.py --questions 3 --in-flight 3
    python benchmarks/seek_throughput.py --llm openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-8B

The response cache is off, so every number is a live generation. With the in-process CPU model
the LLM is one locked llama.cpp context, so N in flight only overlaps retrieval with
generation; against a batching server (vLLM) N in flight is where throughput comes from.
Token counts come from the backend's usage report, per stage, summed per question.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path

from _cluster import add_cluster_args, wikimh_backend

from sira_seek.llm.settings import LLMSettings
from sira_seek.seek.api import open_session
from sira_seek.seek.batch import BatchReport
from sira_seek.seek.questions import read_questions
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.retrieval import BM25Retriever, Retriever
from sira_seek.seek.settings import SeekSettings

FILL_STAGES = ("subquery", "evidence")


def cpu_settings(variant: str) -> SeekSettings:
    """Small caps that keep a 270M base model on CPU within minutes (see the eval run)."""
    return SeekSettings(
        variant=variant,  # type: ignore[arg-type]
        max_gists=3,
        temperature=0.0,
        doc_chars=160,
        slot_chars=200,
        sketch_max_tokens=40,
        subquery_max_tokens=24,
        slot_max_tokens=48,
        answer_max_tokens=16,
        rewrite_max_tokens=256,
    )


async def run_batch(
    llm_spec: str,
    retriever: Retriever,
    settings: SeekSettings,
    questions: list[QuestionInput],
    in_flight: int,
    threads: int | None,
) -> BatchReport:
    session = open_session(
        retriever=retriever,
        llm_spec=llm_spec,
        settings=settings,
        llm_settings=LLMSettings(n_threads=threads),
        use_cache=False,
    )
    try:
        return await session.answer_many(questions, concurrency=in_flight)
    finally:
        await session.aclose()


def fill_tokens(result: SeekResult) -> int:
    return sum(
        result.usage.by_stage[s].completion_tokens
        for s in FILL_STAGES
        if s in result.usage.by_stage
    )


def summarise(report: BatchReport) -> dict[str, float | int]:
    ok = [r for r in report.results if r.ok]
    return {
        "questions": len(report.results),
        "failed": report.failed,
        "gists_per_question": statistics.fmean(len(r.sketch.gists) for r in ok if r.sketch)
        if ok
        else 0.0,
        "fill_tokens_per_question": statistics.fmean(fill_tokens(r) for r in ok) if ok else 0.0,
        "evidence_tokens_per_question": statistics.fmean(
            r.usage.by_stage["evidence"].completion_tokens for r in ok
        )
        if ok
        else 0.0,
        "generated_tokens_per_question": statistics.fmean(
            r.usage.total.completion_tokens for r in ok
        )
        if ok
        else 0.0,
        "prompt_tokens_per_question": statistics.fmean(r.usage.total.prompt_tokens for r in ok)
        if ok
        else 0.0,
        "wall_s": round(report.wall_s, 2),
        "questions_per_s": round(report.questions_per_s, 4),
        "mean_question_latency_s": statistics.fmean(r.timings.total_s for r in report.results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_cluster_args(parser)
    parser.add_argument("--llm", default="llamacpp:gemma3-270m")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--in-flight", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    backend = wikimh_backend(args)
    retriever = BM25Retriever(backend, args.index)
    questions = read_questions(Path(args.data) / "qa-hotpotqa.jsonl", limit=args.questions)

    def timed(variant: str, in_flight: int) -> dict[str, float | int]:
        print(f"running {variant} with {in_flight} in flight ...", file=sys.stderr, flush=True)
        report = asyncio.run(
            run_batch(
                args.llm, retriever, cpu_settings(variant), questions, in_flight, args.threads
            )
        )
        return summarise(report)

    slot = timed("sequential", 1)
    page = timed("rewrite-page", 1)
    parallel = timed("sequential", args.in_flight)
    out = {
        "llm": args.llm,
        "questions": len(questions),
        "slot_filling": slot,
        "rewrite_page": page,
        "in_flight_1": {k: slot[k] for k in ("wall_s", "questions_per_s")},
        f"in_flight_{args.in_flight}": {k: parallel[k] for k in ("wall_s", "questions_per_s")},
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    rows = [
        "generated tokens / question",
        "fill (sub-query + slot) tokens",
        "slot / page tokens",
        "prompt tokens / question",
        "gists / question",
        "wall s",
        "questions / s",
    ]
    keys = [
        "generated_tokens_per_question",
        "fill_tokens_per_question",
        "evidence_tokens_per_question",
        "prompt_tokens_per_question",
        "gists_per_question",
        "wall_s",
        "questions_per_s",
    ]
    print(f"{len(questions)} wikimh questions, {args.llm}")
    print(f"{'':34s} {'slot filling':>14s} {'rewrite page':>14s}")
    for label, key in zip(rows, keys, strict=True):
        print(f"{label:34s} {slot[key]:>14.2f} {page[key]:>14.2f}")
    print()
    print(f"{'SEEK (slot filling)':34s} {'1 in flight':>14s} {f'{args.in_flight} in flight':>14s}")
    one, many = slot["questions_per_s"], parallel["questions_per_s"]
    print(f"{'questions / s':34s} {one:>14.4f} {many:>14.4f}")
    print(f"{'wall s':34s} {slot['wall_s']:>14.2f} {parallel['wall_s']:>14.2f}")


if __name__ == "__main__":
    main()

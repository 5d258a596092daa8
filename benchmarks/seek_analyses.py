"""The SEEK paper's analyses, SEEK beside the baselines, on the same questions, cluster and LLM.

    python benchmarks/seek_analyses.py --questions 20
    python benchmarks/seek_analyses.py --llm openai:http://127.0.0.1:8000/v1#gemma3-270m \
        --prompt-style fewshot --in-flight 8 --questions 100

Each method answers the same wikimh/HotpotQA questions over BM25; then every run gets the
analyses of ``eval qa --diagnostics`` (`sira_seek.metrics.seek_diagnostics`): sub-query
similarity and diversity, document overlap, new-document share, DIG (scored by the same LLM),
maximum sub-query Recall@5 over answer-containing documents (A.5) and against the HotpotQA
judgements, sub-queries and gists per question, seconds per question, beside
Cover-EM / EM / F1. vanilla-rag (one search with the question) is the baseline the others are
read against. The response cache is off, so every figure is a live generation; the seed is
fixed (temperature 0 by default) and printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from _cluster import add_cluster_args, wikimh_backend
from seek_throughput import cpu_settings

from sira_seek.corpus import read_qrels
from sira_seek.llm.scoring import find_scorer
from sira_seek.metrics.information_gain import DigParameters
from sira_seek.metrics.qa import score_predictions
from sira_seek.metrics.seek_diagnostics import SeekDiagnostics, seek_diagnostics
from sira_seek.seek.api import open_session
from sira_seek.seek.information_gain import information_gains
from sira_seek.seek.questions import read_questions
from sira_seek.seek.results import QuestionInput
from sira_seek.seek.retrieval import BM25Retriever, Retriever
from sira_seek.seek.settings import SeekSettings
from sira_seek.workflows.seek_analyses import retrieved_passages

METHODS = ("vanilla-rag", "seek", "iter-retgen", "rewoo")

ROWS = (
    ("cover_em", "Cover-EM"),
    ("em", "EM"),
    ("f1", "token F1"),
    ("subquery_similarity", "sub-query similarity"),
    ("subquery_diversity", "sub-query diversity"),
    ("document_overlap", "document overlap"),
    ("new_document_share", "new-document share"),
    ("dig", "DIG"),
    ("max_subquery_recall_at_5", "max sub-query Recall@5"),
    ("qrels_subquery_recall_at_5", "qrels sub-query Recall@5"),
    ("subqueries_per_question", "sub-queries / question"),
    ("gists_per_question", "gists / question"),
    ("amortised_seconds_per_question", "seconds / question (amortised)"),
)


async def analyse(
    llm_spec: str,
    retriever: Retriever,
    settings: SeekSettings,
    questions: list[QuestionInput],
    qrels: dict[str, dict[str, int]],
    in_flight: int,
) -> tuple[dict[str, float], SeekDiagnostics]:
    session = open_session(
        retriever=retriever, llm_spec=llm_spec, settings=settings, use_cache=False
    )
    try:
        report = await session.answer_many(questions, concurrency=in_flight)
        gains = await information_gains(
            find_scorer(session.llm), report.results, settings, concurrency=in_flight
        )
    finally:
        await session.aclose()
    scores = score_predictions(r.prediction_record() for r in report.results)
    assert isinstance(retriever, BM25Retriever)
    passages = retrieved_passages(retriever.backend, retriever.index, report.results)
    found = seek_diagnostics(
        [r.trace() for r in report.results],
        qrels,
        passages=passages,
        wall_s=report.wall_s,
        run_questions=len(report.results),
        gains=gains,
    )
    return {"cover_em": scores.cover_em, "em": scores.em, "f1": scores.f1}, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_cluster_args(parser)
    parser.add_argument("--llm", default="llamacpp:gemma3-270m")
    parser.add_argument("--prompt-style", choices=["auto", "chat", "fewshot"], default="auto")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--in-flight", type=int, default=1)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--seed", type=int, default=66)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(f"seed {args.seed}", file=sys.stderr)

    backend = wikimh_backend(args)
    retriever = BM25Retriever(backend, args.index)
    data = Path(args.data)
    questions = read_questions(data / "qa-hotpotqa.jsonl", limit=args.questions)
    qrels = read_qrels(data / "qrels-hotpotqa.tsv")
    runs: dict[str, dict[str, object]] = {}
    for method in args.methods.split(","):
        settings = cpu_settings("sequential").model_copy(
            update={"method": method, "prompt_style": args.prompt_style, "seed": args.seed}
        )
        print(f"running {method} ...", file=sys.stderr, flush=True)
        scores, found = asyncio.run(
            analyse(args.llm, retriever, settings, questions, qrels, args.in_flight)
        )
        runs[method] = {**scores, **found.as_report()}
    if args.json:
        print(json.dumps({"llm": args.llm, "questions": len(questions), "runs": runs}, indent=2))
        return
    names = list(runs)
    print(f"{len(questions)} wikimh/HotpotQA questions, BM25 top-5, {args.llm}")
    print(f"{'':32s}" + "".join(f"{n:>13s}" for n in names))
    for key, label in ROWS:
        cells = []
        for name in names:
            value = runs[name].get(key)
            cells.append(f"{'-':>13s}" if value is None else f"{float(value):>13.4f}")  # type: ignore[arg-type]
        print(f"{label:32s}" + "".join(cells))
    print(f"DIG by Eq. 13-15 with {DigParameters().describe()}")
    unavailable = {n: r["dig_unavailable"] for n, r in runs.items() if r.get("dig_unavailable")}
    for name, why in unavailable.items():
        print(f"{name}: DIG unavailable: {why}")


if __name__ == "__main__":
    main()

"""``sira-seek eval qa``: answer a QA file with SEEK or a baseline and print the papers' scores.

Runs resumably: with ``--checkpoint FILE`` every finished question is appended to FILE at
once, and a re-run with the same FILE asks only the questions not yet answered.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click

from sira_seek.evaluation.qa_metrics import QAScores, score_predictions
from sira_seek.seek.api import build_retriever, open_session
from sira_seek.seek.batch import BatchReport
from sira_seek.seek.checkpoint import CheckpointMismatchError
from sira_seek.seek.questions import QAFileError, read_questions
from sira_seek.seek.results import SeekResult
from sira_seek.seek.retrieval import Retriever
from sira_seek.seek.settings import METHODS, VARIANTS, SeekSettings

from .options import backend_from_options, cluster_options, friendly_errors
from .qa_score import format_table


def seek_options(func: Any) -> Any:
    """LLM, retriever and SEEK knobs shared by ``ask`` and ``eval qa``."""
    opts = [
        click.option(
            "--llm",
            "llm_spec",
            default=None,
            help="LLM spec: openai:URL#MODEL or llamacpp:gemma3-270m (default: "
            "SIRA_SEEK_LLM_BACKEND, else the CPU model).",
        ),
        click.option(
            "--retriever",
            type=click.Choice(["bm25", "sira"]),
            default="bm25",
            show_default=True,
            help="How sub-queries search the index.",
        ),
        click.option(
            "--expansions",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            default=None,
            help="Precomputed SIRA expansions JSONL (with --retriever sira).",
        ),
        click.option(
            "--variant",
            type=click.Choice(list(VARIANTS)),
            default="sequential",
            show_default=True,
            help="SEEK variant (the paper's ablations).",
        ),
        click.option(
            "--prompt-style",
            type=click.Choice(["auto", "chat", "fewshot"]),
            default="auto",
            show_default=True,
            help="chat for instruction models, fewshot for base models (auto: by --llm).",
        ),
        click.option("--top-k", type=int, default=None, help="Documents per sub-query (5)."),
        click.option("--max-gists", type=int, default=None, help="Cap on gists (8)."),
        click.option("--min-gists", type=int, default=None, help="Gists asked for at least (2)."),
        click.option("--temperature", type=float, default=None, help="Sampling temperature (0.7)."),
        click.option("--no-cache", is_flag=True, help="Do not use the LLM response cache."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def seek_settings(method: str, **values: Any) -> SeekSettings:
    chosen = {k: v for k, v in values.items() if v is not None}
    return SeekSettings(method=method, **chosen)  # type: ignore[arg-type]


def make_retriever(
    method: str,
    index: str | None,
    retriever: str,
    llm_spec: str | None,
    expansions: Path | None,
    cluster: dict[str, Any],
) -> Retriever | None:
    """The retriever a method needs (none for closed-book answers)."""
    if method == "vanilla-llm":
        return None
    if not index:
        raise click.UsageError(f"--method {method} retrieves: give --index NAME")
    backend = backend_from_options(cluster)
    if not backend.index_exists(index):
        raise click.ClickException(f"index {index!r} does not exist: run `sira-seek ingest` first")
    return build_retriever(
        backend,
        index,
        retriever,  # type: ignore[arg-type]
        sira_llm_spec=llm_spec,
        sira_expansions=expansions,
    )


def _progress(result: SeekResult) -> None:
    status = f"ERROR {result.error}" if result.error else repr(result.answer)
    click.echo(f"[{result.id}] {result.timings.total_s:.1f}s {status}", err=True)


@click.command("qa")
@click.option("--index", default=None, help="Index to retrieve from (not for vanilla-llm).")
@click.option(
    "--qa",
    "qa_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL questions with `golden_answers` or `answer`.",
)
@click.option("--method", type=click.Choice(list(METHODS)), default="seek", show_default=True)
@seek_options
@click.option("--limit", type=int, default=None, help="Only the first N questions.")
@click.option(
    "--checkpoint",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSONL of finished questions: appended as they finish, reused on re-run.",
)
@click.option("--concurrency", type=int, default=4, show_default=True, help="Questions in flight.")
@click.option(
    "--predictions",
    "predictions_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write every result (answer, sketch, sub-queries, usage) as JSONL.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as one JSON object.")
@click.option("--quiet", is_flag=True, help="No per-question progress on stderr.")
@cluster_options
@friendly_errors
def eval_qa(
    index: str | None,
    qa_path: Path,
    method: str,
    llm_spec: str | None,
    retriever: str,
    expansions: Path | None,
    variant: str,
    prompt_style: str,
    top_k: int | None,
    max_gists: int | None,
    min_gists: int | None,
    temperature: float | None,
    no_cache: bool,
    limit: int | None,
    checkpoint: Path | None,
    concurrency: int,
    predictions_out: Path | None,
    as_json: bool,
    quiet: bool,
    **cluster: Any,
) -> None:
    """Answer --qa questions with METHOD and score them (Cover-EM, EM, token F1)."""
    try:
        questions = read_questions(qa_path, limit=limit)
    except QAFileError as exc:
        raise click.ClickException(str(exc)) from None
    if not questions:
        raise click.ClickException(f"{qa_path}: no questions")
    settings = seek_settings(
        method,
        variant=variant,
        prompt_style=prompt_style,
        top_k=top_k,
        max_gists=max_gists,
        min_gists=min_gists,
        temperature=temperature,
    )
    found = make_retriever(method, index, retriever, llm_spec, expansions, cluster)

    async def run() -> BatchReport:
        session = open_session(
            retriever=found,
            llm_spec=llm_spec,
            settings=settings,
            use_cache=False if no_cache else None,
        )
        try:
            report = await session.answer_many(
                questions,
                concurrency=concurrency,
                checkpoint=checkpoint,
                on_result=None if quiet else _progress,
            )
        finally:
            await session.aclose()
        usage = session.ledger.summary()
        click.echo(
            f"{report.answered} answered ({report.failed} failed), {report.resumed} resumed "
            f"from checkpoint, {report.wall_s:.1f}s; LLM calls {usage['calls']}, "
            f"completion tokens {usage['completion_tokens']}",
            err=True,
        )
        return report

    try:
        report = asyncio.run(run())
    except CheckpointMismatchError as exc:
        raise click.ClickException(str(exc)) from None
    if predictions_out is not None:
        predictions_out.parent.mkdir(parents=True, exist_ok=True)
        with predictions_out.open("w", encoding="utf-8") as handle:
            for result in report.results:
                handle.write(result.model_dump_json() + "\n")
    scores: QAScores = score_predictions(r.prediction_record() for r in report.results)
    if as_json:
        click.echo(json.dumps(scores.as_report()))
    else:
        click.echo(format_table(scores))
    sys.stdout.flush()

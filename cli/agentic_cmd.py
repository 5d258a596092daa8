"""``sira-seek eval agentic``: an LLM agent searches under a page budget; Recall@B and answer
coverage of what it read (the SIRA paper's BrowseComp-style setting on your own index)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from sira_seek.agent.evaluation import evaluate_runs
from sira_seek.agent.loop import AgentLoop, AgentLoopSettings, AgentRun
from sira_seek.agent.prompts import AgentPrompt
from sira_seek.agent.tools import AgentTools
from sira_seek.client import SiraSeek
from sira_seek.corpus import ReadReport, read_qrels
from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.factory import create_llm_client
from sira_seek.llm.settings import LLMSettings
from sira_seek.seek.questions import read_questions
from sira_seek.seek.settings import resolve_prompt_style

from .exit_codes import BadInput, PartialFailure
from .options import (
    backend_from_options,
    cluster_options,
    echo_skipped,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
    strict_option,
)
from .progress import progress_bar


@click.command("agentic")
@click.option("--index", required=True, help="Index the agent searches.")
@click.option(
    "--qa",
    "qa_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL questions with `golden_answers` or `answer` (ids match the qrels).",
)
@click.option(
    "--qrels",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Relevant pages per question, for Recall@B.",
)
@click.option(
    "--llm",
    "llm_spec",
    default=None,
    help="LLM spec: openai:URL#MODEL or llamacpp:gemma3-270m (default: "
    "SIRA_SEEK_LLM_BACKEND, else the CPU model).",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="B: unique pages the agent may read per question (Recall@B).",
)
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=6,
    show_default=True,
    help="LLM calls per question (tool calls, the answer and malformed outputs).",
)
@click.option(
    "--search-k",
    type=click.IntRange(1, 100),
    default=5,
    show_default=True,
    help="Passages each search returns.",
)
@click.option("--tau", type=float, default=None, help="Max DF ratio of a kept expansion (0.1).")
@click.option("--weight", type=float, default=None, help="Expansion weight w (0.5).")
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Only the first N questions."
)
@click.option(
    "--trace",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write every question's whole episode (steps, pages with text) as JSONL.",
)
@click.option("--no-cache", is_flag=True, help="Do not use the LLM response cache.")
@strict_option
@json_option("Print the scores, counts and every question's scored trace as one JSON object.")
@no_progress_option
@cluster_options
@friendly_errors
def eval_agentic(
    index: str,
    qa_path: Path,
    qrels: Path,
    llm_spec: str | None,
    budget: int,
    max_steps: int,
    search_k: int,
    tau: float | None,
    weight: float | None,
    limit: int | None,
    trace: Path | None,
    no_cache: bool,
    strict: bool,
    as_json: bool,
    no_progress: bool,
    **cluster: Any,
) -> None:
    """An LLM agent answers --qa questions by calling the grounded search tool (with its own
    expansions) and the category tool, under a budget of --budget unique pages.

    Reports Recall@B of the pages it read against --qrels, answer coverage (a gold answer
    occurs in those pages) and Cover-EM of its answers. Exits 3 (after printing) when the LLM
    failed on some question.
    """
    skipped = ReadReport()
    questions = read_questions(qa_path, limit=limit, strict=strict, report=skipped)
    judgements = read_qrels(qrels, skipped, strict=strict)
    echo_skipped(skipped)
    if not questions:
        raise BadInput(f"{qa_path}: no usable question (a JSON object with `question`)")
    if not any(q.id in judgements for q in questions):
        raise BadInput(f"none of the {len(questions)} questions in {qa_path} is judged in {qrels}")
    llm_settings = LLMSettings()
    spec = llm_spec or llm_settings.backend
    settings = AgentLoopSettings(budget=budget, max_steps=max_steps, search_k=search_k)
    started = time.perf_counter()
    client = SiraSeek(backend_from_options(cluster))
    runs: list[AgentRun] = []
    try:
        if not client.backend.index_exists(index):
            raise click.ClickException(
                f"index {index!r} does not exist: run `sira-seek ingest` first"
            )
        tools = AgentTools(client, index, tau=tau, weight=weight)
        llm = BlockingLLMClient(
            create_llm_client(spec, settings=llm_settings, use_cache=False if no_cache else None)
        )
        loop = AgentLoop(llm, tools, AgentPrompt(resolve_prompt_style("auto", spec)), settings)
        bar = progress_bar(
            desc="eval agentic",
            total=len(questions),
            unit="question",
            enabled=show_progress(no_progress=no_progress, as_json=as_json),
        )
        try:
            for question in questions:
                runs.append(loop.run(question.question, question_id=question.id))
                bar.update(1)
        finally:
            bar.close()
            llm.close()
    finally:
        client.close()
    if trace is not None:
        trace.parent.mkdir(parents=True, exist_ok=True)
        trace.write_text("".join(run.model_dump_json() + "\n" for run in runs), encoding="utf-8")
    report = evaluate_runs(runs, judgements, {q.id: q.golden_answers for q in questions})
    out = {
        "index": index,
        "llm": spec,
        **report.model_dump(mode="json"),
        "llm_calls": sum(run.llm_calls for run in runs),
        "completion_tokens": sum(run.completion_tokens for run in runs),
        "seconds": round(time.perf_counter() - started, 3),
    }
    if as_json:
        click.echo(json.dumps(out, allow_nan=False))
    else:
        for result in report.results:
            recall = "-" if result.recall is None else f"{result.recall:.2f}"
            click.echo(
                f"[{result.id}] {result.stop_reason}, {len(result.pages_read)} pages, "
                f"recall {recall}, covered {result.answer_covered}, answer {result.answer!r}"
            )
        for key in ("recall_at_budget", "answer_coverage", "cover_em", "mean_pages_read"):
            value = out[key]
            click.echo(f"{key:18s} {'-' if value is None else round(value, 4)}")
        click.echo(f"{'malformed_steps':18s} {report.malformed_steps}")
    if report.llm_errors:
        raise PartialFailure(f"the LLM failed on {report.llm_errors} question(s)")

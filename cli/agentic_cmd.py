"""``sira-seek eval agentic``: an LLM agent searches under a page budget; Recall@B and answer
coverage of its page stream (the SIRA paper's §4.4 BrowseComp-Wikipedia protocol on your own
index, evidence-blind by default; ``--protocol snippets`` lets it read titles and snippets).

The work (reading the inputs, the agent loop, the scores) is ``sira_seek.workflows.agentic``;
this command parses the flags and prints the result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from sira_seek.workflows.agentic import (
    FINAL_RANKINGS,
    PROTOCOLS,
    AgenticEvaluation,
    AgenticEvaluationRequest,
    AgenticReport,
    evaluate_agentic,
)

from .exit_codes import PartialFailure
from .options import (
    CLUSTER_KEYS,
    LazyBackend,
    cluster_options,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
    strict_option,
)
from .progress import WorkflowProgress


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
    help="LLM spec: openai:URL#MODEL, llamacpp:gemma3-270m or batch:DIR#MODEL (offline "
    "batch rounds: exit 75 naming each round's request file) (default: "
    "SIRA_SEEK_LLM_BACKEND, else the CPU model).",
)
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default="evidence-blind",
    show_default=True,
    help="evidence-blind: the paper's §4.4 agent, which never sees a retrieved title, snippet "
    "or page (only its own actions, pages used of the budget, dropped expansions and category "
    "checks); snippets: each search shows titles and snippets of the new pages.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    help="Unique pages per question; the stream is cut at 1, 10, 100 up to it "
    "[default: 100 evidence-blind, 10 snippets].",
)
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=None,
    help="LLM calls per question (tool calls, the answer and malformed outputs) "
    "[default: 10 evidence-blind, 6 snippets].",
)
@click.option(
    "--search-k",
    type=click.IntRange(1, 100),
    default=None,
    help="Passages each search returns [default: 20 evidence-blind, 5 snippets].",
)
@click.option(
    "--final-ranking",
    type=click.Choice(FINAL_RANKINGS),
    default="llm",
    show_default=True,
    help="How the gathered pages are ranked before Recall@B (SIRA §4.4's final ranking): llm "
    "rates each page's title and snippet (one call per page); stream keeps retrieval order. "
    "The stream's own Recall@B is printed beside it either way.",
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
    qa_path: Path,
    llm_spec: str | None,
    no_cache: bool,
    as_json: bool,
    no_progress: bool,
    **options: Any,
) -> None:
    """An LLM agent searches for --qa questions with the grounded search tool (its own
    expansions) and the category tool, under a budget of --budget unique pages.

    The pages its searches return, deduplicated in retrieval order, are a stream; after the
    episode the LLM ranks them (--final-ranking). Recall@B is 1 when a --qrels page is among the
    first B of the ranked list (B = 1, 10, 100 up to the budget, and the budget), averaged over
    the questions; the stream's Recall@B follows, labelled. Also answer coverage (a gold answer
    occurs in the stream's pages) and Cover-EM of its answers. Exits 3 (after printing) when
    the LLM failed on some question.
    """
    cluster = {k: options.pop(k) for k in list(options) if k in CLUSTER_KEYS}
    request = AgenticEvaluationRequest.build(
        questions=qa_path, llm=llm_spec, use_cache=False if no_cache else None, **options
    )
    enabled = show_progress(no_progress=no_progress, as_json=as_json)
    with WorkflowProgress(desc="eval agentic", unit="question", enabled=enabled) as progress:
        done = evaluate_agentic(LazyBackend(cluster), request, progress=progress)
    _render(done, as_json)


def _render(done: AgenticEvaluation, as_json: bool) -> None:
    """The JSON object, or a line per question and the means; exit 3 when the LLM failed."""
    report = done.report
    out = done.to_json()
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps(out, allow_nan=False))
    else:
        _render_text(report, out)
    if report.llm_errors:
        raise PartialFailure(f"the LLM failed on {report.llm_errors} question(s)")


def _stopped(reason: str, max_steps: int) -> str:
    """The stop reason, spelled out when the step cap ended the question (not the paper's)."""
    return f"stopped by the step cap (max_steps {max_steps})" if reason == "max_steps" else reason


def _render_text(report: AgenticReport, out: dict[str, Any]) -> None:
    """A line per question, the means over the ranked list, then the stream's (labelled)."""
    click.echo(
        f"protocol {report.protocol}, budget {report.budget}, final ranking "
        f"{report.final_ranking}, cut-offs {', '.join(map(str, report.cutoffs))}"
    )
    for result in report.results:
        rank = "-" if result.first_relevant_rank is None else result.first_relevant_rank
        stream = result.stream_first_relevant_rank
        click.echo(
            f"[{result.id}] {_stopped(result.stop_reason, report.max_steps)}, "
            f"{len(result.pages_read)} pages, first relevant at {rank} "
            f"(stream {'-' if stream is None else stream}), covered {result.answer_covered}, "
            f"answer {result.answer!r}"
        )
    keys = ("recall_at_1", "recall_at_10", "recall_at_100", "recall_at_budget")
    for key in (*keys, "answer_coverage", "cover_em", "mean_pages_read"):
        value = out[key]
        click.echo(f"{key:18s} {'-' if value is None else round(value, 4)}")
    click.echo(f"{'malformed_steps':18s} {report.malformed_steps}")
    figures = ", ".join(
        f"{key} {'-' if value is None else round(value, 4)}"
        for key, value in report.stream_recall.items()
    )
    click.echo(f"stream before the final ranking: {figures}")

"""``sira-seek eval qa``: answer a QA file with SEEK or a baseline and print the papers' scores.

Runs resumably: with ``--checkpoint FILE`` every finished question is appended to FILE at
once, and a re-run with the same FILE asks only the questions not yet answered.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from sira_seek.workflows.evaluate_qa import QAEvaluation, QAEvaluationRequest, evaluate_qa
from sira_seek.workflows.scores import (
    ANSWER_EXTRACTIONS,
    DEFAULT_DIG_EDGES,
    DIG_EDGES,
    DigParameters,
    llm_cost,
)

from .eval_diagnostics import echo_diagnostics
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
from .qa_score import format_table, qa_json
from .seek_options import SeekChoices, index_option, seek_options


@click.command("qa")
@index_option
@click.option(
    "--qa",
    "qa_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL questions with `golden_answers` or `answer`.",
)
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
@click.option(
    "--extraction",
    type=click.Choice(ANSWER_EXTRACTIONS),
    default="tagged",
    show_default=True,
    help="How the scored answer is read from the model's text: `tagged` as the SEEK authors "
    "(no <answer> tag scores as <None>), `lenient` also takes an Answer: line or the last line.",
)
@click.option(
    "--diagnostics",
    is_flag=True,
    help="Also report the SEEK paper's analyses: sub-query similarity and diversity, document "
    "overlap (per step and across iterations), DIG (gold-answer confidence with the gathered "
    "knowledge minus without; scored by the same LLM, which must return token "
    "log-probabilities), maximum sub-query Recall@5 over answer-containing documents, step-cap "
    "stops, gists and seconds per question.",
)
@click.option(
    "--dig-edges",
    type=click.Choice(DIG_EDGES),
    default=DEFAULT_DIG_EDGES,
    show_default=True,
    help="DIG (Eq. 14) at the answer's ends, which the SEEK paper does not define: `zero` "
    "counts positions outside the answer as 0 and still divides by W (a one-token answer's "
    "confidence is then at most about 0.59), `clip` clips the window to the answer. The "
    "paper gives no values for W, k, alpha or omega either: ours are W=3, k=3, alpha=0.6, "
    "omega=0.8 each, echoed in the report.",
)
@click.option(
    "--qrels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Judgements (query-id corpus-id score; ids = question ids) for the judged-document "
    "sub-query Recall@5 (qrels_subquery_recall_at_5); implies --diagnostics.",
)
@click.option(
    "--per-iteration",
    is_flag=True,
    help="Also the answer quality after each iteration (SEEK paper, Fig. 6a): the answer "
    "prompt asked again from the knowledge after iterations 1..n-1 (one LLM call each; "
    "Iter-RetGen needs none); implies --diagnostics.",
)
@click.option(
    "--slot-ablation",
    is_flag=True,
    help="Also the slot ablation (SEEK paper, Fig. 4b): each completed sketch of the most "
    "common slot count answered again with each filled slot removed, and with every gist "
    "removed (slots + 1 LLM calls a sketch); implies --diagnostics.",
)
@click.option(
    "--closed-book-predictions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="SEEK Table 3: the --predictions of a closed-book run of the same model (eval qa "
    "--method vanilla-llm); questions it answers right (Cover-EM) are the knowledge conflict "
    "population, the others knowledge utilization; implies --diagnostics.",
)
@click.option(
    "--closed-book",
    is_flag=True,
    help="SEEK Table 3 with the closed-book answers asked on the spot: the vanilla LLM with the "
    "same --llm (batch rounds included) beside the run; implies --diagnostics.",
)
@click.option(
    "--judge-llm",
    default=None,
    metavar="SPEC",
    help="SEEK §5.4: this LLM (any spec, batch: included) rates the knowledge context the "
    "method answered from 0-5 on accuracy, logicality, structure and refinement (our prompt "
    "wording: the paper's template is an image); implies --diagnostics.",
)
@click.option(
    "--report",
    "report_html",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the analyses as an HTML report; implies --diagnostics.",
)
@strict_option
@json_option("Print the scores and the run's counts as one JSON object.")
@no_progress_option
@click.option("--quiet", is_flag=True, hidden=True, help="Old spelling of --no-progress.")
@cluster_options
@friendly_errors
def eval_qa(
    index: str | None,
    qa_path: Path,
    seek: SeekChoices,
    as_json: bool,
    no_progress: bool,
    quiet: bool,
    **options: Any,
) -> None:
    """Answer --qa questions with METHOD and score them (Cover-EM, EM, token F1).

    Exits 3 (after printing the scores) when some questions failed.
    """
    cluster = {k: options.pop(k) for k in list(options) if k in CLUSTER_KEYS}
    options["dig"] = DigParameters(edges=options.pop("dig_edges"))
    request = QAEvaluationRequest.build(
        questions=qa_path,
        index=index,
        settings=seek.settings_values(),
        llm=seek.llm_spec,
        retriever=seek.retriever,
        expansions=seek.expansions,
        embedder=seek.embedder,
        use_cache=False if seek.no_cache else None,
        predictions=options.pop("predictions_out"),
        **options,
    )
    progress = show_progress(no_progress=no_progress or quiet, as_json=as_json)
    with WorkflowProgress(desc="eval qa", unit="question", enabled=progress) as bar:
        # The bar (rate, ETA, failed=N) replaces a line per question; failures still get
        # their own line above it.
        done = evaluate_qa(LazyBackend(cluster), request, progress=bar)
    _render(done, as_json)


def _render(done: QAEvaluation, as_json: bool) -> None:
    """The run's counts on stderr, the scores (and analyses) on stdout; exit 3 on failures."""
    report, usage = done.report, done.usage
    click.echo(
        f"{report.answered} answered ({report.failed} failed), {report.resumed} resumed "
        f"from checkpoint, {report.wall_s:.1f}s; LLM calls {usage['calls']}, "
        f"completion tokens {usage['completion_tokens']}",
        err=True,
    )
    # The price beside the accuracy, for every method (resumed questions with what they cost).
    cost = llm_cost(r.usage.cost() for r in report.results)
    if as_json:
        counts = {"answered": report.answered, "failed": report.failed, "resumed": report.resumed}
        analyses = done.diagnostics
        extra = {
            "cost": cost.model_dump(mode="json"),
            "diagnostics": None if analyses is None else analyses.as_report(),
        }
        click.echo(json.dumps({**qa_json(done.scores), **counts, **extra}))
    else:
        click.echo(format_table(done.scores))
        click.echo(f"LLM cost: {cost.describe()}")
        if done.diagnostics is not None:
            echo_diagnostics(done.diagnostics)
    sys.stdout.flush()
    if report.failed:
        raise PartialFailure(
            f"{report.failed} of {len(report.results)} questions failed (scored as <None>)"
        )

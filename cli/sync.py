"""`sira-sync`: corpus-side SIRA enrichment of an existing index, and its status.

sira-sync --index NAME --fields title,text --from-jsonl FILE   apply precomputed phrases
sira-sync --index NAME --llm llamacpp:gemma3-270m              ask an LLM per document
sira-sync status --index NAME                                  enriched / stale / failed
sira-sync export-requests --index NAME --out req.jsonl --model M  offline batch requests
sira-sync --index NAME --from-batch-output out.jsonl           apply the batch's answers
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from sira_seek.redaction import write_masked_text
from sira_seek.sync.run_report import RunReport
from sira_seek.workflows.enrich import EnrichRequest, enrich
from sira_seek.workflows.enrich import estimate as estimate_enrichment
from sira_seek.workflows.failures import MappingConflictError
from sira_seek.workflows.sync_runs import (
    CORPUS_TASKS,
    EmbedReport,
    PromptStyle,
    SliceSpec,
    SyncSettings,
    check_migration_names,
    export_requests,
    index_sync_status,
    migrate_index,
)

from .envvars import SYNC_PREFIX, assign_envvars
from .exit_codes import ExitCode
from .groups import DebuggableGroup, logging_options
from .options import (
    CLUSTER_KEYS,
    LazyBackend,
    backend_from_options,
    cluster_options,
    friendly_errors,
    json_option,
    no_progress_option,
    prompt_style_option,
    show_progress,
)
from .progress import WorkflowProgress


class _RunByDefault(DebuggableGroup):
    """`sira-sync --index ...` runs enrichment; `sira-sync status ...` is the one subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # The group's own flags (--verbose, --debug) stay in front of the implied `run`.
        lead: list[str] = []
        while args and args[0] in _GROUP_FLAGS:
            lead.append(args[0])
            args = args[1:]
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = ["run", *args]
        return super().parse_args(ctx, [*lead, *args])


_GROUP_FLAGS = ("--verbose", "-v", "--debug")


@click.group(cls=_RunByDefault)
@logging_options
def main() -> None:
    """Enrich an existing index with LLM-proposed, DF-filtered vocabulary (SIRA corpus side).

    Run `sira-sync run --help` for the enrichment options (`run` may be left out).
    """


def _sync_settings(**overrides: Any) -> SyncSettings:
    return SyncSettings(**{k: v for k, v in overrides.items() if v is not None})


def _summary(report: RunReport) -> str:
    c = report.counts
    verb = "would enrich" if report.dry_run else "enriched"
    todo = c.new + c.changed + c.outdated + c.failed_before
    head = (
        f"{report.index} [slice {report.slice}]: {c.seen} docs read, {c.current} current, "
        f"{todo if report.dry_run else c.enriched} {verb}"
    )
    if report.dry_run:
        return (
            f"{head} (new {c.new}, changed {c.changed}, other model/prompt {c.outdated}, "
            f"failed before {c.failed_before}); nothing written"
        )
    text = (
        f"{head}, {c.failed} failed, {c.no_input} without input, {c.conflicts} changed mid-run, "
        f"{c.write_errors} write errors; phrases kept {c.phrases_kept}/{c.phrases_proposed} "
        f"({c.phrases_too_common} too common); {report.docs_per_s:.1f} docs/s"
    )
    if c.changed_since_export:
        text += f"; {c.changed_since_export} batch answers skipped: text changed since export"
    if report.expunge is not None:
        e = report.expunge
        text += (
            f"; merged away {e.deleted_before - e.deleted_after} of {e.deleted_before} deleted "
            f"copies in {e.seconds:.1f}s"
        )
    return text


@main.command("run")
@click.option("--index", required=True, help="Index (or alias) to enrich.")
@click.option("--fields", default=None, help="Source fields the LLM reads [title,text].")
@click.option("--from-jsonl", type=click.Path(path_type=Path), help="Precomputed enrichments.")
@click.option(
    "--from-batch-output",
    type=click.Path(path_type=Path),
    help="Output of a batch job (vLLM run_batch, a Batch API) on export-requests' file.",
)
@click.option(
    "--llm",
    help="LLM spec: llamacpp:gemma3-270m, openai:URL#MODEL, ...; cpu: the CPU backend measured "
    "faster here (vLLM when installed, else llama.cpp in-process).",
)
@click.option("--slice", "slice_text", help="Worker i of N, e.g. 0/2 (split by a hash of _id).")
@click.option("--resume", is_flag=True, help="Continue the last unfinished run of this slice.")
@click.option("--dry-run", is_flag=True, help="Count what would change; no LLM, no writes.")
@click.option("--estimate", is_flag=True, help="Measure a sample; print docs, tokens, time.")
@click.option(
    "--sample",
    type=int,
    default=None,
    help="Docs for --estimate [5; for an openai: server, the concurrency, to fill its batch].",
)
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="JSON report.")
@click.option("--tau", type=float, help="Drop phrases with DF > tau*|C| in the raw corpus.")
@click.option("--categories/--no-categories", default=False, help="Ask the LLM for categories.")
@click.option(
    "--task",
    type=click.Choice(list(CORPUS_TASKS)),
    default=None,
    help="Corpus prompt for the task the index serves [generic]; claim, argument, duplicate.",
)
@prompt_style_option
@click.option("--model-id", help="Model name recorded for --from-jsonl [jsonl:FILE_NAME].")
@click.option("--prompt-id", "prompt_id_override", help="Prompt id recorded per document.")
@click.option("--text-budget", type=int, help="Characters of document text sent [4000].")
@click.option("--page-size", type=int, help="Documents per page [200; LLM: 4x concurrency].")
@click.option("--concurrency", type=int, help="LLM requests in flight [16].")
@click.option("--state-dir", type=click.Path(path_type=Path), help="Checkpoints and failures.")
@click.option("--no-cache", is_flag=True, help="Do not use the LLM response cache.")
@click.option(
    "--expunge-deletes",
    is_flag=True,
    help="End with a merge that drops the deleted copies each update leaves (exact DF/IDF).",
)
@click.option(
    "--embed",
    is_flag=True,
    help="Add vectors instead of phrases: each new or changed document gets the vector of its "
    "--fields (for --method dense, hybrid); with --slice, --resume, --dry-run, --page-size.",
)
@click.option(
    "--embedder",
    "embedder_spec",
    metavar="SPEC",
    default=None,
    help="With --embed: cpu (the default), openai:URL#MODEL, or batch:DIR#MODEL (requests for "
    "a provider's batch job written to DIR, exit 75 until its output is there); the index's "
    "recorded model.",
)
@no_progress_option
@json_option("Print the run report (with --estimate: the estimate) as JSON.")
@cluster_options
@friendly_errors
def run_cmd(
    index: str,
    estimate: bool,
    sample: int | None,
    report_path: Path | None,
    no_cache: bool,
    no_progress: bool,
    as_json: bool,
    **kw: Any,
) -> None:
    """Enrich the documents of INDEX that are new or changed; safe to re-run and to kill.

    With --embed, give them vectors instead. Exits 3 (after the report) when the cluster
    refused some writes.
    """
    embed, embedder_spec = kw.pop("embed"), kw.pop("embedder_spec")
    if embed:
        _embed_run(index, embedder_spec, report_path, no_progress, as_json, estimate=estimate, **kw)
        return
    if embedder_spec is not None:
        raise click.UsageError("--embedder applies with --embed only")
    if sum(x is not None for x in (kw["from_jsonl"], kw["from_batch_output"], kw["llm"])) != 1:
        raise click.UsageError(
            "give exactly one of --from-jsonl FILE and --llm SPEC (or --from-batch-output FILE)"
        )
    cluster = {k: kw.pop(k) for k in list(kw) if k in CLUSTER_KEYS}
    request = EnrichRequest.build(
        index=index,
        use_cache=not no_cache,
        prompt_id=kw.pop("prompt_id_override"),
        slice=kw.pop("slice_text"),
        **kw,
    )
    backend = LazyBackend(cluster)
    if estimate:
        notices = WorkflowProgress(desc="sira-sync --estimate", unit="doc", enabled=False)
        result = estimate_enrichment(backend, request, sample=sample, progress=notices)
        click.echo(json.dumps(result.model_dump(), indent=2) if as_json else result.describe())
        return
    # The workflow sizes the bar (started where a resumed run left off) and moves it per page.
    with WorkflowProgress(
        desc=f"sira-sync {index} {SliceSpec.parse(request.slice)}",
        unit="doc",
        enabled=show_progress(no_progress=no_progress, as_json=as_json),
    ) as progress:
        report = enrich(backend, request, progress=progress)
    _render_report(report, report_path, as_json)


#: run options that only an enrichment (LLM or precomputed phrases) reads.
_ENRICH_ONLY = (
    "from_jsonl",
    "from_batch_output",
    "llm",
    "tau",
    "task",
    "model_id",
    "prompt_id_override",
    "text_budget",
    "concurrency",
)


def _embed_run(
    index: str,
    embedder_spec: str | None,
    report_path: Path | None,
    no_progress: bool,
    as_json: bool,
    *,
    estimate: bool,
    **kw: Any,
) -> None:
    """``--embed``: the vectors of INDEX (``workflows.embed_sync``), its report."""
    given = [f"--{k.replace('_override', '').replace('_', '-')}" for k in _ENRICH_ONLY if kw[k]]
    given += ["--estimate"] * estimate + ["--categories"] * kw["categories"]
    given += ["--expunge-deletes"] * kw["expunge_deletes"]
    if given:
        raise click.UsageError(f"--embed adds vectors, not phrases: drop {', '.join(given)}")
    from sira_seek.workflows.embed_sync import embed_index

    cluster = {k: kw.pop(k) for k in list(kw) if k in CLUSTER_KEYS}
    backend = backend_from_options(cluster)
    with WorkflowProgress(
        desc=f"sira-sync --embed {index}",
        unit="doc",
        enabled=show_progress(no_progress=no_progress, as_json=as_json),
    ) as bar:
        report = embed_index(
            backend,
            index,
            embedder_spec=embedder_spec,
            fields=kw["fields"],
            slice=kw["slice_text"],
            resume=kw["resume"],
            dry_run=kw["dry_run"],
            page_size=kw["page_size"],
            state_dir=kw["state_dir"],
            progress=bar,
        )
    _render_embed_report(report, report_path, as_json)


def _render_embed_report(report: EmbedReport, report_path: Path | None, as_json: bool) -> None:
    """The --embed report on stdout (and in ``--report``); exit 3 when writes were refused."""
    if report_path is not None:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        write_masked_text(report_path, report.model_dump_json(indent=2))
    c = report.counts
    done = (
        f"would embed {c.new + c.changed + c.outdated}"
        if report.dry_run
        else f"{c.enriched} embedded ({report.model})"
    )
    click.echo(
        report.model_dump_json(indent=2)
        if as_json
        else f"{report.index} {report.slice}: {c.seen} seen, {done}, {c.current} current, "
        f"{c.no_input} without text, {c.conflicts} changed mid-run ({report.seconds:.1f}s)"
    )
    if c.write_errors:
        for refused in report.write_error_samples[:5]:
            click.echo(f"write refused: {refused}", err=True)
        click.echo(
            f"{c.write_errors} documents were not written; the next run retries them.", err=True
        )
        raise SystemExit(ExitCode.PARTIAL_FAILURE)


def _render_report(report: RunReport, report_path: Path | None, as_json: bool) -> None:
    """The report on stdout (and in ``--report``); exit 3 when the cluster refused writes."""
    if report_path is not None:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        write_masked_text(report_path, report.model_dump_json(indent=2))
    click.echo(report.model_dump_json(indent=2) if as_json else _summary(report))
    if report.failures_file and report.counts.failed:
        click.echo(f"failures (doc id, raw answer) in {report.failures_file}", err=True)
    if report.counts.write_errors:
        # The cluster refused writes (a read-only or disk-full block, permissions, ...): say
        # so and fail the command, so schedulers and scripts notice. Nothing was half-written.
        for refused in report.write_error_samples[:5]:
            click.echo(f"write refused: {refused}", err=True)
        click.echo(
            f"{report.counts.write_errors} documents were not written; they keep their previous "
            "state and the next run (or --resume) retries them.",
            err=True,
        )
        raise SystemExit(ExitCode.PARTIAL_FAILURE)


@main.command("export-requests")
@click.option("--index", required=True, help="Index (or alias) whose documents need enrichment.")
@click.option(
    "--out", required=True, type=click.Path(path_type=Path), help="Batch input file (JSONL)."
)
@click.option(
    "--model",
    "--llm-model",
    "model",
    required=True,
    help="Model name in every request (vLLM: --served-model-name); recorded as openai:NAME.",
)
@click.option("--fields", default=None, help="Source fields the LLM reads [title,text].")
@click.option("--slice", "slice_text", help="Worker i of N, e.g. 0/2 (split by a hash of _id).")
@click.option("--categories/--no-categories", default=False, help="Ask the LLM for categories.")
@click.option(
    "--task",
    type=click.Choice(list(CORPUS_TASKS)),
    default=None,
    help="Corpus prompt for the task the index serves [generic]; claim, argument, duplicate.",
)
@prompt_style_option
@click.option("--text-budget", type=int, help="Characters of document text sent [4000].")
@json_option("Print what was written (counts, model, prompt id) as JSON.")
@cluster_options
@friendly_errors
def export_requests_cmd(
    index: str,
    out: Path,
    model: str,
    fields: str | None,
    slice_text: str | None,
    categories: bool,
    task: str | None,
    prompt_style: str,
    text_budget: int | None,
    as_json: bool,
    **kw: Any,
) -> None:
    """Write the enrichment requests of the documents that need them as an OpenAI Batch file.

    One line per document that is new, changed, enriched under another model or prompt, or
    failed before (this --slice only), each body exactly what `sira-sync --llm
    openai:URL#MODEL` would send, with a stable custom_id `<_id>::<source hash>::<prompt id>`.
    Run the file through `python -m vllm.entrypoints.openai.run_batch` (chat prompts only:
    vLLM's run_batch serves /v1/chat/completions) or any OpenAI-compatible Batch API, then
    `sira-sync --index INDEX --from-batch-output OUTPUT`. Reads the index only.
    """
    # auto: what a live openai: run picks (chat); fewshot is the library's completion form.
    style: PromptStyle = "completion" if prompt_style == "fewshot" else "chat"
    settings = _sync_settings(fields=fields, task=task, text_budget_chars=text_budget)
    backend = backend_from_options(kw)
    report = export_requests(
        backend,
        index,
        out,
        settings,
        model=model,
        style=style,
        categories=categories,
        slice_spec=SliceSpec.parse(slice_text),
    )
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    click.echo(
        f"{index} [slice {report.slice}]: {report.requests} requests written to {out} (new "
        f"{report.new}, changed {report.changed}, other model/prompt {report.outdated}, failed "
        f"before {report.failed_before}); model {model}, prompt {report.prompt_id}, "
        f"endpoint {report.url}"
    )


@main.command("status")
@click.option("--index", required=True)
@click.option("--fields", default="title,text", show_default=True, help="Source fields hashed.")
@json_option("Print the counts, by model and prompt id, as JSON.")
@cluster_options
@friendly_errors
def status_cmd(index: str, fields: str, as_json: bool, **kw: Any) -> None:
    """Enriched / stale / failed / never-enriched counts, by model and prompt id."""
    backend = backend_from_options(kw)
    field_list = [f.strip() for f in fields.split(",") if f.strip()]
    status = index_sync_status(backend, index, field_list)
    if as_json:
        click.echo(status.model_dump_json(indent=2))
        return
    click.echo(
        f"{index}: {status.total} docs; enriched {status.enriched}, stale {status.stale} "
        f"(text changed since), failed {status.failed}, never enriched {status.never_enriched}"
    )
    for group in status.by_fingerprint:
        click.echo(
            f"  model={group.model} prompt={group.prompt_id} v{group.enrichment_version}: "
            f"enriched {group.enriched}, stale {group.stale}, failed {group.failed}"
        )


@main.command("migrate")
@click.option("--index", required=True, help="Index (or alias of one index) to copy.")
@click.option("--into", "target", required=True, help="New index to create.")
@click.option("--alias", help="Alias to move to the new index once the copy is complete.")
@click.option("--shards", type=int, default=1, show_default=True, help="Shards of the new index.")
@no_progress_option
@json_option("Print the copy's report as JSON.")
@cluster_options
@friendly_errors
def migrate_cmd(
    index: str,
    target: str,
    alias: str | None,
    shards: int,
    no_progress: bool,
    as_json: bool,
    **kw: Any,
) -> None:
    """Copy INDEX into a new index that can hold the enrichment fields; swap an alias to it.

    For indexes whose mapping cannot take the enrichment fields in place. The old index is
    left as it is; the alias moves in one atomic request after every document is copied.
    """
    check_migration_names(index, target, alias)  # exit 2 before any request
    backend = backend_from_options(kw)
    with WorkflowProgress(
        desc=f"copy {index}",
        unit="doc",
        enabled=show_progress(no_progress=no_progress, as_json=as_json),
    ) as bar:
        try:
            report = migrate_index(backend, index, target, alias=alias, shards=shards, progress=bar)
        except MappingConflictError as exc:
            raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    moved = f"; alias {report.alias} now points at {target}" if report.alias else ""
    click.echo(f"copied {report.copied} documents from {report.source_index} into {target}{moved}")


assign_envvars(main, SYNC_PREFIX)

"""``sira-seek ask``: answer one question with SEEK over an index, showing the filled sketch."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click

from sira_seek.seek.results import SeekResult
from sira_seek.workflows.ask import AskRequest
from sira_seek.workflows.ask import ask as ask_question
from sira_seek.workflows.inspection import QueryLogger, dev_tools_request, record_from_seek

from .exit_codes import ExitCode
from .options import backend_from_options, cluster_options, friendly_errors, json_option
from .seek_options import SeekChoices, index_option, seek_options


def format_result(result: SeekResult) -> str:
    """The completed sketch, each sub-query with its documents, the answer and the cost."""
    lines = [f"Question: {result.question}", ""]
    if result.sketch is not None:
        lines += [result.sketch.render(), ""]
    if result.steps:
        lines.append("Searches:")
        for step in result.steps:
            gist = "question" if step.gist_index is None else f"gist {step.gist_index + 1}"
            flag = " (cleaned)" if step.malformed else ""
            lines.append(f"  [{gist}] {step.sub_query}{flag}")
            lines.append(f"      -> {', '.join(step.retrieved_ids) or '(no documents)'}")
            if step.error:
                lines.append(f"      ! {step.error}")
        lines.append("")
    for note in result.notes:
        lines.append(f"Note: {note}")
    total = result.usage.total
    lines.append(f"Answer: {result.answer}")
    lines.append(
        f"({total.calls} LLM calls, {total.prompt_tokens} prompt + {total.completion_tokens} "
        f"completion tokens; {result.timings.total_s:.1f}s total, "
        f"{result.timings.retrieval_s:.2f}s retrieval)"
    )
    return "\n".join(lines)


def explain_retrievals(result: SeekResult, retriever: object, k: int) -> str:
    """Each sub-query's search as a Dev Tools request that returns the same documents."""
    request_for = getattr(retriever, "request_for", None)
    if request_for is None:
        return (
            "(--explain shows BM25 retrievals; for SIRA run `sira-seek search SUB_QUERY "
            "--explain` with the sub-queries above)"
        )
    parts = []
    for step in result.steps:
        index, body = request_for(step.sub_query, k)
        parts.append(f"# {step.sub_query}\n{dev_tools_request(index, body)}")
    return "\n\n".join(parts)


@click.command("ask")
@click.argument("question")
@index_option
@seek_options
@json_option("Print the whole result as JSON (with --explain in its `explain` key).")
@click.option(
    "--log-queries", is_flag=True, help="Record the question in the sira-seek-log-* index."
)
@click.option(
    "--explain",
    is_flag=True,
    help="Also print each retrieval in Kibana / Dashboards Dev Tools syntax.",
)
@cluster_options
@friendly_errors
def ask(
    question: str,
    index: str | None,
    seek: SeekChoices,
    as_json: bool,
    log_queries: bool,
    explain: bool,
    **cluster: Any,
) -> None:
    """Answer QUESTION with SEEK: sketch, evidence per gist from --index, answer."""
    request = AskRequest.build(
        question=question,
        index=index,
        llm=seek.llm_spec,
        retriever=seek.retriever,
        expansions=seek.expansions,
        embedder=seek.embedder,
        settings=seek.settings_values(),
        use_cache=False if seek.no_cache else None,
    )
    log_backend = backend_from_options(dict(cluster)) if log_queries else None
    found = seek.make_retriever(index, cluster)
    result = asyncio.run(ask_question(None, request, retriever=found))
    if log_backend is not None:
        with QueryLogger(log_backend) as qlog:
            qlog.log(record_from_seek(result, index=index or ""))
    explained = explain_retrievals(result, found, request.settings.top_k) if explain else None
    if as_json:
        payload = {**result.model_dump(mode="json"), "explain": explained}
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        click.echo(format_result(result))
        if explained is not None:
            click.echo(explained)
    if result.error:
        raise SystemExit(ExitCode.ENGINE_ERROR)

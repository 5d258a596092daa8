"""`sira-seek explain HIT_ID --query ..`: per-clause score contributions for one hit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from sira_seek.workflows.inspection import explain_hit
from sira_seek.workflows.methods import method_spec
from sira_seek.workflows.search import search

from .options import LazyBackend, cluster_options, friendly_errors, json_option
from .search_cmd import method_option, search_request, sira_options, vector_knobs


def _lines(node: dict[str, Any], depth: int, max_depth: int) -> list[str]:
    out = [f"{'  ' * depth}{node.get('value', 0):.4f}  {node.get('description', '')}"]
    if depth < max_depth:
        for child in node.get("details", []):
            out += _lines(child, depth + 1, max_depth)
    return out


@click.command("explain")
@click.argument("hit_id")
@click.option("--query", "text", required=True, help="The search text.")
@click.option("--index", required=True)
@method_option(inferred=True)
@sira_options
@click.option("--id", "query_id", default=None, help="Query id to look up in --expansions.")
@click.option("--depth", type=int, default=3, show_default=True, help="Lucene tree depth shown.")
@json_option("Print the clause scores, the engine explanation and the query as JSON.")
@cluster_options
@friendly_errors
def explain(
    hit_id: str,
    text: str,
    index: str,
    method: str | None,
    llm_spec: str | None,
    expansions: Path | None,
    tau: float | None,
    weight: float | None,
    task: str | None,
    query_id: str | None,
    depth: int,
    as_json: bool,
    **kw: Any,
) -> None:
    """Show how HIT_ID scored under the SIRA query (or --method's) for --query: clause by
    clause."""
    request = search_request(
        text, index, llm_spec, expansions, method=method, tau=tau, weight=weight, task=task,
        query_id=query_id, **kw.pop("on_llm_failure"), **vector_knobs(kw),
    )  # fmt: skip
    if method_spec(request.method).vectors != "none":
        raise click.UsageError(
            f"explain shows a hit's BM25 clauses: --method {request.method} ranks by kNN "
            "(search --json shows its request)"
        )
    connect = LazyBackend(kw)
    result = search(connect, request)
    backend = connect()
    info = explain_hit(backend, index, result.body["query"], hit_id)
    if as_json:
        click.echo(json.dumps({**info.model_dump(), "query": result.body}, indent=2))
        return
    if not info.matched:
        click.echo(f"{hit_id} does not match this query (score 0)")
        return
    rank = next((i + 1 for i, h in enumerate(result.hits) if h.id == hit_id), None)
    where = f"rank {rank}" if rank else f"not in the top {len(result.hits)}"
    click.echo(f"{hit_id}: score {info.score:.4f} ({where})")
    for clause in info.clauses:
        score = "matched" if clause.score is None else f"{clause.score:.4f}"
        click.echo(f"  {clause.name:40s} {score}")
    kept = [c.phrase for c in result.candidates.kept]
    click.echo(f"  expansion phrases kept: {', '.join(kept) or 'none (plain BM25)'}")
    if info.engine_explanation:
        click.echo("engine explanation:")
        click.echo("\n".join(_lines(info.engine_explanation, 1, depth)))

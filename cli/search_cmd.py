"""`sira-seek search`: one SIRA query, with everything needed to see and replay it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import click

from sira_seek.corpus import ReadReport
from sira_seek.sira.results import SiraResult
from sira_seek.workflows.inspection import QueryLogger, record_from_sira
from sira_seek.workflows.method_parts import DEFAULT_TAU, DEFAULT_WEIGHT
from sira_seek.workflows.methods import GENERATED_WEIGHT, METHOD_NAMES, METHODS
from sira_seek.workflows.request_base import ON_LLM_FAILURE_HELP, OnLLMFailure
from sira_seek.workflows.search import (
    FALLBACK_NOTE,
    QueriesSearchRequest,
    SearchRequest,
    search_queries,
)
from sira_seek.workflows.search import search as run_search

from .options import (
    LazyBackend,
    cluster_options,
    echo_skipped,
    friendly_errors,
    json_option,
)

TASKS = ["factoid", "multihop", "claim", "duplicate"]


VECTOR_OPTIONS = [
    click.option(
        "--num-candidates",
        "vector_num_candidates",
        type=int,
        default=None,
        callback=lambda _ctx, _param, value: {} if value is None else {"num_candidates": value},
        help="dense, hybrid, sira-hybrid: candidates per shard of the approximate kNN "
        "(default 100; more is slower and closer to exact).",
    ),
    click.option(
        "--embedder",
        "vector_embedder",
        metavar="SPEC",
        default=None,
        callback=lambda _ctx, _param, value: {} if value is None else {"embedder": value},
        help="dense, hybrid, sira-hybrid: the query embedder, cpu (default) or "
        "openai:URL#MODEL; must be the model the index was ingested --embed with.",
    ),
]
"""--num-candidates and --embedder (``vector_knobs`` makes them request fields)."""


def sira_options(func: Any) -> Any:
    """--llm / --expansions / --tau / --weight / --task / --on-llm-failure / --num-candidates /
    --embedder, shared by search and eval."""
    opts = [
        click.option(
            "--llm",
            "llm_spec",
            default=None,
            help="LLM backend spec: openai:URL#MODEL, llamacpp:gemma3-270m, jsonl:FILE; "
            "batch:DIR#MODEL for offline batch rounds (eval retrieval, search --queries: exit "
            "75 naming each round's request file).",
        ),
        click.option(
            "--expansions",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            default=None,
            help="Precomputed expansions JSONL keyed by _id or text.",
        ),
        click.option(
            "--tau",
            type=float,
            default=None,
            help=f"Keep a phrase when a window has 0 < DF <= tau*|C| (default {DEFAULT_TAU}).",
        ),
        click.option(
            "--weight",
            type=float,
            default=None,
            help=f"w in BM25(q) + w*BM25(q_exp) (default {DEFAULT_WEIGHT}; hyde and cot: "
            f"{GENERATED_WEIGHT}, query2doc's query repeated five times).",
        ),
        click.option(
            "--task",
            type=click.Choice(TASKS),
            default=None,
            help="Enrichment prompt (default multihop).",
        ),
        click.option(
            "--on-llm-failure",
            type=click.Choice(get_args(OnLLMFailure)),
            default=None,
            callback=lambda _ctx, _param, value: {} if value is None else {"on_llm_failure": value},
            help=ON_LLM_FAILURE_HELP,
        ),
        *VECTOR_OPTIONS,
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


METHODS_HELP = "; ".join(f"{spec.name}: {spec.summary}" for spec in METHODS.values())


def method_option(*, inferred: bool) -> Any:
    """--method, one of the methods table's names (``workflows.methods``). ``inferred``
    (search, explain): by default sira when --llm or --expansions gives phrases, else bm25;
    otherwise (eval retrieval) bm25."""
    default_help = (
        "Default: sira with --llm or --expansions, else bm25." if inferred else "Default: bm25."
    )
    return click.option(
        "--method",
        type=click.Choice(METHOD_NAMES),
        default=None if inferred else "bm25",
        show_default=not inferred,
        help=f"{METHODS_HELP}. hyde and cot need --llm. {default_help}",
    )


def rerank_option(func: Any) -> Any:
    """--rerank N, shared by search and eval retrieval (validated by the workflow request)."""
    return click.option(
        "--rerank",
        type=int,
        default=None,
        metavar="N",
        help="LLM-rerank the top N hits (0-100) by relevance to the query, as SIRA §3.1 picks "
        "its top-k; the rest follow in BM25 order. Needs --llm (which only reranks when "
        "--expansions gives the phrases); 0 = off. Default: 10 for --method sira with --llm "
        "(SIRA's pipeline), else off.",
    )(func)


def vector_knobs(options: dict[str, Any]) -> dict[str, Any]:
    """--num-candidates and --embedder as request fields (only those given), popped."""
    return {**options.pop("vector_num_candidates"), **options.pop("vector_embedder")}


def search_request(
    text: str,
    index: str,
    llm_spec: str | None,
    expansions: Path | None,
    *,
    method: str | None = None,
    rerank: int | None = None,
    **knobs: Any,
) -> SearchRequest:
    """The search the shared SIRA flags ask for (``search`` and ``explain``): ``method``, by
    default SIRA when --llm or --expansions gives phrases, else BM25 (the workflow request
    checks the rest)."""
    return SearchRequest.build(
        query=text,
        index=index,
        method=method or inferred_method(llm_spec, expansions),
        expansions=expansions,
        llm=llm_spec,
        rerank=rerank,
        **knobs,
    )


def inferred_method(llm_spec: str | None, expansions: Path | None) -> str:
    """The method when --method is not given: SIRA with a phrase source, else BM25."""
    return "sira" if (llm_spec or expansions) else "bm25"


def _print_human(result: SiraResult) -> None:
    if not result.hits:
        click.echo("no hits")
    for hit in result.hits:
        matched = hit.matched_queries or []
        phrases = [m.split(":", 1)[1] for m in matched if m.startswith("sira_expansion:")]
        extra = f"  [+{', '.join(phrases)}]" if phrases else ""
        if hit.rerank_score is not None:
            extra += f"  (relevance {hit.rerank_score:.0f})"
        click.echo(f"{hit.bm25_rank:3d}. {hit.score:8.3f}  {hit.id}  {hit.title or ''}{extra}")
    table = result.candidates
    if table.candidates:
        click.echo(
            f"\ncandidates (|C| = {table.doc_count}, kept when 0 < DF <= {table.max_doc_freq:g}):"
        )
        for cand in table.candidates:
            click.echo(f"  {cand.decision:11s} {cand.phrase!r}: {cand.reason}")
    for cat in result.categories:
        click.echo(f"  category {cat.category!r}: {cat.decision} (use: {cat.use})")
    mode = "plain BM25" if result.plain_bm25 else "weighted BM25"
    if "rrf" in result.body:
        mode += " and kNN fused by RRF"
    elif "knn" in result.body:
        mode = "kNN"
    t = result.timings
    click.echo(
        f"\n{mode}; {result.total} matching docs; engine {t.engine_ms:.1f} ms "
        f"(DF check {t.df_check_ms:.1f}, search {t.search_ms:.1f}), LLM "
        f"{t.expansion_ms:.1f} ms" + (f", rerank {t.rerank_ms:.1f} ms" if t.rerank_ms else "")
    )
    for note in result.notes:
        click.echo(f"note: {note}", err=True)


@click.command("search")
@click.argument("text", required=False)
@click.option("--index", required=True)
@click.option(
    "--queries",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Search every query of a BEIR queries JSONL (`_id`, `text`) instead of TEXT; SIRA's "
    "LLM calls go out together (with --llm batch:DIR#MODEL, in offline rounds).",
)
@method_option(inferred=True)
@sira_options
@click.option(
    "--id",
    "query_id",
    default=None,
    help="Query id to look up in --expansions (else the text is looked up).",
)
@click.option("--size", type=int, default=10, show_default=True)
@rerank_option
@click.option(
    "--explain", is_flag=True, help="Print the request in Kibana / Dashboards Dev Tools syntax."
)
@json_option("Print hits, the compiled query, the candidate table and the Dev Tools request.")
@click.option(
    "--log-queries", is_flag=True, help="Record this search in the sira-seek-log-* index."
)
@cluster_options
@friendly_errors
def search(
    text: str | None,
    index: str,
    queries: Path | None,
    method: str | None,
    llm_spec: str | None,
    expansions: Path | None,
    tau: float | None,
    weight: float | None,
    task: str | None,
    query_id: str | None,
    size: int,
    rerank: int | None,
    explain: bool,
    as_json: bool,
    log_queries: bool,
    **kw: Any,
) -> None:
    """Search INDEX for TEXT (or every query of --queries) with SIRA (plain BM25 when no --llm
    or --expansions is given), or the --method given (hyde, cot: the SIRA paper's LLM
    baselines)."""
    if (text is None) == (queries is None):
        raise click.UsageError("give either TEXT or --queries FILE")
    policy = {**kw.pop("on_llm_failure"), **vector_knobs(kw)}
    if queries is not None:
        knobs = {"tau": tau, "weight": weight, "task": task, "k": size, "rerank": rerank, **policy}
        knobs["method"] = method or inferred_method(llm_spec, expansions)
        _search_file(queries, index, llm_spec, expansions, knobs, as_json, LazyBackend(kw))
        return
    assert text is not None
    request = search_request(
        text, index, llm_spec, expansions, method=method, tau=tau, weight=weight, task=task,
        query_id=query_id, k=size, rerank=rerank, **policy,
    )  # fmt: skip
    skipped = ReadReport()
    backend = LazyBackend(kw)
    result = run_search(backend, request, report=skipped)
    echo_skipped(skipped)
    if log_queries:
        used = request.settings()
        with QueryLogger(backend()) as qlog:
            qlog.log(
                record_from_sira(result, weight=used.weight, tau=used.tau, method=request.method)
            )
    if as_json:
        click.echo(json.dumps(result.to_search_json(), ensure_ascii=False, indent=2))
    elif explain:
        click.echo(result.explain())
    else:
        _print_human(result)


def _search_file(
    queries: Path,
    index: str,
    llm_spec: str | None,
    expansions: Path | None,
    knobs: dict[str, Any],
    as_json: bool,
    backend: LazyBackend,
) -> None:
    """``search --queries FILE``: one JSON object with every query's result (``results``), or
    the top hits of each query."""
    request = QueriesSearchRequest.build(
        queries=queries,
        index=index,
        expansions=expansions,
        llm=llm_spec,
        **knobs,
    )
    skipped = ReadReport()
    results = search_queries(backend, request, report=skipped)
    echo_skipped(skipped)
    fallbacks = sum(1 for r in results if r.fell_back_to_bm25)
    if as_json:
        found = [{"query_id": r.query_id, **r.to_search_json()} for r in results]
        summary = {"index": index, "queries": len(found), "fallbacks": fallbacks}
        click.echo(json.dumps({**summary, "results": found}))
        return
    for result in results:
        ranked = ", ".join(hit.id for hit in result.hits) or "no hits"
        click.echo(f"[{result.query_id}] {result.query}\n    {ranked}")
        for note in result.notes:
            click.echo(f"note: [{result.query_id}] {note}", err=True)
    if fallbacks:
        click.echo(f"note: {FALLBACK_NOTE} for {fallbacks} of {len(results)} queries", err=True)

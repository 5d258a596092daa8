"""The SEEK flags ``ask`` and ``eval qa`` share, declared once so both commands stay in step.

The flags reach a command as one ``SeekChoices`` value rather than ten parameters, and it
turns them into what every SEEK command needs: the values of its settings (which the workflow
request validates: a bad ``--iter-retgen-rounds`` is refused there, naming the field) and its
retriever.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, get_args

import click

from sira_seek.workflows.ask import retriever_for
from sira_seek.workflows.method_parts import METHODS, VARIANTS, Retriever
from sira_seek.workflows.sira_setup import SeekRetrieverName

from .options import LazyBackend, prompt_style_option

index_option = click.option(
    "--index", default=None, help="Index to retrieve from (not for vanilla-llm)."
)


@dataclass(frozen=True)
class SeekChoices:
    """What the shared flags chose; ``None`` leaves a knob at its ``SeekSettings`` default."""

    method: str
    llm_spec: str | None
    retriever: str
    expansions: Path | None
    embedder: str | None
    variant: str
    prompt_style: str
    top_k: int | None
    max_gists: int | None
    min_gists: int | None
    temperature: float | None
    max_steps: int | None
    iter_retgen_rounds: int | None
    thinking: bool | None
    no_cache: bool

    def settings_values(self) -> dict[str, Any]:
        """The chosen knobs as ``SeekSettings`` values, for the workflow request to validate
        (over the defaults and the ``SIRA_SEEK_SEEK_*`` variables)."""
        knobs = {
            "variant": self.variant,
            "prompt_style": self.prompt_style,
            "top_k": self.top_k,
            "max_gists": self.max_gists,
            "min_gists": self.min_gists,
            "temperature": self.temperature,
            "max_steps": self.max_steps,
            "iter_retgen_rounds": self.iter_retgen_rounds,
            "thinking": self.thinking,
        }
        return {"method": self.method, **{k: v for k, v in knobs.items() if v is not None}}

    def make_retriever(self, index: str | None, cluster: dict[str, Any]) -> Retriever | None:
        """The retriever the method needs (none for closed-book answers)."""
        if self.method == "vanilla-llm":
            return None
        if not index:
            raise click.UsageError(f"--method {self.method} retrieves: give --index NAME")
        return retriever_for(
            LazyBackend(cluster),
            method=self.method,  # type: ignore[arg-type]
            index=index,
            retriever=self.retriever,  # type: ignore[arg-type]
            llm=self.llm_spec,
            expansions=self.expansions,
            embedder=self.embedder,
        )


_SEEK_FLAGS = [
    click.option(
        "--method",
        type=click.Choice(list(METHODS)),
        default="seek",
        show_default=True,
        help="SEEK, or a baseline over the same cluster and LLM: vanilla-rag, vanilla-llm, "
        "iter-retgen (T retrieve-generate rounds, --iter-retgen-rounds), rewoo (as the SEEK "
        "paper: all sub-queries planned in one pass, searched in parallel, then solved), "
        "rewoo-sequential (ReWOO's steps in order with earlier evidence substituted; not the "
        "paper's baseline).",
    ),
    click.option(
        "--llm",
        "llm_spec",
        default=None,
        help="LLM spec: openai:URL#MODEL or llamacpp:gemma3-270m (default: "
        "SIRA_SEEK_LLM_BACKEND, else the CPU model); eval qa also takes batch:DIR#MODEL "
        "(offline batch rounds: exit 75 naming each round's request file).",
    ),
    click.option(
        "--retriever",
        type=click.Choice(list(get_args(SeekRetrieverName))),
        default="bm25",
        show_default=True,
        help="How sub-queries search the index; dense and hybrid use its vectors (ingest "
        "--embed or sira-sync --embed).",
    ),
    click.option(
        "--embedder",
        metavar="SPEC",
        default=None,
        help="Embedder for --retriever dense/hybrid (the index's model) and, in eval qa "
        "--diagnostics, for the cosine sub-query similarity (token overlap without one): cpu "
        "or openai:URL#MODEL.",
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
    prompt_style_option,
    click.option("--top-k", type=int, default=None, help="Documents per sub-query (5)."),
    click.option("--max-gists", type=int, default=None, help="Cap on gists (8)."),
    click.option("--min-gists", type=int, default=None, help="Gists asked for at least (2)."),
    click.option("--temperature", type=float, default=None, help="Sampling temperature (0.7)."),
    click.option(
        "--max-steps",
        type=click.IntRange(1, 16),
        default=None,
        help="Cap on retrieval steps of --variant plan / no-init, which stop earlier when the "
        "LLM says the evidence is enough (5).",
    ),
    click.option(
        "--iter-retgen-rounds",
        type=int,
        default=None,
        help="Iter-RetGen's retrieve-generate rounds T, at least 1 (4: the rounds of the SEEK "
        "paper's A.7 analysis).",
    ),
    click.option(
        "--thinking/--no-thinking",
        default=None,
        help="Qwen3-style thinking mode (default off): off sends enable_thinking=false in "
        "chat_template_kwargs (vLLM, llama.cpp server); on needs larger output caps.",
    ),
    click.option("--no-cache", is_flag=True, help="Do not use the LLM response cache."),
]


def seek_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--method, LLM, retriever and SEEK knobs, passed to ``func`` as ``seek: SeekChoices``."""
    names = [f.name for f in fields(SeekChoices)]

    @functools.wraps(func)
    def with_choices(*args: Any, **kwargs: Any) -> Any:
        seek = SeekChoices(**{name: kwargs.pop(name) for name in names})
        return func(*args, seek=seek, **kwargs)

    wrapped: Callable[..., Any] = with_choices
    for opt in reversed(_SEEK_FLAGS):
        wrapped = opt(wrapped)
    return wrapped

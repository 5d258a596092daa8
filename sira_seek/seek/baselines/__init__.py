"""Iterative RAG baselines SEEK is compared with, over the same retriever and LLM client.

Each baseline answers one question and returns the same `SeekResult` record as SEEK (every
search as a `SubQueryStep` with its retrieved ids, the raw and extracted answer, LLM usage per
stage, timings), so checkpoints, scoring and reports treat them like any other method.
`SeekPipeline` dispatches ``--method iter-retgen``, ``rewoo`` (one pass, the SEEK paper's)
and ``rewoo-sequential`` (ReWOO's evidence-substituting worker loop) here.
"""

from __future__ import annotations

from typing import Literal, Protocol

from sira_seek.llm.client import LLMClient

from ..results import QuestionInput, SeekResult
from ..retrieval import Retriever
from ..settings import SeekSettings
from .iter_retgen import IterRetGen
from .rewoo import ReWOO, ReWOOPlan, ReWOOSequential, ReWOOStep, parse_plan

BASELINE_METHODS: tuple[str, ...] = ("iter-retgen", "rewoo", "rewoo-sequential")


class BaselineMethod(Protocol):
    """One question in, one `SeekResult` out; LLM failures raise, search failures are kept."""

    async def answer(self, question: QuestionInput) -> SeekResult: ...


def make_baseline(
    method: str,
    llm: LLMClient,
    retriever: Retriever,
    settings: SeekSettings,
    style: Literal["chat", "fewshot"],
) -> BaselineMethod:
    """The baseline named ``method`` (one of `BASELINE_METHODS`)."""
    if method == "iter-retgen":
        return IterRetGen(llm, retriever, settings=settings, style=style)
    if method == "rewoo":
        return ReWOO(llm, retriever, settings=settings, style=style)
    if method == "rewoo-sequential":
        return ReWOOSequential(llm, retriever, settings=settings, style=style)
    raise ValueError(f"not a baseline method: {method!r} (one of {BASELINE_METHODS})")


__all__ = [
    "BASELINE_METHODS",
    "BaselineMethod",
    "IterRetGen",
    "ReWOO",
    "ReWOOPlan",
    "ReWOOSequential",
    "ReWOOStep",
    "make_baseline",
    "parse_plan",
]

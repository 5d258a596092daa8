"""The prompts of every SEEK stage, for instruction models and for small base models.

Each stage is a method returning an `LLMRequest`, so the pipeline never knows which style is in
use. Chat prompts (`ChatSeekPrompts`) instruct; few-shot prompts (`FewShotSeekPrompts`) show
solved examples and stop at the end of one line, the only format a 270M base model keeps to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple, Protocol

from sira_seek.llm.request import LLMRequest

from .retrieval import RetrievedDoc
from .settings import SeekSettings
from .sketch import SteeringSketch

ContextKind = Literal["sketch", "plan", "notes", "documents"]

MIN_DOC_SHARE = 50
"""Fewest characters a document keeps when many share ``evidence_chars``: a title and a few
words, still worth a line (50 documents at most: ``top_k`` <= 50)."""


class SeekPrompts(Protocol):
    """One request per stage; ``context`` is the rendered sketch (or plan, notes, documents)."""

    style: str

    def render_sketch(self, sketch: SteeringSketch) -> str: ...

    def render_plan(self, plan: SteeringSketch, found: Sequence[str]) -> str:
        """The Plan variant's context: the headings as a plan, then the evidence found so far
        concatenated (not in slots)."""
        ...

    def sketch(self, question: str) -> LLMRequest: ...

    def subquery(
        self,
        question: str,
        context: str,
        kind: ContextKind,
        target: str,
        *,
        attempt: int = 0,
        allow_stop: bool = False,
    ) -> LLMRequest:
        """One search line for ``target``; with ``allow_stop`` the model may instead write
        `output_parsing.ENOUGH` when the context already answers the question."""
        ...

    def evidence(
        self,
        question: str,
        sub_query: str,
        docs: Sequence[RetrievedDoc],
        context: str,
        kind: ContextKind,
        target: str,
    ) -> LLMRequest: ...

    def evidence_all(
        self, question: str, context: str, sections: Sequence[SectionSearch]
    ) -> LLMRequest:
        """Evidence for every section in one reply (Parallel Filling's single context), each
        under its heading so `output_parsing.split_sections` can match it by name."""
        ...

    def evidence_all_reply_prefix(self, sections: Sequence[SectionSearch]) -> str:
        """Text the `evidence_all` prompt already wrote for the model (few-shot prompts open
        the first section), to put back before its reply is split."""
        ...

    def update(self, question: str, context: str) -> LLMRequest:
        """The whole sketch written again (Update, A.3): sections removed or added, open
        headings reworded, filled slots' text edited; `revision.revise_sketch` applies it by
        heading."""
        ...

    def rewrite_page(
        self, question: str, sub_query: str, docs: Sequence[RetrievedDoc], page: str, target: str
    ) -> LLMRequest: ...

    def answer(self, question: str, context: str, kind: ContextKind) -> LLMRequest:
        """SEEK's final answer over its knowledge. Closed-book answers (vanilla LLM) are not
        SEEK's: `baselines.vanilla_prompts` asks them without SEEK's wording."""
        ...


class SectionSearch(NamedTuple):
    """One gist of a one-context fill: its heading, the sub-query sent and what came back."""

    heading: str
    sub_query: str
    docs: Sequence[RetrievedDoc]


def render_docs(docs: Sequence[RetrievedDoc], settings: SeekSettings) -> str:
    """Numbered one-line documents; an empty result says so rather than showing nothing.

    Each document is cut to ``doc_chars``, and all of them share ``evidence_chars``: with
    more documents each one is shorter (never below ``MIN_DOC_SHARE``), so the prompt of a
    large ``top_k`` is no longer than that of the default top-5 and fits the same model (49
    documents of 600 characters were 5,129 tokens, past the embedded model's 2,048)."""
    if not docs:
        return "(no documents found)"
    share = max(MIN_DOC_SHARE, min(settings.doc_chars, settings.evidence_chars // len(docs)))
    return "\n".join(f"[{i}] {doc.snippet(share)}" for i, doc in enumerate(docs, start=1))


class SamplingMixin:
    """Sampling and caps shared by both styles, from `SeekSettings`."""

    settings: SeekSettings

    def _sampling(self, attempt: int = 0) -> dict[str, object]:
        s = self.settings
        seed = None if s.seed is None else s.seed + attempt
        return {
            "temperature": s.temperature,
            "top_p": s.top_p,
            "top_k": s.top_k_sampling,
            "seed": seed,
        }


def make_prompts(style: Literal["chat", "fewshot"], settings: SeekSettings) -> SeekPrompts:
    """The prompt set for a resolved style (see `settings.resolve_prompt_style`)."""
    if style == "chat":
        from .prompts_chat import ChatSeekPrompts

        return ChatSeekPrompts(settings)
    from .prompts_fewshot import FewShotSeekPrompts

    return FewShotSeekPrompts(settings)

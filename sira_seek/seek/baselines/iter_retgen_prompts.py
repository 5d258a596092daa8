"""Iter-RetGen's one prompt: answer the question from this round's documents.

Chat models reason first (the paper's chain-of-thought generation), then tag the answer; the
whole generation feeds the next round's search. The system message is vanilla RAG's
(FlashRAG's, which runs Iter-RetGen with its default RAG prompt; `vanilla_prompts`). Few-shot
prompts for small base models are vanilla RAG's few-shot prompt, ending at ``Answer:
<answer>``, so a 270M model writes a short answer line; that line is then all the next search
gets (the simplification for base models)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from sira_seek.llm.request import LLMRequest

from ..prompts import render_docs
from ..retrieval import RetrievedDoc
from ..settings import SeekSettings
from .prompts_common import chat_request
from .vanilla_prompts import SYSTEM_DOCUMENTS, VanillaPrompts


class IterRetGenPrompts:
    """The generation request of one Iter-RetGen round, in the resolved prompt style."""

    def __init__(self, settings: SeekSettings, style: Literal["chat", "fewshot"]) -> None:
        self.settings = settings
        self.style = style

    def generate(self, question: str, docs: Sequence[RetrievedDoc]) -> LLMRequest:
        s = self.settings
        if self.style == "fewshot":
            return VanillaPrompts(s, "fewshot").answer(question, docs)
        rendered = render_docs(docs, s)
        user = (
            f"Retrieved documents:\n{rendered}\n\nQuestion: {question}\n\n"
            "Answer the question using the documents, and your own knowledge where they are "
            "silent. Reason step by step in at most three sentences, naming the people, "
            "places and facts you rely on, then give the final answer (a few words, or "
            "yes/no) as <answer>...</answer>."
        )
        return chat_request(
            s, SYSTEM_DOCUMENTS, user, max_tokens=s.answer_max_tokens, stop=("</answer>",)
        )

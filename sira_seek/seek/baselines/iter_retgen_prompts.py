"""Iter-RetGen's one prompt: answer the question from this round's documents.

Chat models reason first (the paper's chain-of-thought generation), then tag the answer; the
whole generation feeds the next round's search. Few-shot prompts for small base models end at
``Answer: <answer>`` like SEEK's own few-shot answer, so a 270M model writes a short answer
line; that line is then all the next search gets (the simplification for base models).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from sira_seek.llm.request import LLMRequest

from ..prompts import render_docs
from ..retrieval import RetrievedDoc
from ..settings import SeekSettings
from .prompts_common import chat_request, completion_request, flat

SYSTEM = (
    "You answer multi-hop questions from retrieved documents. Follow the requested output "
    "format exactly."
)

_FEWSHOT_SHOTS = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Documents:\n"
    "[1] Jaws (film): Jaws is a 1975 American thriller film directed by Steven Spielberg.\n"
    "[2] Steven Spielberg: Steven Allan Spielberg (born 1946 in Cincinnati, Ohio) is an "
    "American film director.\n"
    "Answer: <answer>United States</answer>\n\n"
    "Question: Are Lake Tahoe and Crater Lake in the same state?\n"
    "Documents:\n"
    "[1] Lake Tahoe: Lake Tahoe lies on the border of California and Nevada.\n"
    "[2] Crater Lake: Crater Lake is a lake in southern Oregon.\n"
    "Answer: <answer>no</answer>\n\n"
)


class IterRetGenPrompts:
    """The generation request of one Iter-RetGen round, in the resolved prompt style."""

    def __init__(self, settings: SeekSettings, style: Literal["chat", "fewshot"]) -> None:
        self.settings = settings
        self.style = style

    def generate(self, question: str, docs: Sequence[RetrievedDoc]) -> LLMRequest:
        s = self.settings
        rendered = render_docs(docs, s)
        if self.style == "fewshot":
            prompt = (
                f"{_FEWSHOT_SHOTS}Question: {flat(question)}\nDocuments:\n{rendered}\n"
                "Answer: <answer>"
            )
            return completion_request(
                s, prompt, max_tokens=s.answer_max_tokens, stop=("</answer>", "\n")
            )
        user = (
            f"Retrieved documents:\n{rendered}\n\nQuestion: {question}\n\n"
            "Answer the question using the documents, and your own knowledge where they are "
            "silent. Reason step by step in at most three sentences, naming the people, "
            "places and facts you rely on, then give the final answer (a few words, or "
            "yes/no) as <answer>...</answer>."
        )
        return chat_request(s, SYSTEM, user, max_tokens=s.answer_max_tokens, stop=("</answer>",))

"""Vanilla LLM and vanilla RAG's one prompt: answer the question, closed-book or from the
documents of one search of the question.

The SEEK paper's one-shot baselines (§4: "we directly feed the query to the LLM"; "Vanilla RAG
utilizes retrieved documents as contextual input"). Their system messages are FlashRAG's
(Jin et al., 2025), which the SEEK paper follows for its setup: "Answer the question based on
your own knowledge." and "Answer the question based on the given document(s).". FlashRAG goes
on "Only give me the answer and do not output any other words."; here every method answers in
the same format (at most three sentences of reasoning, then ``<answer>...</answer>``), so each
is scored alike, and that format is asked in the user turn instead. Neither prompt says
anything of SEEK's method (sketch, gists, slots): a baseline is not told about the method it
is compared with.

Few-shot prompts (small base models) show two solved questions, with their documents for
vanilla RAG, and end at ``Answer: <answer>``. Iter-RetGen answers each round with this
vanilla-RAG few-shot prompt (`iter_retgen_prompts`), and borrows its chat system message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from sira_seek.llm.request import LLMRequest

from ..prompts import render_docs
from ..retrieval import RetrievedDoc
from ..settings import SeekSettings
from .prompts_common import chat_request, completion_request, flat

FORMAT = "Follow the requested output format exactly."

SYSTEM_CLOSED_BOOK = f"Answer the question based on your own knowledge. {FORMAT}"
"""Vanilla LLM's system message (FlashRAG's naive-generation prompt, its answer-only clause
replaced by the shared answer format)."""

SYSTEM_DOCUMENTS = f"Answer the question based on the given documents. {FORMAT}"
"""Vanilla RAG's (and Iter-RetGen's) system message (FlashRAG's default RAG prompt, its
answer-only clause replaced by the shared answer format)."""

ANSWER_FORMAT = (
    "reason in at most three sentences, then give the final answer (a few words, or yes/no) "
    "as <answer>...</answer>."
)

CLOSED_BOOK_SHOTS = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Answer: <answer>United States</answer>\n\n"
    "Question: Are Lake Tahoe and Crater Lake in the same state?\n"
    "Answer: <answer>no</answer>\n\n"
)

DOCUMENT_SHOTS = (
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


class VanillaPrompts:
    """The answer request of vanilla LLM (no documents) and vanilla RAG (the documents of
    one search), in the resolved prompt style."""

    def __init__(self, settings: SeekSettings, style: Literal["chat", "fewshot"]) -> None:
        self.settings = settings
        self.style = style

    def answer(self, question: str, docs: Sequence[RetrievedDoc] | None) -> LLMRequest:
        """Closed-book when ``docs`` is None; else from ``docs`` (an empty list shows
        "(no documents found)")."""
        s = self.settings
        rendered = None if docs is None else render_docs(docs, s)
        if self.style == "fewshot":
            if rendered is None:
                prompt = f"{CLOSED_BOOK_SHOTS}Question: {flat(question)}\nAnswer: <answer>"
            else:
                prompt = (
                    f"{DOCUMENT_SHOTS}Question: {flat(question)}\nDocuments:\n{rendered}\n"
                    "Answer: <answer>"
                )
            return completion_request(
                s, prompt, max_tokens=s.answer_max_tokens, stop=("</answer>", "\n")
            )
        if rendered is None:
            system = SYSTEM_CLOSED_BOOK
            user = f"Question: {question}\n\nUsing your own knowledge, {ANSWER_FORMAT}"
        else:
            system = SYSTEM_DOCUMENTS
            user = (
                f"Retrieved documents:\n{rendered}\n\nQuestion: {question}\n\nUsing the "
                f"documents above, and your own knowledge where they are silent, {ANSWER_FORMAT}"
            )
        return chat_request(s, system, user, max_tokens=s.answer_max_tokens, stop=("</answer>",))

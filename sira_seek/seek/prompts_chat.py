"""Prompts for instruction-tuned models behind a chat template (vLLM, llama.cpp server, APIs).

Outputs are delimited (``<OUTLINE>``, ``<query>``, ``<answer>``) and stopped at the closing tag,
so a model that reasons first still yields a parseable part within the small caps.
"""

from __future__ import annotations

from collections.abc import Sequence

from sira_seek.llm.request import ChatMessage, LLMRequest

from .prompts import ContextKind, SamplingMixin, render_docs
from .retrieval import RetrievedDoc
from .settings import SeekSettings
from .sketch import SteeringSketch

SYSTEM = (
    "You answer multi-hop questions by planning a short page of evidence and filling it "
    "from retrieved documents. Follow the requested output format exactly."
)

_CONTEXT_LABEL: dict[ContextKind, str] = {
    "sketch": "Current sketch",
    "plan": "Plan and evidence so far",
    "notes": "Notes so far",
    "documents": "Retrieved documents",
}


class ChatSeekPrompts(SamplingMixin):
    style = "chat"

    def __init__(self, settings: SeekSettings) -> None:
        self.settings = settings

    def _request(
        self, user: str, *, max_tokens: int, stop: tuple[str, ...] = (), attempt: int = 0
    ) -> LLMRequest:
        return LLMRequest(
            messages=(
                ChatMessage(role="system", content=SYSTEM),
                ChatMessage(role="user", content=user),
            ),
            max_tokens=max_tokens,
            stop=stop,
            chat_template_kwargs=self.settings.chat_template_kwargs,
            **self._sampling(attempt),  # type: ignore[arg-type]
        )

    def render_sketch(self, sketch: SteeringSketch) -> str:
        return sketch.render()

    def sketch(self, question: str) -> LLMRequest:
        s = self.settings
        user = (
            f"Question: {question}\n\n"
            f"Draft a steering sketch for a page that will answer this question: a title and "
            f"{s.min_gists} to {s.max_gists} section headings (gists) in the order in which the "
            "evidence has to be found (later sections may depend on earlier ones). Each heading "
            "names what its section must establish. Headings must NOT state or guess the "
            "answer.\n\nOutput only:\n<OUTLINE>\n# Title\n## First heading\n## Second heading\n"
            "...\n</OUTLINE>"
        )
        return self._request(user, max_tokens=s.sketch_max_tokens, stop=("</OUTLINE>",))

    def subquery(
        self, question: str, context: str, kind: ContextKind, target: str, *, attempt: int = 0
    ) -> LLMRequest:
        user = (
            f"Question: {question}\n\n{_CONTEXT_LABEL[kind]}:\n{context}\n\n"
            f'Next to fill: "{target}". In one sentence, say what is still missing for it '
            "(use names or facts already found above). Then write ONE search query for it, "
            "a single line of keywords, as <query>...</query>."
        )
        if attempt:
            user += "\nYour last reply was not one query line: reply with only <query>...</query>."
        return self._request(
            user,
            max_tokens=self.settings.subquery_max_tokens,
            stop=("</query>",),
            attempt=attempt,
        )

    def evidence(
        self,
        question: str,
        sub_query: str,
        docs: Sequence[RetrievedDoc],
        context: str,
        kind: ContextKind,
        target: str,
    ) -> LLMRequest:
        user = (
            f"Question: {question}\nSearch query: {sub_query}\n\nRetrieved documents:\n"
            f"{render_docs(docs, self.settings.doc_chars)}\n\n"
            f"{_CONTEXT_LABEL[kind]}:\n{context}\n\n"
            f'Write the evidence for "{target}": one short paragraph (at most three sentences) '
            "with the facts from the documents that it needs, names and numbers included. If "
            "the documents do not contain them, say what is missing. Output only the paragraph."
        )
        return self._request(user, max_tokens=self.settings.slot_max_tokens)

    def update(self, question: str, context: str) -> LLMRequest:
        user = (
            f"Question: {question}\n\nCurrent sketch:\n{context}\n\n"
            "Given the evidence found so far, revise the headings of the sections still marked "
            "<TO BE FILLED> so they aim at what is now known to be missing (keep a heading if it "
            "is still right; keep their number). Headings must not state the answer.\n\n"
            "Output only the revised headings, one per line, as: ## heading"
        )
        return self._request(user, max_tokens=self.settings.sketch_max_tokens)

    def rewrite_page(
        self, question: str, sub_query: str, docs: Sequence[RetrievedDoc], page: str, target: str
    ) -> LLMRequest:
        user = (
            f"Question: {question}\nSearch query: {sub_query}\n\nRetrieved documents:\n"
            f"{render_docs(docs, self.settings.doc_chars)}\n\nCurrent page:\n{page}\n\n"
            f'Rewrite the whole page, replacing the <TO BE FILLED> of "## {target}" with the '
            "evidence from the documents. Output the complete page in markdown."
        )
        return self._request(user, max_tokens=self.settings.rewrite_max_tokens)

    def answer(self, question: str, context: str | None, kind: ContextKind) -> LLMRequest:
        known = f"{_CONTEXT_LABEL[kind]}:\n{context}\n\n" if context is not None else ""
        source = (
            "the material above, and your own knowledge where it is silent"
            if context
            else ("your own knowledge")
        )
        user = (
            f"{known}Question: {question}\n\nUsing {source}, reason in at most three sentences, "
            "then give the final answer (a few words, or yes/no) as <answer>...</answer>."
        )
        return self._request(user, max_tokens=self.settings.answer_max_tokens, stop=("</answer>",))

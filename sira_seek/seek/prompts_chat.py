"""Prompts for instruction-tuned models behind a chat template (vLLM, llama.cpp server, APIs).

Outputs are delimited (``<OUTLINE>``, ``<query>``, ``<answer>``) and stopped at the closing tag,
so a model that reasons first still yields a parseable part within the small caps.
"""

from __future__ import annotations

from collections.abc import Sequence

from sira_seek.llm.request import ChatMessage, LLMRequest

from .output_parsing import ENOUGH
from .prompts import ContextKind, SamplingMixin, SectionSearch, render_docs
from .retrieval import RetrievedDoc
from .settings import SeekSettings
from .sketch import EMPTY_SLOT, SteeringSketch

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
            chat_template_kwargs=self.settings.template_kwargs(),
            **self._sampling(attempt),  # type: ignore[arg-type]
        )

    def render_sketch(self, sketch: SteeringSketch) -> str:
        return sketch.render()

    def render_plan(self, plan: SteeringSketch, found: Sequence[str]) -> str:
        steps = "\n".join(f"{i}. {g.heading}" for i, g in enumerate(plan.gists, start=1))
        return f"Plan:\n{steps}\nEvidence so far: {' '.join(found) or '(none yet)'}"

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
        self,
        question: str,
        context: str,
        kind: ContextKind,
        target: str,
        *,
        attempt: int = 0,
        allow_stop: bool = False,
    ) -> LLMRequest:
        user = (
            f"Question: {question}\n\n{_CONTEXT_LABEL[kind]}:\n{context}\n\n"
            f'Next to fill: "{target}". In one sentence, say what is still missing for it '
            "(use names or facts already found above). Then write ONE search query for it, "
            "a single line of keywords, as <query>...</query>."
        )
        if allow_stop:
            user += (
                "\nIf the evidence above is already enough to answer the question, write "
                f"<query>{ENOUGH}</query> instead of a query."
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
            f"{render_docs(docs, self.settings)}\n\n"
            f"{_CONTEXT_LABEL[kind]}:\n{context}\n\n"
            f'Write the evidence for "{target}": one short paragraph (at most three sentences) '
            "with the facts from the documents that it needs, names and numbers included. If "
            "the documents do not contain them, say what is missing. Output only the paragraph."
        )
        return self._request(user, max_tokens=self.settings.slot_max_tokens)

    def evidence_all(
        self, question: str, context: str, sections: Sequence[SectionSearch]
    ) -> LLMRequest:
        s = self.settings
        blocks = "\n\n".join(
            f"### Section {i}: {section.heading}\nSearch query: {section.sub_query}\n"
            f"Retrieved documents:\n{render_docs(section.docs, s)}"
            for i, section in enumerate(sections, start=1)
        )
        user = (
            f"Question: {question}\n\nCurrent sketch:\n{context}\n\n"
            f"Each section's search query and retrieved documents:\n\n{blocks}\n\n"
            "Write the evidence for every section in one reply. For each section, a line "
            '"## N. heading" (its number and heading as above), then one short paragraph (at '
            "most three sentences) with the facts from its documents that it needs, names and "
            "numbers included; if they are missing, say what is missing. Output only the "
            "sections."
        )
        return self._request(user, max_tokens=s.slot_max_tokens * max(1, len(sections)))

    def evidence_all_reply_prefix(self, sections: Sequence[SectionSearch]) -> str:
        return ""

    def update(self, question: str, context: str) -> LLMRequest:
        s = self.settings
        user = (
            f"Question: {question}\n\nCurrent sketch:\n{context}\n\n"
            "Revise the sketch in the light of the evidence found so far, and write it again "
            'whole in the same markdown: the "# title" line, then every section you keep as a '
            '"## heading" line followed by its content. You may remove a section that is '
            "redundant or no longer needed (filled or not); add a section, with the content "
            f"{EMPTY_SLOT}, for a step the evidence shows is missing; reword the heading of a "
            f"section still marked {EMPTY_SLOT}; and edit the content of a filled section, "
            "deleting what is irrelevant to the question and resolving information that "
            "conflicts with another section, using only facts already in the sketch. Keep the "
            "heading of every filled section you keep word for word. At most "
            f"{s.max_gists} sections. Headings must not state the answer. Output only the "
            "sketch."
        )
        return self._request(user, max_tokens=s.rewrite_max_tokens)

    def rewrite_page(
        self, question: str, sub_query: str, docs: Sequence[RetrievedDoc], page: str, target: str
    ) -> LLMRequest:
        user = (
            f"Question: {question}\nSearch query: {sub_query}\n\nRetrieved documents:\n"
            f"{render_docs(docs, self.settings)}\n\nCurrent page:\n{page}\n\n"
            f'Rewrite the whole page, replacing the <TO BE FILLED> of "## {target}" with the '
            "evidence from the documents. Output the complete page in markdown."
        )
        return self._request(user, max_tokens=self.settings.rewrite_max_tokens)

    def answer(self, question: str, context: str, kind: ContextKind) -> LLMRequest:
        source = (
            "the material above, and your own knowledge where it is silent"
            if context
            else "your own knowledge"
        )
        user = (
            f"{_CONTEXT_LABEL[kind]}:\n{context}\n\nQuestion: {question}\n\nUsing {source}, "
            "reason in at most three sentences, then give the final answer (a few words, or "
            "yes/no) as <answer>...</answer>."
        )
        return self._request(user, max_tokens=self.settings.answer_max_tokens, stop=("</answer>",))

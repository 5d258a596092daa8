"""Few-shot completion prompts for small base models (the CPU default, Gemma 3 270M).

A base model continues patterns rather than following instructions, so every stage shows one
or two solved examples and the model completes a single line, stopped at the newline. The one
line is the constraint: it bounds the output (a handful of tokens), and the tolerant parsers
downstream accept whatever the line holds. A JSON-schema grammar (which the LLM layer offers)
would constrain it too, but on these 2-core machines a 21-token JSON sub-query took 12-17 s
against 1-4 s for the same query as a plain 9-token line: grammar sampling is slower per token
and the JSON wrapper doubles the tokens. Plain lines keep 100 questions within the hour.
"""

from __future__ import annotations

from collections.abc import Sequence

from sira_seek.llm.request import LLMRequest

from .output_parsing import ENOUGH
from .prompts import ContextKind, SamplingMixin, SectionSearch, render_docs
from .retrieval import RetrievedDoc
from .settings import SeekSettings
from .sketch import EMPTY_SLOT, NO_EVIDENCE, SteeringSketch

LINE_STOP = ("\n",)

_SKETCH_SHOTS = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Sections: Director of the film Jaws | Birthplace of that director\n\n"
    "Question: Are Lake Tahoe and Crater Lake in the same state?\n"
    "Sections: State of Lake Tahoe | State of Crater Lake | Comparison of the two states\n\n"
)

_SHOT_SKETCH = (
    "- Director of the film Jaws: Jaws (1975) was directed by Steven Spielberg.\n"
    "- Birthplace of that director: {birthplace}"
)

_SUBQUERY_SHOT = (
    "Question: In which country was the director of the film Jaws born?\n"
    f"Notes:\n{_SHOT_SKETCH.format(birthplace=EMPTY_SLOT)}\n"
    "Next: Birthplace of that director\n"
    "Query: Steven Spielberg birthplace\n\n"
)

_STOP_SHOT = (
    "Question: In which country was the director of the film Jaws born?\n"
    f"Notes:\n{_SHOT_SKETCH.format(birthplace='Spielberg was born in Cincinnati, Ohio.')}\n"
    "Next: what to look up next\n"
    f"Query: {ENOUGH}\n\n"
)
"""Shown before the sub-query shot when the model may stop: notes that already answer."""

_FILL_ALL_SHOT = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Sections and documents:\n"
    "- Director of the film Jaws (query: Jaws 1975 film director)\n"
    "[1] Jaws (film): Jaws is a 1975 American thriller film directed by Steven Spielberg.\n"
    "- Birthplace of that director (query: Steven Spielberg birthplace)\n"
    "[1] Steven Spielberg: Steven Allan Spielberg (born 1946 in Cincinnati, Ohio) is an "
    "American film director.\n"
    "Evidence for each section:\n"
    "- Director of the film Jaws: Jaws (1975) was directed by Steven Spielberg.\n"
    "- Birthplace of that director: Steven Spielberg was born in Cincinnati, Ohio.\n\n"
)

_UPDATE_SHOT = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Notes:\n"
    "- Director of the film Jaws: Jaws (1975) was directed by Steven Spielberg. Jaws was "
    "filmed on Martha's Vineyard.\n"
    f"- Box office of Jaws: {EMPTY_SLOT}\n"
    f"- Birthplace of that director: {EMPTY_SLOT}\n"
    "Revised notes:\n"
    "- Director of the film Jaws: Jaws (1975) was directed by Steven Spielberg.\n"
    f"- Birthplace of Steven Spielberg: {EMPTY_SLOT}\n\n"
)
"""Update's example: an irrelevant sentence deleted from a filled slot, an unneeded open
section dropped, an open heading made concrete with what the evidence found."""

_EVIDENCE_SHOT = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Next: Birthplace of that director\n"
    "Query: Steven Spielberg birthplace\n"
    "Documents:\n"
    "[1] Steven Spielberg: Steven Allan Spielberg (born 1946 in Cincinnati, Ohio) is an "
    "American film director.\n"
    "[2] Jaws (film): Jaws is a 1975 American thriller film.\n"
    "Evidence: [1] Steven Spielberg was born in 1946 in Cincinnati, Ohio, United States.\n\n"
)

_ANSWER_SHOTS = (
    "Question: In which country was the director of the film Jaws born?\n"
    f"Notes:\n{_SHOT_SKETCH.format(birthplace='Spielberg was born in Cincinnati, Ohio.')}\n"
    "Answer: <answer>United States</answer>\n\n"
    "Question: Are Lake Tahoe and Crater Lake in the same state?\n"
    "Notes:\n- State of Lake Tahoe: Lake Tahoe lies in California and Nevada.\n"
    "- State of Crater Lake: Crater Lake is in Oregon.\n"
    "Answer: <answer>no</answer>\n\n"
)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _knowledge_answer_parts(context: str, kind: ContextKind) -> tuple[str, str]:
    """The demonstrations and the knowledge block of an answer prompt with knowledge (the
    label, ``Notes`` or ``Documents``, is the same in both)."""
    label = "Documents" if kind == "documents" else "Notes"
    return _ANSWER_SHOTS.replace("Notes:", f"{label}:"), f"{label}:\n{context}\n"


def _answer_prompt(shots: str, question: str, knowledge: str) -> str:
    """The one answer template: demonstrations, the question, its knowledge block (empty for
    none), and the open answer tag."""
    return f"{shots}Question: {_flat(question)}\n{knowledge}Answer: <answer>"


class FewShotSeekPrompts(SamplingMixin):
    style = "fewshot"

    def __init__(self, settings: SeekSettings) -> None:
        self.settings = settings

    def _request(
        self, prompt: str, *, max_tokens: int, stop: tuple[str, ...] = LINE_STOP, attempt: int = 0
    ) -> LLMRequest:
        return LLMRequest(
            prompt=prompt,
            max_tokens=max_tokens,
            stop=stop,
            **self._sampling(attempt),  # type: ignore[arg-type]
        )

    def render_sketch(self, sketch: SteeringSketch) -> str:
        """One ``- heading: slot`` line per gist: the shape the examples show."""
        lines = []
        for gist in sketch.gists:
            body = EMPTY_SLOT if gist.slot is None else _flat(gist.slot) or NO_EVIDENCE
            lines.append(f"- {gist.heading}: {body}")
        return "\n".join(lines)

    def render_plan(self, plan: SteeringSketch, found: Sequence[str]) -> str:
        """The plan steps as the notes' ``- heading: <TO BE FILLED>`` lines (never filled: the
        evidence goes to one ``- Found so far:`` line, concatenated, shown once there is some).

        Tried on the CPU model: a ``Plan:`` block, or a ``Found so far`` line saying nothing was
        found, made it write empty evidence; a ``- Plan:`` line made it search for "Plan".
        """
        steps = [f"- {_flat(g.heading)}: {EMPTY_SLOT}" for g in plan.gists]
        evidence = _flat(" ".join(found))
        return "\n".join([*steps, *([f"- Found so far: {evidence}"] if evidence else [])])

    def sketch(self, question: str) -> LLMRequest:
        prompt = f"{_SKETCH_SHOTS}Question: {_flat(question)}\nSections:"
        return self._request(prompt, max_tokens=self.settings.sketch_max_tokens)

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
        shots = (_STOP_SHOT if allow_stop else "") + _SUBQUERY_SHOT
        prompt = (
            f"{shots}Question: {_flat(question)}\nNotes:\n{context}\nNext: {_flat(target)}\nQuery:"
        )
        return self._request(prompt, max_tokens=self.settings.subquery_max_tokens, attempt=attempt)

    def evidence(
        self,
        question: str,
        sub_query: str,
        docs: Sequence[RetrievedDoc],
        context: str,
        kind: ContextKind,
        target: str,
    ) -> LLMRequest:
        # The notes come first so the documents sit right before the line to complete.
        prompt = (
            f"{_EVIDENCE_SHOT}Question: {_flat(question)}\nNotes:\n{context}\n"
            f"Next: {_flat(target)}\nQuery: {sub_query}\nDocuments:\n"
            f"{render_docs(docs, self.settings)}\nEvidence:"
        )
        return self._request(prompt, max_tokens=self.settings.slot_max_tokens)

    def evidence_all(
        self, question: str, context: str, sections: Sequence[SectionSearch]
    ) -> LLMRequest:
        """One ``- heading: evidence`` line per section, the block ended by a blank line.

        The prompt opens the first section itself (``- heading:``): a 270M base model left to
        start the block copies the documents' layout instead of the example's.
        """
        s = self.settings
        blocks = "\n".join(
            f"- {_flat(section.heading)} (query: {section.sub_query})\n"
            f"{render_docs(section.docs, s)}"
            for section in sections
        )
        prompt = (
            f"{_FILL_ALL_SHOT}Question: {_flat(question)}\nSections and documents:\n{blocks}\n"
            f"Evidence for each section:\n{self.evidence_all_reply_prefix(sections)}"
        )
        return self._request(
            prompt, max_tokens=s.slot_max_tokens * max(1, len(sections)), stop=("\n\n",)
        )

    def evidence_all_reply_prefix(self, sections: Sequence[SectionSearch]) -> str:
        return f"- {_flat(sections[0].heading)}:" if sections else ""

    def update(self, question: str, context: str) -> LLMRequest:
        """The notes written again (Update, A.3), one ``- heading: text`` line per section:
        the example deletes an irrelevant sentence from a filled slot, drops an unneeded open
        section and rewords another; the model's lines end at the blank line."""
        prompt = f"{_UPDATE_SHOT}Question: {_flat(question)}\nNotes:\n{context}\nRevised notes:\n"
        return self._request(prompt, max_tokens=self.settings.rewrite_max_tokens, stop=("\n\n",))

    def rewrite_page(
        self, question: str, sub_query: str, docs: Sequence[RetrievedDoc], page: str, target: str
    ) -> LLMRequest:
        # The whole page is the output, so it cannot stop at a newline: it stops at the
        # separator the examples use, or at the cap.
        prompt = (
            "Question: In which country was the director of the film Jaws born?\n"
            "Query: Steven Spielberg birthplace\nDocuments:\n"
            "[1] Steven Spielberg: Steven Allan Spielberg (born 1946 in Cincinnati, Ohio).\n"
            f"Page:\n{_SHOT_SKETCH.format(birthplace=EMPTY_SLOT)}\n"
            "New page:\n"
            f"{_SHOT_SKETCH.format(birthplace='Spielberg was born in Cincinnati, Ohio.')}\n"
            "###\n\n"
            f"Question: {_flat(question)}\nQuery: {sub_query}\nDocuments:\n"
            f"{render_docs(docs, self.settings)}\nPage:\n{page}\nNew page:\n"
        )
        return self._request(
            prompt, max_tokens=self.settings.rewrite_max_tokens, stop=("###", "\n\n")
        )

    def answer(self, question: str, context: str, kind: ContextKind) -> LLMRequest:
        shots, knowledge = _knowledge_answer_parts(context, kind)
        prompt = _answer_prompt(shots, question, knowledge)
        return self._request(
            prompt, max_tokens=self.settings.answer_max_tokens, stop=("</answer>", "\n")
        )

    def information_gain_prompts(
        self, question: str, context: str, kind: ContextKind
    ) -> tuple[str, str]:
        """The two prompts DIG compares, (with the knowledge, without it), differing ONLY by
        the knowledge block (``Notes:``/``Documents:`` and the knowledge under it).

        The first is the answer prompt the method's knowledge gets (`answer`); the second is
        the same text with that block left out: the same demonstrations (which show their
        notes), the same question, the same ``Answer: <answer>``. Vanilla LLM's closed-book
        prompt (`baselines.vanilla_prompts`) is not used: its demonstrations differ too, and
        their difference would count as the knowledge's. Every method's knowledge is scored
        with this one template (vanilla RAG's included, whose own answer prompt differs), so
        DIG compares the knowledge, not the methods' prompts.
        """
        shots, knowledge = _knowledge_answer_parts(context, kind)
        return _answer_prompt(shots, question, knowledge), _answer_prompt(shots, question, "")

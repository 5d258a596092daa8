"""ReWOO's prompts: the Planner (whole plan up front), the Solver, and the sequential form's
LLM tool.

The plan format is the ReWOO paper's: ``Plan: <why>`` then ``#E<n> = Tool[input]``.
`ReWOOPrompts` is the one-pass form the SEEK paper compares with (``--method rewoo``): one
tool, ``Search`` (the cluster, top-k documents), and every query must stand on its own, since
all searches run at once before any evidence exists. `ReWOOSequentialPrompts`
(``--method rewoo-sequential``) adds ReWOO's ``LLM`` tool (the model answering an instruction
over the evidence given to it) and lets an input name earlier evidence as ``#E<k>``. Chat
prompts instruct; few-shot prompts show solved plans so a small base model copies the format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sira_seek.llm.request import LLMRequest

from ..settings import SeekSettings
from .prompts_common import chat_request, completion_request, flat

SYSTEM = (
    "You solve multi-hop questions with a search engine over a document collection. Follow "
    "the requested output format exactly."
)

SEARCH_TOOL = (
    "Search[query]: searches the document collection and returns the top documents. The "
    "query is a short line of keywords."
)

TOOLS = (
    f"{SEARCH_TOOL}\n"
    "LLM[instruction]: a language model like you, for reading evidence or using general "
    "knowledge; the instruction can include earlier evidence such as #E1."
)

_ONE_PASS_EXAMPLE = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Plan: Find who directed the film Jaws.\n"
    "#E1 = Search[director of the film Jaws]\n"
    "Plan: Find where the director of Jaws was born.\n"
    "#E2 = Search[birthplace of the director of the film Jaws]\n"
)

_PLAN_EXAMPLE = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Plan: Find documents about the director of the film Jaws.\n"
    "#E1 = Search[director of the film Jaws]\n"
    "Plan: Read the director's name from those documents.\n"
    "#E2 = LLM[Who directed the film Jaws? Given context: #E1]\n"
    "Plan: Find where that director was born.\n"
    "#E3 = Search[#E2 birthplace]\n"
    "Plan: Read the country from those documents.\n"
    "#E4 = LLM[In which country was #E2 born? Given context: #E3]\n"
)

_PLAN_EXAMPLE_2 = (
    "Question: Are Lake Tahoe and Crater Lake in the same state?\n"
    "Plan: Find the state of Lake Tahoe.\n"
    "#E1 = Search[Lake Tahoe state]\n"
    "Plan: Find the state of Crater Lake.\n"
    "#E2 = Search[Crater Lake state]\n"
)

_TOOL_SHOT = (
    "Input: Who directed the film Jaws? Given context: [1] Jaws (film): Jaws is a 1975 "
    "American thriller film directed by Steven Spielberg.\n"
    "Output: Steven Spielberg\n\n"
)

_ONE_PASS_SOLVE_SHOT = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Evidence:\n"
    "#E1 = Search[director of the film Jaws]: [1] Jaws (film): Jaws is a 1975 American "
    "thriller film directed by Steven Spielberg.\n"
    "#E2 = Search[birthplace of the director of the film Jaws]: [1] Steven Spielberg: Steven "
    "Allan Spielberg (born 1946 in Cincinnati, Ohio) is an American film director.\n"
    "Answer: <answer>United States</answer>\n\n"
)

_SOLVE_SHOT = (
    "Question: In which country was the director of the film Jaws born?\n"
    "Evidence:\n"
    "#E1 = Search[director of the film Jaws]: [1] Jaws (film): Jaws is a 1975 American "
    "thriller film directed by Steven Spielberg.\n"
    "#E2 = LLM[Who directed the film Jaws? Given context: #E1]: Steven Spielberg\n"
    "#E3 = Search[Steven Spielberg birthplace]: [1] Steven Spielberg: Steven Allan Spielberg "
    "(born 1946 in Cincinnati, Ohio) is an American film director.\n"
    "Answer: <answer>United States</answer>\n\n"
)

PLAN_PREFIX = "Plan:"
"""Where a few-shot plan prompt stops; the model's text continues it."""


@dataclass(frozen=True)
class SolvedStep:
    """One executed step as the Solver reads it: the call as run, and its evidence."""

    description: str
    call: str
    evidence: str


class ReWOOPrompts:
    """The one-pass form's Planner and Solver requests (and the LLM tool, which only the
    sequential form's plans call) in the resolved prompt style."""

    solve_intro = (
        "A plan of searches was written in one pass and all of them were run; use the "
        "evidence with caution, as long evidence may hold irrelevant text."
    )
    solve_shot = _ONE_PASS_SOLVE_SHOT

    def __init__(self, settings: SeekSettings, style: Literal["chat", "fewshot"]) -> None:
        self.settings = settings
        self.style = style

    def plan(self, question: str) -> LLMRequest:
        s = self.settings
        if self.style == "fewshot":
            prompt = (
                f"Tool:\n{SEARCH_TOOL}\n\n{_ONE_PASS_EXAMPLE}\n{_PLAN_EXAMPLE_2}\n"
                f"Question: {flat(question)}\n{PLAN_PREFIX}"
            )
            return completion_request(
                s, prompt, max_tokens=s.sketch_max_tokens, stop=("\n\n", "Question:")
            )
        user = (
            "For the question below, make a plan that solves it with searches of a document "
            "collection. For each search, write one line `Plan: <what this search finds out>` "
            "and then one line `#E<n> = Search[<query>]`. All the searches run at the same time, "
            "before you see any result, so every query must stand on its own: name the people, "
            "places and things from the question itself, never another search's result (no "
            f"#E1 inside a query). Write the whole plan now, in at most {s.rewoo_max_steps} "
            f"searches.\n\nTool:\n{SEARCH_TOOL}\n\nExample:\n{_ONE_PASS_EXAMPLE}\n"
            f"Question: {question}\n\nOutput only the plan."
        )
        return chat_request(s, SYSTEM, user, max_tokens=s.sketch_max_tokens)

    def llm_tool(self, instruction: str) -> LLMRequest:
        s = self.settings
        if self.style == "fewshot":
            prompt = f"{_TOOL_SHOT}Input: {flat(instruction)}\nOutput:"
            return completion_request(s, prompt, max_tokens=s.slot_max_tokens, stop=("\n",))
        user = f"{instruction}\n\nReply in one short sentence, names and numbers included."
        return chat_request(s, SYSTEM, user, max_tokens=s.slot_max_tokens)

    def solve_context(self, steps: Sequence[SolvedStep]) -> str:
        """The plan and evidence as the Solver is shown them (recorded for DIG too)."""
        if self.style == "fewshot":
            return "\n".join(f"{flat(st.call)}: {flat(st.evidence)}" for st in steps)
        return "\n\n".join(
            f"Plan: {st.description}\n{st.call}\nEvidence: {st.evidence}" for st in steps
        )

    def solve(self, question: str, steps: Sequence[SolvedStep]) -> LLMRequest:
        s = self.settings
        shown = self.solve_context(steps)
        if self.style == "fewshot":
            prompt = (
                f"{self.solve_shot}Question: {flat(question)}\nEvidence:\n{shown}\nAnswer: <answer>"
            )
            return completion_request(
                s, prompt, max_tokens=s.answer_max_tokens, stop=("</answer>", "\n")
            )
        user = (
            f"Solve the question below. {self.solve_intro}\n\n{shown}\n\n"
            f"Question: {question}\n\nReason in at most three sentences, then give the final "
            "answer (a few words, or yes/no) as <answer>...</answer>."
        )
        return chat_request(s, SYSTEM, user, max_tokens=s.answer_max_tokens, stop=("</answer>",))


class ReWOOSequentialPrompts(ReWOOPrompts):
    """ReWOO's own plan format (``rewoo-sequential``): Search and LLM tools, and inputs that
    name earlier evidence (``#E<k>``), filled in as the steps run in order."""

    solve_intro = (
        "A plan was made step by step and evidence was gathered for each step; use it with "
        "caution, as long evidence may hold irrelevant text."
    )
    solve_shot = _SOLVE_SHOT

    def plan(self, question: str) -> LLMRequest:
        s = self.settings
        if self.style == "fewshot":
            prompt = (
                f"Tools:\n{TOOLS}\n\n{_PLAN_EXAMPLE}\n{_PLAN_EXAMPLE_2}\n"
                f"Question: {flat(question)}\n{PLAN_PREFIX}"
            )
            return completion_request(
                s, prompt, max_tokens=s.sketch_max_tokens, stop=("\n\n", "Question:")
            )
        user = (
            "For the question below, make a plan that solves it step by step. For each step, "
            "write one line `Plan: <what this step finds out>` and then one line "
            "`#E<n> = <Tool>[<input>]` calling one tool; its result is stored as evidence "
            "#E<n>, which later tool inputs can use (write #E1, #E2, ...). Write the whole "
            f"plan now, in at most {s.rewoo_max_steps} steps: you will not see any evidence "
            f"before the plan is complete.\n\nTools:\n{TOOLS}\n\nExample:\n{_PLAN_EXAMPLE}\n"
            f"Question: {question}\n\nOutput only the plan."
        )
        return chat_request(s, SYSTEM, user, max_tokens=s.sketch_max_tokens)

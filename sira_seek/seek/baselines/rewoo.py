"""ReWOO (Xu et al., 2023, "ReWOO: Decoupling Reasoning from Observations for Efficient
Augmented Language Models"): plan everything first, run the tools, then solve.

The Planner is called once and writes the whole plan before any evidence exists: steps
``Plan: ...`` / ``#E<n> = Tool[input]`` whose inputs may refer to earlier evidence ``#E<k>``.
Workers then run the steps in plan order, each input with the earlier evidence substituted:
``Search`` is a top-k search on the cluster (recorded as a sub-query with its retrieved ids),
``LLM`` is one call to the same model. The Solver answers from the plan and all the evidence.

Simplified: (1) a ``#E<k>`` inside a Search input is replaced by the short form of that
evidence (an LLM output's first words, or a Search's top document title) rather than all of
its text, so a search stays a line of keywords; inside an LLM input or for the Solver it is the
whole evidence (top-k documents, each cut to ``doc_chars``). (2) Steps run one after another,
not in parallel where independent. (3) The paper's other tools (Google, Wolfram, ...) are
absent; an unknown tool name runs as Search. (4) At most ``rewoo_max_steps`` steps run.
A plan with no parseable step is recorded (note, ``malformed`` step) and replaced by one
Search for the question, so the question is still answered as retrieval-augmented.
The plan is also kept as the record's sketch (one gist per step, its evidence as the slot),
so reports show it as they show SEEK's sketch.
"""

from __future__ import annotations

import logging
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..output_parsing import clean_evidence, extract_answer, strip_reasoning
from ..prompts import render_docs
from ..results import QuestionInput, SeekResult
from ..retrieval import RetrievedDoc
from ..sketch import MAX_HEADING_CHARS, Gist, SteeringSketch
from .rewoo_prompts import PLAN_PREFIX, ReWOOPrompts, SolvedStep
from .run import Baseline, BaselineRun

logger = logging.getLogger(__name__)

Tool = Literal["Search", "LLM"]

_TOOL_NAMES: dict[str, Tool] = {
    "search": "Search",
    "wikipedia": "Search",
    "retrieve": "Search",
    "google": "Search",
    "llm": "LLM",
    "lm": "LLM",
}
_CALL = re.compile(r"#\s*E\s*(\d+)\s*[=:]\s*([A-Za-z][\w-]*)\s*\[(.*)$", re.IGNORECASE)
_PLAN_LINE = re.compile(
    r"^[\s\-*#\d.)]*(?:\*\*)?plan\s*\d*\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*(.*)$", re.IGNORECASE
)
_REFERENCE = re.compile(r"#\s*E\s*(\d+)", re.IGNORECASE)


class ReWOOStep(BaseModel):
    """One planned tool call: why, which variable it fills, the tool and its raw input."""

    model_config = ConfigDict(frozen=True)

    description: str = ""
    var: str = Field(description="The evidence variable it fills, e.g. #E2")
    tool: Tool
    tool_input: str
    raw_line: str = ""

    @property
    def call(self) -> str:
        return f"{self.var} = {self.tool}[{self.tool_input}]"


class ReWOOPlan(BaseModel):
    """The parsed plan; ``malformed`` means nothing parsed and ``steps`` is the fallback."""

    model_config = ConfigDict(frozen=True)

    steps: tuple[ReWOOStep, ...]
    notes: tuple[str, ...] = ()
    malformed: bool = False


def _tool_input(rest: str) -> tuple[str, bool]:
    """The text inside ``[...]`` (to the last ``]``); an unclosed bracket keeps the line."""
    end = rest.rfind("]")
    if end < 0:
        return rest.strip(), False
    return rest[:end].strip(), True


def parse_plan(raw: str | None, question: str, *, max_steps: int) -> ReWOOPlan:
    """The steps of a Planner output; never raises.

    Accepts the call on its own line or after ``Plan: ...`` on the same line, any case, a
    ``:`` for ``=``, an unclosed ``[``, and the paper's ``Wikipedia``/``Google`` tool names.
    Nothing parseable gives one Search for the question, marked ``malformed``.
    """
    notes: list[str] = []
    steps: list[ReWOOStep] = []
    description = ""
    for line in strip_reasoning(raw).splitlines():
        call = _CALL.search(line)
        before = line[: call.start()] if call else line
        plan_line = _PLAN_LINE.match(before)
        if plan_line:
            description = " ".join(plan_line.group(1).split())
        if call is None:
            continue
        number, name, rest = call.groups()
        tool = _TOOL_NAMES.get(name.lower())
        if tool is None:
            notes.append(f"unknown tool {name!r} in #E{number}: run as Search")
            tool = "Search"
        tool_input, closed = _tool_input(rest)
        if not closed:
            notes.append(f"#E{number}: unclosed '[', took the rest of the line")
        if not tool_input:
            notes.append(f"#E{number}: empty {tool} input, step dropped")
            continue
        var = f"#E{int(number)}"
        if any(s.var == var for s in steps):
            notes.append(f"{var} planned twice: the later step overrides it from there on")
        steps.append(
            ReWOOStep(
                description=description,
                var=var,
                tool=tool,
                tool_input=" ".join(tool_input.split()),
                raw_line=line.strip(),
            )
        )
        description = ""
    if len(steps) > max_steps:
        notes.append(f"plan had {len(steps)} steps: ran the first {max_steps}")
        steps = steps[:max_steps]
    if not steps:
        notes.append("plan did not parse: searched the question instead")
        fallback = ReWOOStep(
            description="Search the question (the plan did not parse)",
            var="#E1",
            tool="Search",
            tool_input=" ".join(question.split()),
        )
        return ReWOOPlan(steps=(fallback,), notes=tuple(notes), malformed=True)
    return ReWOOPlan(steps=tuple(steps), notes=tuple(notes))


def substitute(text: str, evidence: dict[str, str], notes: list[str]) -> str:
    """``text`` with every ``#E<k>`` replaced by ``evidence['#E<k>']``; a reference to
    evidence not gathered yet (a later or missing step) becomes empty and is noted."""

    def one(match: re.Match[str]) -> str:
        var = f"#E{int(match.group(1))}"
        if var in evidence:
            return evidence[var]
        notes.append(f"{var} referenced before any step produced it: left empty")
        return ""

    return " ".join(_REFERENCE.sub(one, text).split())


def _short_form(docs: list[RetrievedDoc]) -> str:
    """What a Search's evidence becomes inside a later search: the top document's title."""
    if not docs:
        return ""
    top = docs[0]
    return top.title or " ".join(top.text.split()[:8])


class _Evidence:
    """Evidence gathered so far, by variable, in the two forms later steps substitute."""

    def __init__(self) -> None:
        self.full: dict[str, str] = {}  # what an LLM input and the Solver see
        self.short: dict[str, str] = {}  # what a Search input sees


class ReWOO(Baseline[ReWOOPrompts]):
    """Planner once, Workers per step, Solver once."""

    method = "rewoo"
    prompts_class = ReWOOPrompts

    async def answer(self, question: QuestionInput) -> SeekResult:
        s = self.settings
        run = self.start(question)
        response = await run.generate("plan", self.prompts.plan(question.question))
        raw_plan = response.text
        if self.prompts.style == "fewshot":
            raw_plan = f"{PLAN_PREFIX}{raw_plan}"  # the prompt ended with the label
        run.result.initial_sketch_raw = raw_plan
        plan = parse_plan(raw_plan, question.question, max_steps=s.rewoo_max_steps)
        for text in plan.notes:
            run.note(text)

        evidence = _Evidence()
        solved: list[SolvedStep] = []
        gists: list[Gist] = []
        for i, step in enumerate(plan.steps):
            shown = await self._work(run, plan, i, step, evidence)
            solved.append(SolvedStep(step.description, shown, evidence.full[step.var]))
            heading = f"{step.description} ({shown})" if step.description else shown
            slot = clean_evidence(evidence.full[step.var], max_chars=s.slot_chars)
            gists.append(Gist(heading=heading[:MAX_HEADING_CHARS], slot=slot))
        run.result.sketch = SteeringSketch(title=question.question, gists=tuple(gists))

        run.answered_from(self.prompts.solve_context(solved), "notes")
        final = await run.generate("answer", self.prompts.solve(question.question, solved))
        raw = final.text
        if self.prompts.style == "fewshot":
            raw = "<answer>" + raw  # the prompt ended with the opening tag
        run.result.raw_answer = raw
        run.result.answer = extract_answer(raw)
        return run.finish()

    async def _work(
        self, run: BaselineRun, plan: ReWOOPlan, i: int, step: ReWOOStep, evidence: _Evidence
    ) -> str:
        """Run step ``i`` with earlier evidence substituted; returns the call as it ran."""
        s = self.settings
        notes: list[str] = []
        if step.tool == "Search":
            query = substitute(step.tool_input, evidence.short, notes)
            query = " ".join(query.split()[: s.max_subquery_words])
            if not query:
                notes.append(f"{step.var}: empty search after substitution, searched the question")
                query = run.q.question
            sub_step, docs = await run.search(query, gist_index=i, raw_output=step.raw_line)
            sub_step.malformed = plan.malformed
            evidence.full[step.var] = render_docs(docs, s.doc_chars)
            evidence.short[step.var] = _short_form(docs)
            shown = f"{step.var} = Search[{query}]"
        else:
            instruction = substitute(step.tool_input, evidence.full, notes)
            response = await run.generate("tool", self.prompts.llm_tool(instruction))
            text = clean_evidence(response.text, max_chars=s.slot_chars)
            evidence.full[step.var] = text
            evidence.short[step.var] = " ".join(text.split()[: s.max_subquery_words])
            shown = step.call
        for text in notes:
            run.note(text)
        return shown

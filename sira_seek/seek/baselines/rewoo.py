"""ReWOO (Xu et al., 2023, "ReWOO: Decoupling Reasoning from Observations for Efficient
Augmented Language Models"): plan everything first, run the tools, then solve.

``--method rewoo`` is ReWOO as the SEEK paper runs it (§4, the one-pass baselines): "ReWOO
generates all sub-queries for the given question in a single pass and executes them in
parallel to retrieve external knowledge". The Planner is called once and writes every search
(``Plan: ...`` / ``#E<n> = Search[query]``) before any evidence exists; all the searches then
run concurrently (top-k from the cluster each, recorded as sub-queries in plan order); the
Solver answers from the plan and all the evidence. No evidence ever reaches a query: the
Planner is told that every query must stand on its own, and a ``#E<k>`` it writes in a query
anyway is removed (the planned words around it are searched as written, and a note says
so), because in one pass there is no evidence to put there; the SEEK authors' baseline code
is not published (their repository, OpenBMB/PAGER, holds SEEK's own), so the paper's sentence
is what this follows. A planned ``LLM`` step is dropped with a note: one-pass steps are
sub-queries, and the Solver reads the evidence itself. The searches in flight per question
are the plan's steps (at most ``rewoo_max_steps``); each runs in a worker thread like every
other search, so the batch's ``--concurrency``, the retriever's client and the LLM client's
in-flight cap (a SIRA retriever's expansions) bound them as they bound SEEK's own searches.

``--method rewoo-sequential`` (`ReWOOSequential`) is ReWOO's own worker loop, NOT the SEEK
paper's baseline, kept to compare: the plan may use an ``LLM`` tool (one call to the same
model) and inputs may refer to earlier evidence ``#E<k>``; the steps run one after another in
plan order, each input with the earlier evidence substituted, which makes it iterative. A
``#E<k>`` inside a Search input is replaced by the short form of that evidence (an LLM
output's first words, or a Search's top document title) rather than all of its text, so a
search stays a line of keywords; inside an LLM input or for the Solver it is the whole
evidence (top-k documents, each cut to ``doc_chars``).

Both: the paper's other tools (Google, Wolfram, ...) are absent and an unknown tool name runs
as Search; at most ``rewoo_max_steps`` steps run. A plan with no usable step is recorded
(note, ``malformed`` step) and replaced by one Search for the question, so the question is
still answered as retrieval-augmented. The executed plan is also kept as the record's sketch
(one gist per step, its evidence as the slot), so reports show it as they show SEEK's sketch.
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
from .rewoo_prompts import PLAN_PREFIX, ReWOOPrompts, ReWOOSequentialPrompts, SolvedStep
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


def parse_plan(
    raw: str | None, question: str, *, max_steps: int, search_only: bool = False
) -> ReWOOPlan:
    """The steps of a Planner output; never raises.

    Accepts the call on its own line or after ``Plan: ...`` on the same line, any case, a
    ``:`` for ``=``, an unclosed ``[``, and the paper's ``Wikipedia``/``Google`` tool names.
    ``search_only`` (the one-pass form) drops ``LLM`` steps, noted, before the cap.
    Nothing usable gives one Search for the question, marked ``malformed``.
    """
    notes: list[str] = []
    steps: list[ReWOOStep] = []
    description = ""
    dropped_llm = False
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
        if search_only and tool == "LLM":
            notes.append(f"{var}: LLM step dropped (a one-pass plan only searches)")
            dropped_llm, description = True, ""
            continue
        if any(s.var == var for s in steps):
            later = "both searched" if search_only else "the later step overrides it from there on"
            notes.append(f"{var} planned twice: {later}")
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
        what = "plan has no search step" if dropped_llm else "plan did not parse"
        notes.append(f"{what}: searched the question instead")
        fallback = ReWOOStep(
            description=f"Search the question (the {what})",
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


def strip_references(text: str) -> tuple[str, list[str]]:
    """``text`` without its ``#E<k>`` references (whitespace collapsed), and the references
    removed: a one-pass query is searched as planned, with no evidence put in."""
    found = [f"#E{int(m.group(1))}" for m in _REFERENCE.finditer(text)]
    return " ".join(_REFERENCE.sub(" ", text).split()), found


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
    """One pass, as the SEEK paper's baseline: Planner once, every search at once, Solver
    once."""

    method = "rewoo"
    prompts_class: type[ReWOOPrompts] = ReWOOPrompts
    search_only = True

    async def answer(self, question: QuestionInput) -> SeekResult:
        s = self.settings
        run = self.start(question)
        response = await run.generate("plan", self.prompts.plan(question.question))
        raw_plan = response.text
        if self.prompts.style == "fewshot":
            raw_plan = f"{PLAN_PREFIX}{raw_plan}"  # the prompt ended with the label
        run.result.initial_sketch_raw = raw_plan
        plan = parse_plan(
            raw_plan, question.question, max_steps=s.rewoo_max_steps, search_only=self.search_only
        )
        for text in plan.notes:
            run.note(text)

        solved = await self._execute(run, plan)
        gists = []
        for step, done in zip(plan.steps, solved, strict=True):
            heading = f"{step.description} ({done.call})" if step.description else done.call
            slot = clean_evidence(done.evidence, max_chars=s.slot_chars)
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

    async def _execute(self, run: BaselineRun, plan: ReWOOPlan) -> list[SolvedStep]:
        """Every step's search at once, none seeing another's evidence; in plan order."""
        s = self.settings
        queries = []
        for step in plan.steps:
            query, removed = strip_references(step.tool_input)
            if removed:
                run.note(
                    f"{step.var}: a one-pass query sees no evidence: searched without "
                    f"{', '.join(removed)}"
                )
            query = " ".join(query.split()[: s.max_subquery_words])
            if not query:
                run.note(f"{step.var}: nothing left to search, searched the question")
                query = run.q.question
            queries.append(query)
        found = await run.search_all(queries, raw_outputs=[st.raw_line for st in plan.steps])
        solved = []
        for step, query, (sub_step, docs) in zip(plan.steps, queries, found, strict=True):
            sub_step.malformed = plan.malformed
            call = f"{step.var} = Search[{query}]"
            solved.append(SolvedStep(step.description, call, render_docs(docs, s)))
        return solved


class ReWOOSequential(ReWOO):
    """ReWOO's own worker loop (not the SEEK paper's baseline): steps in plan order, each
    with the earlier evidence substituted, an ``LLM`` tool beside ``Search``."""

    method = "rewoo-sequential"
    prompts_class = ReWOOSequentialPrompts
    search_only = False

    async def _execute(self, run: BaselineRun, plan: ReWOOPlan) -> list[SolvedStep]:
        evidence = _Evidence()
        solved: list[SolvedStep] = []
        for i, step in enumerate(plan.steps):
            shown = await self._work(run, plan, i, step, evidence)
            solved.append(SolvedStep(step.description, shown, evidence.full[step.var]))
        return solved

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
            evidence.full[step.var] = render_docs(docs, s)
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

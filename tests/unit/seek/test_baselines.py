"""Iter-RetGen and ReWOO loops with a scripted LLM double and an in-memory retriever (and, for
ReWOO's concurrency, the in-memory backend double under the BM25 retriever).

`ScriptedBaselineLLMDouble` is a test double above the `LLMClient` protocol (it extends the
LLM helper's generic `ScriptedLLMDouble`): it tells the stage of a request from the prompt
and answers from a per-stage script, keeping every request for prompt-content assertions.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from seek_fakes import RecordingRetriever

from sira_seek.backend import SearchResult
from sira_seek.cli.main import cli
from sira_seek.llm.errors import LLMCallError
from sira_seek.llm.request import LLMRequest
from sira_seek.seek.baselines import parse_plan
from sira_seek.seek.baselines.iter_retgen import generation_for_search
from sira_seek.seek.batch import run_questions
from sira_seek.seek.checkpoint import SeekCheckpoint
from sira_seek.seek.pipeline import RetrieverRequiredError, SeekPipeline
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.retrieval import BM25Retriever, RetrievedDoc
from sira_seek.seek.settings import METHODS, SeekSettings
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.evaluate_qa import QAEvaluationRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from in_memory_backend import InMemoryBackend  # noqa: E402
from scripted_llm import ScriptedLLMDouble  # noqa: E402

QUESTION = "In which country was the director of the film Leland Story born?"
Script = str | Sequence[str] | Callable[[str], str] | LLMCallError

# (marker in a chat prompt, marker at the end of a few-shot prompt, stage)
_STAGES: tuple[tuple[str, str, str], ...] = (
    ("Answer the question using the documents", "Answer: <answer>", "generate"),
    ("make a plan that solves it", "Plan:", "plan"),
    ("Reply in one short sentence", "Output:", "tool"),
    ("Solve the question below", "Answer: <answer>", "solve"),
)


def _text(request: LLMRequest) -> str:
    if request.prompt is not None:
        return request.prompt
    return "\n".join(m.content for m in request.messages or () if m.role == "user")


class ScriptedBaselineLLMDouble(ScriptedLLMDouble):
    """LLM double for the baselines: ``stages`` maps generate/plan/tool/solve to a fixed
    text, a list served in order, a function of the prompt, or an error to raise."""

    def __init__(self, stages: Mapping[str, Script]) -> None:
        super().__init__(default=self._route)
        self.stages = dict(stages)
        self.queues = {k: list(v) for k, v in self.stages.items() if isinstance(v, list | tuple)}
        self.by_stage: dict[str, list[str]] = defaultdict(list)

    @staticmethod
    def stage_of(request: LLMRequest) -> str:
        text = _text(request)
        for chat_marker, fewshot_ending, stage in _STAGES:
            if request.prompt is None and chat_marker in text:
                return stage
            if request.prompt is not None and text.endswith(fewshot_ending):
                # Both few-shot answer prompts end alike; ReWOO's solver shows "Evidence:".
                if stage == "generate" and "\nEvidence:\n#E" in text:
                    return "solve"
                return stage
        raise AssertionError(f"cannot tell the stage of: {text[-200:]!r}")

    def _route(self, request: LLMRequest) -> str:
        stage = self.stage_of(request)
        self.by_stage[stage].append(_text(request))
        script = self.stages[stage]
        if isinstance(script, LLMCallError):
            raise script
        if stage in self.queues:
            assert self.queues[stage], f"script for {stage!r} ran out"
            return self.queues[stage].pop(0)
        if callable(script):
            return script(_text(request))
        return str(script)


def answer(
    llm: ScriptedBaselineLLMDouble,
    retriever: RecordingRetriever | None = None,
    *,
    style: str = "chat",
    **settings: object,
) -> SeekResult:
    pipeline = SeekPipeline(
        llm,
        retriever if retriever is not None else RecordingRetriever(),
        settings=SeekSettings(**settings),  # type: ignore[arg-type]
        prompt_style=style,  # type: ignore[arg-type]
    )
    return asyncio.run(pipeline.answer(QuestionInput(id="q1", question=QUESTION)))


# -- Iter-RetGen -----------------------------------------------------------------------------

GENERATIONS = [
    "The film Leland Story was directed by Ada Brennan. <answer>Ada Brennan</answer>",
    "Ada Brennan was born in Cork, Ireland. <answer>Ireland</answer>",
    "Brennan, born in Cork, is Irish. <answer>Ireland</answer>",
]


def test_iter_retgen_searches_with_the_previous_generation_then_the_question() -> None:
    llm = ScriptedBaselineLLMDouble({"generate": GENERATIONS})
    retriever = RecordingRetriever()
    result = answer(llm, retriever, method="iter-retgen", iter_retgen_rounds=3)

    first, second, third = retriever.queries
    assert first == QUESTION
    assert second == f"{generation_for_search(GENERATIONS[0], 128)} {QUESTION}"
    assert "directed by Ada Brennan" in second and "<answer>" not in second
    assert third.startswith("Ada Brennan was born in Cork, Ireland. Ireland")
    # Each round answers from its own round's documents only (ids name the query's words).
    for prompt, query in zip(llm.by_stage["generate"], retriever.queries, strict=True):
        assert f"Doc 0 for {query}" in prompt
    assert f"Doc 0 for {first}" not in llm.by_stage["generate"][1]
    assert result.raw_answer == GENERATIONS[2] and result.answer == "Ireland"
    assert (result.method, result.variant, result.error) == ("iter-retgen", None, None)
    assert [len(s.retrieved_ids) for s in result.steps] == [5, 5, 5]
    assert [s.raw_output for s in result.steps] == [None, GENERATIONS[0], GENERATIONS[1]]
    # The last generation is the answer call; earlier ones are "generate".
    assert result.usage.by_stage["generate"].calls == 2
    assert result.usage.by_stage["answer"].calls == 1
    assert result.timings.total_s > 0


@pytest.mark.parametrize("rounds", [1, 2, 4])
def test_iter_retgen_runs_exactly_t_rounds(rounds: int) -> None:
    llm = ScriptedBaselineLLMDouble({"generate": lambda _: "Guess. <answer>Ireland</answer>"})
    retriever = RecordingRetriever()
    result = answer(llm, retriever, method="iter-retgen", iter_retgen_rounds=rounds)
    assert len(retriever.queries) == len(result.steps) == rounds
    assert len(llm.calls) == result.usage.total.calls == rounds
    assert result.usage.by_stage["answer"].calls == 1


def test_iter_retgen_caps_the_carried_generation_and_keeps_the_question() -> None:
    long = " ".join(f"word{i}" for i in range(50)) + " <answer>x</answer>"
    llm = ScriptedBaselineLLMDouble({"generate": [long, "<answer>y</answer>"]})
    retriever = RecordingRetriever()
    answer(llm, retriever, method="iter-retgen", iter_retgen_rounds=2, iter_retgen_query_words=8)
    assert retriever.queries[1] == " ".join(f"word{i}" for i in range(8)) + f" {QUESTION}"


def test_iter_retgen_failed_search_is_recorded_and_the_rounds_go_on() -> None:
    llm = ScriptedBaselineLLMDouble(
        {"generate": ["BROKEN lead <answer>a</answer>", "<answer>b</answer>"]}
    )
    retriever = RecordingRetriever(fail_on=["BROKEN"])
    result = answer(llm, retriever, method="iter-retgen", iter_retgen_rounds=2)
    assert result.error is None and result.answer == "b"
    assert result.steps[0].error is None
    assert result.steps[1].error is not None and "EngineError" in result.steps[1].error
    assert result.steps[1].retrieved_ids == []
    assert "(no documents found)" in llm.by_stage["generate"][1]


def test_iter_retgen_few_shot_answer_line_feeds_the_next_search() -> None:
    llm = ScriptedBaselineLLMDouble({"generate": ["Ada Brennan", "Ireland"]})
    retriever = RecordingRetriever()
    result = answer(llm, retriever, style="fewshot", method="iter-retgen", iter_retgen_rounds=2)
    assert retriever.queries[1] == f"Ada Brennan {QUESTION}"
    assert result.raw_answer == "<answer>Ireland" and result.answer == "Ireland"
    assert all(p.endswith("Answer: <answer>") for p in llm.by_stage["generate"])


# -- ReWOO -----------------------------------------------------------------------------------

PLAN = (
    "Plan: Find documents about the director of Leland Story.\n"
    "#E1 = Search[director of Leland Story]\n"
    "Plan: Read the director's name.\n"
    "#E2 = LLM[Who directed Leland Story? Given context: #E1]\n"
    "Plan: Find where that director was born.\n"
    "#E3 = Search[#E2 birthplace]\n"
)


def rewoo_stages(**overrides: Script) -> dict[str, Script]:
    stages: dict[str, Script] = {
        "plan": PLAN,
        "tool": "Ada Brennan",
        "solve": "The evidence says Cork. <answer>Ireland</answer>",
    }
    stages.update(overrides)
    return stages


def test_rewoo_sequential_plans_once_substitutes_evidence_and_solves_from_it() -> None:
    llm = ScriptedBaselineLLMDouble(rewoo_stages())
    retriever = RecordingRetriever()
    result = answer(llm, retriever, method="rewoo-sequential")

    assert len(llm.by_stage["plan"]) == 1 and result.usage.by_stage["plan"].calls == 1
    assert retriever.queries == ["director of Leland Story", "Ada Brennan birthplace"]
    (tool_prompt,) = llm.by_stage["tool"]
    # The LLM tool sees #E1's documents, not the placeholder.
    assert "Doc 0 for director of Leland Story" in tool_prompt and "#E1" not in tool_prompt
    (solve_prompt,) = llm.by_stage["solve"]
    assert "#E3 = Search[Ada Brennan birthplace]" in solve_prompt
    assert "Doc 4 for Ada Brennan birthplace" in solve_prompt
    assert "Evidence: Ada Brennan" in solve_prompt
    assert result.answer == "Ireland" and result.error is None
    assert result.method == "rewoo-sequential"
    assert [s.gist_index for s in result.steps] == [0, 2]
    assert [s.raw_output for s in result.steps] == [
        "#E1 = Search[director of Leland Story]",
        "#E3 = Search[#E2 birthplace]",
    ]
    assert all(len(s.retrieved_ids) == 5 and not s.malformed for s in result.steps)
    assert result.initial_sketch_raw == PLAN
    assert result.sketch is not None and len(result.sketch.gists) == 3
    assert result.sketch.is_complete and result.sketch.gists[1].slot == "Ada Brennan"
    assert result.usage.by_stage["tool"].calls == 1
    assert result.usage.by_stage["answer"].calls == 1 and result.usage.total.calls == 3
    assert result.notes == []


def test_rewoo_sequential_search_reference_to_a_search_uses_the_top_title() -> None:
    plan = "Plan: a\n#E1 = Search[Leland Story film]\nPlan: b\n#E2 = Search[#E1 director]"
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan=plan))
    retriever = RecordingRetriever()
    answer(llm, retriever, method="rewoo-sequential")
    assert retriever.queries == ["Leland Story film", "Doc 0 for Leland Story film director"]


def test_rewoo_malformed_plan_is_recorded_and_still_answered() -> None:
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan="I am not sure what to do here."))
    retriever = RecordingRetriever()
    result = answer(llm, retriever, method="rewoo")
    assert result.error is None and result.answer == "Ireland"
    assert retriever.queries == [QUESTION]
    (step,) = result.steps
    assert step.malformed and len(step.retrieved_ids) == 5
    assert any("plan did not parse" in note for note in result.notes)
    assert result.initial_sketch_raw == "I am not sure what to do here."
    assert len(llm.by_stage["plan"]) == 1 and "tool" not in llm.by_stage


def test_rewoo_sequential_forward_reference_is_emptied_and_noted() -> None:
    plan = "Plan: a\n#E1 = Search[Leland Story #E4 director]\nPlan: b\n#E2 = LLM[Name? #E1]"
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan=plan))
    retriever = RecordingRetriever()
    result = answer(llm, retriever, method="rewoo-sequential")
    assert retriever.queries == ["Leland Story director"]
    assert any("#E4 referenced before" in note for note in result.notes)


def test_rewoo_runs_at_most_max_steps() -> None:
    plan = "\n".join(f"Plan: step {i}\n#E{i} = Search[topic {i}]" for i in range(1, 8))
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan=plan))
    retriever = RecordingRetriever()
    result = answer(llm, retriever, method="rewoo", rewoo_max_steps=3)
    assert [s.sub_query for s in result.steps] == ["topic 1", "topic 2", "topic 3"]
    assert sorted(retriever.queries) == ["topic 1", "topic 2", "topic 3"]
    assert any("plan had 7 steps: ran the first 3" in note for note in result.notes)


def test_rewoo_sequential_few_shot_plan_continues_the_plan_label() -> None:
    # A base model continues after "Plan:", so its text starts with the first plan's words.
    continuation = PLAN.removeprefix("Plan:")
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan=continuation, solve="Ireland"))
    retriever = RecordingRetriever()
    result = answer(llm, retriever, style="fewshot", method="rewoo-sequential")
    assert retriever.queries == ["director of Leland Story", "Ada Brennan birthplace"]
    assert result.initial_sketch_raw == PLAN
    assert result.raw_answer == "<answer>Ireland" and result.answer == "Ireland"
    (solve_prompt,) = llm.by_stage["solve"]
    assert "#E2 = LLM[Who directed Leland Story? Given context: #E1]: Ada Brennan" in solve_prompt


def test_rewoo_llm_failure_fails_the_question_in_a_batch_not_the_batch() -> None:
    llm = ScriptedBaselineLLMDouble(rewoo_stages(solve=LLMCallError("server gone")))
    pipeline = SeekPipeline(llm, RecordingRetriever(), settings=SeekSettings(method="rewoo"))
    report = asyncio.run(
        run_questions(pipeline, [QuestionInput(id="a", question=QUESTION)], concurrency=1)
    )
    (result,) = report.results
    assert report.failed == 1 and result.method == "rewoo"
    assert result.error is not None and "server gone" in result.error


def test_baselines_need_a_retriever_and_are_method_choices() -> None:
    assert {"iter-retgen", "rewoo", "rewoo-sequential"} <= set(METHODS)
    for method in ("iter-retgen", "rewoo", "rewoo-sequential"):
        with pytest.raises(RetrieverRequiredError):
            SeekPipeline(ScriptedBaselineLLMDouble({}), None, settings=SeekSettings(method=method))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # call on the Plan line, ':' for '=', paper's tool names, bold labels
        (
            "**Plan 1:** look it up #E1 = Search[Leland Story]\n#E2: wikipedia[Ada Brennan]",
            [("#E1", "Search", "Leland Story", "look it up"), ("#E2", "Search", "Ada Brennan", "")],
        ),
        # unknown tool runs as Search; an unclosed bracket keeps the rest of the line
        (
            "Plan: x\n#E1 = Calculator[2 + 2]\nPlan: y\n#E2 = LLM[Who is #E1",
            [("#E1", "Search", "2 + 2", "x"), ("#E2", "LLM", "Who is #E1", "y")],
        ),
    ],
)
def test_parse_plan_tolerates_common_format_slips(
    raw: str, expected: list[tuple[str, str, str, str]]
) -> None:
    plan = parse_plan(raw, QUESTION, max_steps=5)
    assert not plan.malformed
    got = [(s.var, s.tool, s.tool_input, s.description) for s in plan.steps]
    assert got == [(v, t, i, d) for v, t, i, d in expected]


def test_parse_plan_notes_what_it_changed() -> None:
    plan = parse_plan(
        "Plan: x\n#E1 = Calculator[2 + 2]\n#E2 = LLM[Who is #E1", QUESTION, max_steps=5
    )
    assert any("unknown tool 'Calculator'" in n for n in plan.notes)
    assert any("#E2: unclosed" in n for n in plan.notes)
    empty = parse_plan("#E1 = Search[]\n<think>#E2 = Search[hidden]</think>", QUESTION, max_steps=5)
    assert empty.malformed and empty.steps[0].tool_input == QUESTION
    assert any("empty Search input" in n for n in empty.notes)


@pytest.mark.parametrize("thinking", [False, True])
def test_baseline_chat_requests_follow_the_thinking_switch(thinking: bool) -> None:
    for method, calls in (("rewoo", 2), ("rewoo-sequential", 3)):
        llm = ScriptedBaselineLLMDouble(rewoo_stages())
        answer(llm, method=method, thinking=thinking)
        assert len(llm.calls) == calls
        assert all(c.chat_template_kwargs == {"enable_thinking": thinking} for c in llm.calls)
    llm = ScriptedBaselineLLMDouble({"generate": "<answer>x</answer>"})
    answer(llm, method="iter-retgen", thinking=thinking, iter_retgen_rounds=2)
    assert all(c.chat_template_kwargs == {"enable_thinking": thinking} for c in llm.calls)


def test_baseline_results_resume_from_a_checkpoint(tmp_path: Path) -> None:
    questions = [QuestionInput(id=f"q{i}", question=f"{QUESTION} ({i})") for i in range(3)]
    path = tmp_path / "ckpt.jsonl"
    for method in ("iter-retgen", "rewoo", "rewoo-sequential"):
        stages = {**rewoo_stages(), "generate": "<answer>Ireland</answer>"}
        llm = ScriptedBaselineLLMDouble(stages)
        pipeline = SeekPipeline(llm, RecordingRetriever(), settings=SeekSettings(method=method))
        ckpt = SeekCheckpoint(path.with_suffix(f".{method}"), method=method, variant=None)
        first = asyncio.run(run_questions(pipeline, questions, checkpoint=ckpt))
        assert (first.answered, first.resumed) == (3, 0)
        calls = len(llm.calls)
        again = asyncio.run(run_questions(pipeline, questions, checkpoint=ckpt))
        assert (again.answered, again.resumed) == (0, 3) and len(llm.calls) == calls
        assert [r.model_dump() for r in again.results] == [r.model_dump() for r in first.results]


# -- ReWOO in one pass (the SEEK paper's baseline) and the sequential form ---------------------

ONE_PASS_PLAN = (
    "Plan: Find the director of Leland Story.\n"
    "#E1 = Search[director of Leland Story]\n"
    "Plan: Read the director's name.\n"
    "#E2 = LLM[Who directed Leland Story? Given context: #E1]\n"
    "Plan: Find where that director was born.\n"
    "#E3 = Search[#E2 birthplace]\n"
    "Plan: Find the country.\n"
    "#E4 = Search[Leland Story director country of birth]\n"
)


class EventRetriever(RecordingRetriever):
    """Records each search in a shared event list (beside the LLM's stages)."""

    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.events = events

    def retrieve(self, query: str, k: int) -> list[RetrievedDoc]:
        docs = super().retrieve(query, k)
        self.events.append(f"search {query}")
        return docs


def test_rewoo_searches_every_step_at_once_and_no_query_carries_evidence() -> None:
    events: list[str] = []

    def solve(prompt: str) -> str:
        events.append("solve")
        return "Cork. <answer>Ireland</answer>"

    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan=ONE_PASS_PLAN, solve=solve))
    retriever = EventRetriever(events)
    result = answer(llm, retriever, method="rewoo")

    planned = ["director of Leland Story", "birthplace", "Leland Story director country of birth"]
    # Every search ran before any evidence was used (the Solver is the only reader).
    assert sorted(events[:3]) == sorted(f"search {q}" for q in planned)
    assert events[3:] == ["solve"]
    # No query carries evidence: no reference, no document title, no tool output.
    for query in retriever.queries:
        assert "#E" not in query and "Doc " not in query and "Ada Brennan" not in query
    assert [s.sub_query for s in result.steps] == planned  # recorded in plan order
    assert [s.gist_index for s in result.steps] == [0, 1, 2]
    assert [s.raw_output for s in result.steps] == [
        "#E1 = Search[director of Leland Story]",
        "#E3 = Search[#E2 birthplace]",
        "#E4 = Search[Leland Story director country of birth]",
    ]
    assert "tool" not in llm.by_stage  # one-pass steps are sub-queries
    assert result.usage.total.calls == 2 and result.usage.by_stage["plan"].calls == 1
    assert any("#E2: LLM step dropped" in note for note in result.notes)
    assert any("#E3: a one-pass query sees no evidence" in note for note in result.notes)
    (solve_prompt,) = llm.by_stage["solve"]
    for query in planned:  # the Solver sees all the evidence
        assert f"Doc 4 for {query}" in solve_prompt
    assert "#E3 = Search[birthplace]" in solve_prompt
    assert result.answer == "Ireland" and result.method == "rewoo"
    assert result.sketch is not None and len(result.sketch.gists) == 3


def test_rewoo_planner_is_told_that_queries_stand_alone() -> None:
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan=ONE_PASS_PLAN))
    answer(llm, method="rewoo")
    (plan_prompt,) = llm.by_stage["plan"]
    assert "All the searches run at the same time" in plan_prompt
    assert "LLM[" not in plan_prompt  # one tool: Search
    llm = ScriptedBaselineLLMDouble(rewoo_stages())
    answer(llm, method="rewoo-sequential")
    assert "LLM[instruction]" in llm.by_stage["plan"][0]


def test_rewoo_few_shot_one_pass_plan() -> None:
    plan = " Find the film.\n#E1 = Search[Leland Story film]\nPlan: x\n#E2 = Search[#E1 director]"
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan=plan, solve="Ireland"))
    retriever = RecordingRetriever()
    result = answer(llm, retriever, style="fewshot", method="rewoo")
    assert [s.sub_query for s in result.steps] == ["Leland Story film", "director"]
    assert result.raw_answer == "<answer>Ireland" and result.answer == "Ireland"
    (plan_prompt,) = llm.by_stage["plan"]
    assert "LLM[" not in plan_prompt and plan_prompt.endswith("Plan:")
    (solve_prompt,) = llm.by_stage["solve"]
    assert "#E2 = Search[director]: [1] Doc 0 for director" in solve_prompt


def test_rewoo_plan_of_only_references_or_llm_steps_searches_the_question() -> None:
    plan = "Plan: a\n#E1 = LLM[Who directed Leland Story?]\nPlan: b\n#E2 = Search[#E1]"
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan=plan))
    retriever = RecordingRetriever()
    result = answer(llm, retriever, method="rewoo")
    assert retriever.queries == [QUESTION]
    assert any("#E2: nothing left to search" in note for note in result.notes)
    llm = ScriptedBaselineLLMDouble(rewoo_stages(plan="Plan: a\n#E1 = LLM[Who directed it?]"))
    result = answer(llm, RecordingRetriever(), method="rewoo")
    assert [s.sub_query for s in result.steps] == [QUESTION] and result.steps[0].malformed
    assert any("plan has no search step" in note for note in result.notes)


class InFlightBackend(InMemoryBackend):
    """The in-memory backend, counting searches in flight; with ``together`` set, a search
    waits (in its worker thread) until that many are in flight, and fails the test if they
    never are, so a sequential implementation fails within ``wait_s`` instead of hanging."""

    def __init__(self, together: int | None = None, wait_s: float = 5.0) -> None:
        super().__init__(
            {
                f"d{i}": {"title": f"Leland Story {i}", "text": "director birthplace"}
                for i in range(6)
            }
        )
        self.barrier = threading.Barrier(together) if together else None
        self.wait_s = wait_s
        self.in_flight = self.most_in_flight = 0
        self.lock = threading.Lock()

    def search(
        self, index: str, body: Mapping[str, Any], params: Mapping[str, Any] | None = None
    ) -> SearchResult:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.barrier is not None:
                try:
                    self.barrier.wait(timeout=self.wait_s)
                except threading.BrokenBarrierError:
                    raise AssertionError(
                        f"searches ran one at a time: {self.most_in_flight} in flight at most, "
                        f"{self.barrier.parties} planned"
                    ) from None
            return super().search(index, body, params)
        finally:
            with self.lock:
                self.in_flight -= 1


def _answer_with_timeout(pipeline: SeekPipeline, timeout_s: float) -> SeekResult:
    async def run() -> SeekResult:
        return await asyncio.wait_for(pipeline.answer(QUESTION), timeout=timeout_s)

    return asyncio.run(run())


def test_rewoo_runs_its_searches_concurrently() -> None:
    plan = "".join(f"Plan: p{i}\n#E{i} = Search[Leland Story part {i}]\n" for i in (1, 2, 3))
    backend = InFlightBackend(together=3)
    pipeline = SeekPipeline(
        ScriptedBaselineLLMDouble(rewoo_stages(plan=plan)),
        BM25Retriever(backend, "idx"),
        settings=SeekSettings(method="rewoo"),
    )
    result = _answer_with_timeout(pipeline, timeout_s=20)
    assert backend.most_in_flight == 3
    assert [s.sub_query for s in result.steps] == [f"Leland Story part {i}" for i in (1, 2, 3)]
    assert all(s.error is None and len(s.retrieved_ids) == 5 for s in result.steps)
    assert result.answer == "Ireland"


def test_rewoo_sequential_runs_one_search_at_a_time_with_evidence_substituted() -> None:
    plan = "Plan: a\n#E1 = Search[Leland Story film]\nPlan: b\n#E2 = Search[#E1 director]"
    backend = InFlightBackend()
    pipeline = SeekPipeline(
        ScriptedBaselineLLMDouble(rewoo_stages(plan=plan)),
        BM25Retriever(backend, "idx"),
        settings=SeekSettings(method="rewoo-sequential"),
    )
    result = _answer_with_timeout(pipeline, timeout_s=20)
    assert backend.most_in_flight == 1
    first, second = (s.sub_query for s in result.steps)
    assert first == "Leland Story film"
    # #E1 became the top document's title: evidence in the later query.
    assert second.startswith("Leland Story ") and second.endswith(" director")
    assert second != "director"


# -- Iter-RetGen rounds: the default and the validation ---------------------------------------


def test_iter_retgen_default_is_four_rounds() -> None:
    assert SeekSettings().iter_retgen_rounds == 4
    llm = ScriptedBaselineLLMDouble({"generate": lambda _: "Guess. <answer>Ireland</answer>"})
    result = answer(llm, RecordingRetriever(), method="iter-retgen")
    assert len(result.steps) == 4 and result.usage.by_stage["generate"].calls == 3


@pytest.mark.parametrize("rounds", [0, -1])
def test_iter_retgen_rounds_below_one_are_refused_by_the_request(
    rounds: int, tmp_path: Path
) -> None:
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"id": "q1", "question": "Who?", "golden_answers": ["x"]}\n')
    with pytest.raises(InvalidInput) as err:
        QAEvaluationRequest.build(
            questions=qa, settings={"method": "iter-retgen", "iter_retgen_rounds": rounds}
        )
    assert "settings.iter_retgen_rounds" in str(err.value)
    assert "greater than or equal to 1" in str(err.value)
    request = QAEvaluationRequest.build(questions=qa, settings={"iter_retgen_rounds": 2})
    assert request.settings.iter_retgen_rounds == 2


def test_eval_qa_iter_retgen_rounds_zero_exits_2_naming_the_field(tmp_path: Path) -> None:
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"id": "q1", "question": "Who?", "golden_answers": ["x"]}\n')
    args = ["eval", "qa", "--qa", str(qa), "--method", "iter-retgen", "--index", "idx"]
    done = CliRunner().invoke(cli, [*args, "--iter-retgen-rounds", "0"])
    assert done.exit_code == 2, done.output
    assert "iter_retgen_rounds" in done.output and "greater than or equal to 1" in done.output


def test_the_renamed_rounds_variable_fails_instead_of_being_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SIRA_SEEK_SEEK_ITER_RETGEN_ROUNDS", "2")
    assert SeekSettings().iter_retgen_rounds == 2
    monkeypatch.setenv("SIRA_SEEK_SEEK_ITER_RETGEN_ITERATIONS", "2")
    with pytest.raises(ValueError, match="renamed SIRA_SEEK_SEEK_ITER_RETGEN_ROUNDS"):
        SeekSettings()

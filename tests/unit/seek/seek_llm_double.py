"""A scripted stand-in for the LLM in SEEK tests: answers each stage from a script.

It reuses the LLM helper's generic ``ScriptedLLMDouble`` (tests/unit/llm/scripted_llm.py) and
only adds routing: the stage of a request (sketch, sub-query, evidence, one-context fill of
every slot, update, page rewrite, answer) is read from the prompt, so a test scripts stages
rather than exact prompt strings.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from scripted_llm import ScriptedLLMDouble  # noqa: E402

from sira_seek.llm.errors import LLMCallError  # noqa: E402
from sira_seek.llm.request import LLMRequest  # noqa: E402

StageScript = str | Sequence[str] | Callable[[str], str] | LLMCallError

# Chat prompts say what they want; few-shot prompts end with the label the model completes.
_CHAT_MARKERS: tuple[tuple[str, str], ...] = (
    ("Draft a steering sketch", "sketch"),
    ("Revise the sketch in the light", "update"),
    ("Rewrite the whole page", "rewrite"),
    ("write ONE search query", "subquery"),
    ("Write the evidence for every section", "fill"),
    ("Write the evidence for", "evidence"),
    ("<answer>...</answer>", "answer"),
)
_FEWSHOT_ENDINGS: tuple[tuple[str, str], ...] = (
    ("Revised notes:\n", "update"),
    ("Sections:", "sketch"),
    ("Query:", "subquery"),
    ("Evidence:", "evidence"),
    ("New page:\n", "rewrite"),
    ("<answer>", "answer"),
)
_NEXT_TARGET = re.compile(r'(?:Next to fill: "|Write the evidence for "|Next: )([^"\n]+)')


def request_text(request: LLMRequest) -> str:
    """Everything the model would read: the prompt, or the user messages joined."""
    if request.prompt is not None:
        return request.prompt
    return "\n".join(m.content for m in request.messages or () if m.role == "user")


def stage_of(request: LLMRequest) -> str:
    text = request_text(request)
    if request.prompt is None:
        for marker, stage in _CHAT_MARKERS:
            if marker in text:
                return stage
    else:
        # the one-context fill prompt opens the first section itself: "...section:\n- A:"
        if "Evidence for each section:\n" in text.rsplit("Question: ", 1)[-1]:
            return "fill"
        for ending, stage in _FEWSHOT_ENDINGS:
            if text.endswith(ending):
                return stage
    raise AssertionError(f"ScriptedSeekLLMDouble cannot tell the stage of: {text[-200:]!r}")


def question_of(request: LLMRequest) -> str:
    """The question being answered: the last ``Question:`` line (few-shot examples come first)."""
    found = re.findall(r"Question: (.+)", request_text(request))
    return found[-1].strip() if found else ""


def target_in(text: str) -> str:
    """The gist a sub-query or evidence prompt is about (the last one named)."""
    found = _NEXT_TARGET.findall(text)
    return found[-1].strip() if found else ""


def target_of(request: LLMRequest) -> str:
    return target_in(request_text(request))


class ScriptedSeekLLMDouble(ScriptedLLMDouble):
    """``LLMClient`` double for SEEK. ``stages`` maps a stage to a fixed text, a list of texts
    served in order, a function of the request text, or an ``LLMCallError`` to raise.
    ``fail_questions`` makes every call about a question containing one of the strings fail.
    ``by_stage`` keeps the requests of each stage for prompt-content assertions."""

    def __init__(
        self,
        stages: Mapping[str, StageScript],
        *,
        fail_questions: Sequence[str] = (),
        delay_s: float = 0.0,
    ) -> None:
        super().__init__(default=self._route, delay_s=delay_s)
        self.stages = dict(stages)
        self.queues = {k: list(v) for k, v in self.stages.items() if isinstance(v, list | tuple)}
        self.fail_questions = tuple(fail_questions)
        self.by_stage: dict[str, list[LLMRequest]] = defaultdict(list)

    def texts(self, stage: str) -> list[str]:
        return [request_text(r) for r in self.by_stage[stage]]

    def _route(self, request: LLMRequest) -> str:
        stage = stage_of(request)
        self.by_stage[stage].append(request)
        question = question_of(request)
        if any(bad in question for bad in self.fail_questions):
            raise LLMCallError(f"scripted failure for {question!r}")
        if stage not in self.stages:
            raise AssertionError(f"no script for stage {stage!r}")
        script = self.stages[stage]
        if isinstance(script, LLMCallError):
            raise script
        if stage in self.queues:
            if not self.queues[stage]:
                raise AssertionError(f"script for stage {stage!r} ran out")
            return self.queues[stage].pop(0)
        if callable(script):
            return script(request_text(request))
        return str(script)


def searching_double(*gists: str, answer: str) -> ScriptedSeekLLMDouble:
    """A SEEK LLM that plans one section per gist, searches each gist as it is, notes every
    evidence and answers ``answer``: for tests of what SEEK searches with (a retriever, an
    embedder), where the reasoning is not under test."""
    sections = "".join(f"\n## {gist}" for gist in gists)
    return ScriptedSeekLLMDouble(
        {
            "sketch": f"# Q{sections}",
            "subquery": lambda text: f"<query>{target_in(text)}</query>",
            "evidence": lambda text: "noted.",
            "answer": lambda text: f"<answer>{answer}</answer>",
        }
    )

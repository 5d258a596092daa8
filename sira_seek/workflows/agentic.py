"""The agentic evaluation workflow: what ``eval agentic`` does, for every front end.

Reads the questions and judgements (and refuses them before any connection or model load),
lets an LLM agent search for each question with the grounded search and category tools under
a page budget, ranks the pages its searches gathered and scores the ranked list: Recall@B at
B = 1, 10, 100 (hit indicators, the SIRA paper's §4.4) against the judgements (and the raw
stream's, labelled), answer coverage of those
pages and Cover-EM of its answers (``sira_seek.agent.evaluation``).

The protocol is the paper's ``evidence-blind`` one by default (the LLM never sees a retrieved
title, snippet or page; one 100-page budget); ``snippets`` is the loop that reads titles and
snippets (budget 10). After each episode the gathered pages are ranked by the same LLM
(``final_ranking="llm"``, §4.4's "final ranking"; ``agent/ranking.py``) and Recall@B reads the
ranked list, the raw stream's figures beside it. The bounds a request leaves out are its protocol's
(``sira_seek.agent.loop.PROTOCOL_DEFAULTS``), set once when the request is validated.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    field_validator,
    model_validator,
)

from sira_seek.agent.evaluation import AgenticReport, evaluate_runs
from sira_seek.agent.loop import (
    PROTOCOLS,
    AgentLoop,
    AgentLoopSettings,
    AgentRun,
    SearchProtocol,
    with_protocol_defaults,
)
from sira_seek.agent.ranking import FINAL_RANKINGS, FinalRanking
from sira_seek.corpus import ReadReport, read_qrels
from sira_seek.llm.batch_rounds import batch_round
from sira_seek.llm.pending import PendingRequests
from sira_seek.redaction import write_masked_text
from sira_seek.seek.questions import QuestionInput, read_questions

from . import validation
from .errors import InvalidInput, NotFound, classified
from .fields import Tau, Weight
from .progress import Progress, note_skipped
from .request_base import WorkflowRequest
from .sira_setup import BackendSource, backend_of

__all__ = [
    "FINAL_RANKINGS",
    "PROTOCOLS",
    "AgenticEvaluation",
    "AgenticEvaluationRequest",
    "AgenticReport",
    "evaluate_agentic",
]
"""What a front end takes from here: the request, the result (and the report it holds), the
workflow, and the protocol and final-ranking choices a flag offers."""

if TYPE_CHECKING:
    from sira_seek.backend import SearchBackend
    from sira_seek.llm.settings import LLMSettings


class AgenticEvaluationRequest(WorkflowRequest):
    """An agentic evaluation: the index, the judged questions, the agent's bounds and LLM."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: str
    questions: Path
    qrels: Path
    llm: str | None = Field(
        default=None, description="LLM spec (default: SIRA_SEEK_LLM_BACKEND, else the CPU model)."
    )
    protocol: SearchProtocol = Field(
        default="evidence-blind",
        description="evidence-blind (the paper's §4.4: no retrieved text reaches the LLM) or "
        "snippets (the LLM reads titles and snippets of the pages found).",
    )
    budget: StrictInt = Field(
        ge=1, description="Unique pages per question (default: 100 evidence-blind, 10 snippets)."
    )
    max_steps: StrictInt = Field(
        ge=1, description="LLM calls per question (default: 10 evidence-blind, 6 snippets)."
    )
    search_k: StrictInt = Field(
        ge=1, le=100, description="Passages per search (default: 20 evidence-blind, 5 snippets)."
    )
    final_ranking: FinalRanking = Field(
        default="llm",
        description="How the gathered pages are ranked before Recall@B (SIRA §4.4: fetched "
        "titles/snippets are 'used only for final ranking'): llm (the LLM rates each page's "
        "title and snippet, agent/ranking.py) or stream (retrieval order).",
    )
    tau: Tau | None = None
    weight: Weight | None = None
    limit: StrictInt | None = Field(default=None, ge=1)
    trace: Path | None = Field(
        default=None, description="Also write every question's whole episode here as JSONL."
    )
    use_cache: bool | None = None
    strict: bool = True

    @model_validator(mode="before")
    @classmethod
    def _protocol_defaults(cls, values: object) -> object:
        return with_protocol_defaults(values)

    @field_validator("index")
    @classmethod
    def _index(cls, value: str) -> str:
        return validation.index_name(value)

    def loop_settings(self) -> AgentLoopSettings:
        """The agent loop's bounds: this request's protocol, budget, step cap and search size."""
        return AgentLoopSettings.for_protocol(
            self.protocol, budget=self.budget, max_steps=self.max_steps, search_k=self.search_k
        )


class AgenticEvaluation(BaseModel):
    """The scored runs (``report``), the LLM spec used, its usage and the wall time."""

    index: str
    llm: str
    report: AgenticReport
    llm_calls: int
    completion_tokens: int
    seconds: float
    skipped: list[str] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The documented ``eval agentic --json`` object (docs/reference/json-output.md): the
        protocol, budget and cut-offs first (in ``report``), then the scores."""
        return {
            "index": self.index,
            "llm": self.llm,
            **self.report.model_dump(mode="json"),
            "llm_calls": self.llm_calls,
            "completion_tokens": self.completion_tokens,
            "seconds": self.seconds,
        }


def read_inputs(
    request: AgenticEvaluationRequest, report: ReadReport
) -> tuple[list[QuestionInput], dict[str, dict[str, int]]]:
    """The questions and judgements, or ``InvalidInput`` before anything is connected."""
    questions = read_questions(
        request.questions, limit=request.limit, strict=request.strict, report=report
    )
    judgements = read_qrels(request.qrels, report, strict=request.strict)
    return questions, judgements


def _check_inputs(
    request: AgenticEvaluationRequest,
    questions: Sequence[QuestionInput],
    judgements: dict[str, dict[str, int]],
) -> None:
    if not questions:
        raise InvalidInput(
            f"{request.questions}: no usable question (a JSON object with `question`)"
        )
    if not any(q.id in judgements for q in questions):
        raise InvalidInput(
            f"none of the {len(questions)} questions in {request.questions} is judged in "
            f"{request.qrels}"
        )


def evaluate_agentic(
    source: BackendSource,
    request: AgenticEvaluationRequest,
    *,
    progress: Progress | None = None,
) -> AgenticEvaluation:
    """Run the agent on every question of ``request`` and score the stream of pages its
    searches returned.

    ``progress`` hears the bad lines a lenient read skipped (before anything is connected),
    the number of questions once the model is loaded, and each question as it finishes. A
    question whose LLM failed is in the report (``report.llm_errors``); it does not raise.

    With ``llm="batch:DIR#MODEL"`` every question's next step goes in one offline round
    (``llm.batch_rounds``): ``WaitingForBatch`` names the round's file, and the same call
    once its output is there replays each episode and goes one step further.
    """
    from sira_seek.llm.settings import LLMSettings

    skipped = ReadReport()
    questions, judgements = read_inputs(request, skipped)
    note_skipped(progress, [str(bad) for bad in skipped.bad])
    _check_inputs(request, questions, judgements)
    llm_settings = LLMSettings()
    spec = request.llm or llm_settings.backend
    started = time.perf_counter()
    with batch_round(spec), classified():
        runs = _run_agent(
            backend_of(source), request, questions, spec, llm_settings,
            progress=progress,
        )  # fmt: skip
    if request.trace is not None:
        request.trace.parent.mkdir(parents=True, exist_ok=True)
        write_masked_text(request.trace, "".join(run.model_dump_json() + "\n" for run in runs))
    report = evaluate_runs(runs, judgements, {q.id: q.golden_answers for q in questions})
    return AgenticEvaluation(
        index=request.index,
        llm=spec,
        report=report,
        llm_calls=sum(run.llm_calls for run in runs),
        completion_tokens=sum(run.completion_tokens for run in runs),
        seconds=round(time.perf_counter() - started, 3),
        skipped=[str(bad) for bad in skipped.bad],
    )


def _run_agent(
    backend: SearchBackend,
    request: AgenticEvaluationRequest,
    questions: Sequence[QuestionInput],
    spec: str,
    llm_settings: LLMSettings,
    *,
    progress: Progress | None,
) -> list[AgentRun]:
    """One episode per question, in order, with the tools on ``request.index``."""
    from sira_seek.agent.prompts import AgentPrompt
    from sira_seek.agent.ranking import rank_run
    from sira_seek.llm.blocking import BlockingLLMClient
    from sira_seek.llm.factory import create_llm_client
    from sira_seek.seek.settings import resolve_prompt_style

    from .agent_tools import AgentTools

    if not backend.index_exists(request.index):
        raise NotFound(f"index {request.index!r} does not exist: run `sira-seek ingest` first")
    # The backend stays open: it is the caller's (the command line's process ends after).
    tools = AgentTools(backend, request.index, tau=request.tau, weight=request.weight)
    llm = BlockingLLMClient(
        create_llm_client(spec, settings=llm_settings, use_cache=request.use_cache)
    )
    style = resolve_prompt_style("auto", spec)
    prompt = AgentPrompt(style, protocol=request.protocol)
    loop = AgentLoop(llm, tools, prompt, request.loop_settings())
    runs: list[AgentRun] = []
    waiting = PendingRequests()  # offline batch rounds: every question's next step in one
    try:
        if progress is not None:
            progress.start(len(questions))
        for question in questions:
            with waiting.collect():
                run = loop.run(question.question, question_id=question.id)
                if request.final_ranking == "llm":
                    run = rank_run(run, llm, chat=style == "chat")
                runs.append(run)
                if progress is not None:
                    progress.advance()
    finally:
        llm.close()
    waiting.raise_if_any()
    return runs

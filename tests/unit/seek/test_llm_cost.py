"""The price beside the accuracy (issue 42, item 7): LLM calls, prompt and completion tokens
and rounds per question, for every method, in ``eval qa`` (text, ``--json``) and in the
diagnostics (text and HTML report).

`ScriptedSeekLLMDouble` is a double above the `LLMClient` protocol; its token counts are the
words of each prompt and reply, so the sums can be checked against the requests it kept.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from seek_fakes import RecordingRetriever
from seek_llm_double import ScriptedSeekLLMDouble, target_in

from sira_seek.cli import eval_qa_cmd
from sira_seek.cli.main import cli
from sira_seek.metrics.llm_cost import QuestionCost, llm_cost
from sira_seek.metrics.seek_diagnostics import seek_diagnostics
from sira_seek.reporting.html_report import render_seek_report
from sira_seek.seek import api
from sira_seek.seek.pipeline import SeekPipeline
from sira_seek.seek.results import QuestionInput, SeekResult
from sira_seek.seek.settings import SeekSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doubles"))
from in_memory_backend import InMemoryBackend  # noqa: E402

QUESTION = "Who directed the film shot in Leland in 1986?"
DOCS = {"overdrive": {"title": "Maximum Overdrive", "text": "A 1986 film by Stephen King."}}


def _double() -> ScriptedSeekLLMDouble:
    return ScriptedSeekLLMDouble(
        {
            "sketch": "<OUTLINE>\n# Leland\n## Film shot in Leland\n## Its director\n</OUTLINE>",
            "subquery": lambda text: f"<query>{target_in(text)}</query>",
            "evidence": "Maximum Overdrive (1986) was directed by Stephen King.",
            "fill": "## 1. Film shot in Leland\nMaximum Overdrive.\n## 2. Its director\nKing.",
            "answer": "<answer>Stephen King</answer>",
            "plan": "unused",
        }
    )


def _run(
    method: str, variant: str = "sequential", style: str = "chat"
) -> tuple[SeekResult, ScriptedSeekLLMDouble]:
    llm = _double()
    settings = SeekSettings(method=method, variant=variant, max_gists=2)  # type: ignore[arg-type]
    pipeline = SeekPipeline(
        llm,
        RecordingRetriever(),
        settings=settings,
        prompt_style=style,  # type: ignore[arg-type]
    )
    result = asyncio.run(pipeline.answer(QuestionInput(id="q1", question=QUESTION)))
    assert result.ok, result.error
    return result, llm


def test_sequential_calls_are_a_round_each() -> None:
    result, llm = _run("seek")
    cost = result.usage.cost()
    # sketch, then (sub-query, evidence) for each of the 2 gists, then the answer
    assert cost.calls == len(llm.calls) == 6
    assert cost.rounds == 6


def test_calls_made_together_share_a_round() -> None:
    # Parallel Filling: the sketch; both gists' sub-queries at once; one fill; the answer.
    # The double answers without waiting, so this also checks that a call that returns at
    # once does not end its round before its siblings start.
    result, llm = _run("seek", "parallel")
    cost = result.usage.cost()
    assert cost.calls == len(llm.calls) == 5
    assert cost.rounds == 4


def test_one_shot_baselines_cost_one_round_and_their_tokens() -> None:
    for method in ("vanilla-llm", "vanilla-rag"):
        result, llm = _run(method, style="fewshot")
        cost = result.usage.cost()
        assert (cost.calls, cost.rounds) == (1, 1)
        # The double counts a completion prompt's words as its prompt tokens.
        assert cost.prompt_tokens == len((llm.calls[0].prompt or "").split()) > 0
        assert cost.completion_tokens == 2  # "<answer>Stephen King</answer>": 2 words


def test_the_run_cost_is_totals_and_means_over_every_question() -> None:
    costs = [
        QuestionCost(calls=9, prompt_tokens=5000, completion_tokens=300, rounds=12),
        QuestionCost(calls=4, prompt_tokens=3000, completion_tokens=100, rounds=4),
        QuestionCost(),  # a failed question that booked nothing still counts as asked
    ]
    cost = llm_cost(costs)
    assert (cost.questions, cost.llm_calls, cost.prompt_tokens) == (3, 13, 8000)
    assert cost.llm_calls_per_question == pytest.approx(13 / 3, abs=1e-4)
    assert cost.prompt_tokens_per_question == pytest.approx(8000 / 3, abs=1e-4)
    assert cost.completion_tokens_per_question == pytest.approx(400 / 3, abs=1e-4)
    assert cost.rounds_per_question == pytest.approx(16 / 3, abs=1e-4)
    assert cost.max_rounds == 12
    assert cost.describe().startswith("4.3 LLM calls, 2666.7 prompt and 133.3 completion tokens")
    empty = llm_cost([])
    assert empty.llm_calls_per_question is None and empty.describe() == "no questions"


def test_a_question_asked_again_with_shorter_evidence_costs_both_attempts() -> None:
    first, _ = _run("seek")
    again = first.usage.model_copy(deep=True)
    again.merge(first.usage)
    assert again.cost().calls == 12 and again.cost().rounds == 12


def test_diagnostics_and_report_show_the_cost() -> None:
    result, _ = _run("seek")
    diag = seek_diagnostics([result.trace()])
    assert diag.cost is not None and diag.cost.llm_calls_per_question == 6
    assert diag.as_report()["cost"]["rounds_per_question"] == 6  # type: ignore[index]
    page = render_seek_report({"seek": diag})
    assert re.search(r'<td data-key="cost.llm_calls_per_question">6(\.0+)?</td>', page)
    assert re.search(r'<td data-key="cost.rounds_per_question">6(\.0+)?</td>', page)


@pytest.mark.parametrize(
    ("method", "style"), [("seek", "chat"), ("vanilla-llm", "fewshot"), ("iter-retgen", "fewshot")]
)
def test_eval_qa_prints_the_cost_for_every_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str, style: str
) -> None:
    llm = _double()
    llm.stages["generate"] = "<answer>Stephen King</answer>"
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: llm)
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "q1", "question": QUESTION, "answer": "Stephen King"}) + "\n")
    args = ["eval", "qa", "--qa", str(qa), "--method", method, "--no-progress", "--no-cache"]
    args += ["--llm", "openai:http://127.0.0.1:9/v1#m", "--prompt-style", style]
    if method != "vanilla-llm":
        # The cluster is the in-memory backend double (below the retriever, above REST).
        monkeypatch.setattr(eval_qa_cmd, "LazyBackend", lambda cluster: InMemoryBackend(DOCS))
        args += ["--index", "idx"]
    done = CliRunner().invoke(cli, [*args, "--json"])
    assert done.exit_code == 0, done.output
    cost = json.loads(done.stdout)["cost"]
    calls = len(llm.calls)
    assert cost["llm_calls"] == calls and cost["questions"] == 1
    assert cost["completion_tokens"] > 0
    # (the double counts no prompt tokens for a chat request: it has no prompt text)
    assert (cost["prompt_tokens"] > 0) == (style == "fewshot")
    assert cost["rounds_per_question"] == {"seek": 6, "vanilla-llm": 1, "iter-retgen": 4}[method]
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 0, text.output
    assert f"LLM cost: {float(calls):.1f} LLM calls" in text.stdout

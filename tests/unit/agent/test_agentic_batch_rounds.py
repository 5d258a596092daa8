"""``eval agentic`` in offline batch rounds (``--llm batch:DIR#MODEL``): each round holds the
next step of every question's episode, an episode replays its answered steps and goes one
further, and the scores end equal to a live ``openai:`` run of the same server (the real
workflow and tools over the in-memory ``SearchBackend`` double)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from in_memory_backend import InMemoryBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from batch_kit import (  # noqa: E402
    BodyServer,
    own_response_cache,  # noqa: E402, F401  (autouse: this test's own LLM cache)
    run_rounds,
)

from sira_seek.workflows.agentic import (  # noqa: E402
    AgenticEvaluation,
    AgenticEvaluationRequest,
    evaluate_agentic,
)

DOCS = {
    "p1": {"title": "Metropolis", "text": "Metropolis is a film by Fritz Lang about machines."},
    "p2": {"title": "Fritz Lang", "text": "Fritz Lang was a film director born in Vienna."},
    "p3": {"title": "Vienna", "text": "Vienna is the capital of Austria on the Danube."},
}
QUESTIONS = [
    {"id": "q1", "question": "Where was the director of Metropolis born?", "answer": "Vienna"},
    {"id": "q2", "question": "Which river flows through Vienna?", "answer": "Danube"},
]
SCRIPT = [
    {"action": "search", "text": "Metropolis film director", "expansions": ["Fritz Lang"]},
    {"action": "search", "text": "Vienna capital", "expansions": ["Danube"]},
    {"action": "answer", "text": "Vienna", "expansions": []},
]


def server(url: str, body: dict[str, Any]) -> str:
    """The scripted step the prompt asks for ("Reply with step N"); a final-ranking request
    (SIRA §4.4, after the episode) gets 90 for the Vienna page, 10 for any other."""
    if "Rate from 0 to 100" in body["messages"][0]["content"]:
        document = body["messages"][-1]["content"].split("Document:\n", 1)[1]
        return json.dumps({"score": 90 if document.startswith("Vienna\n") else 10})
    asked = re.findall(r"Reply with step (\d+)", body["messages"][-1]["content"])
    return json.dumps(SCRIPT[min(int(asked[-1]), len(SCRIPT)) - 1])


def evaluate(tmp_path: Path, llm: str) -> AgenticEvaluation:
    qa, qrels = tmp_path / "qa.jsonl", tmp_path / "qrels.tsv"
    qa.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tp3\t1\nq2\tp3\t1\n")
    request = AgenticEvaluationRequest.build(
        index="idx", questions=qa, qrels=qrels, llm=llm, use_cache=False
    )
    return evaluate_agentic(lambda: InMemoryBackend(DOCS), request)


def test_every_round_holds_each_episode_next_step_and_ends_as_live(tmp_path: Path) -> None:
    with BodyServer(server) as live:
        expected = evaluate(tmp_path, f"openai:{live.base_url}#m")
    rounds = tmp_path / "rounds"
    done, waits = run_rounds(lambda: evaluate(tmp_path, f"batch:{rounds}#m"), rounds, server)
    # one step of each question per round, then one round ranks every question's pages
    assert [w.count for w in waits] == [2, 2, 2, 6]
    got, want = done.to_json(), expected.to_json()
    for found in (got, want):
        found.pop("seconds")
        found.pop("llm")
        for result in found["results"]:
            for step in result.get("steps", []):
                step.pop("llm_seconds", None)
    assert got == want
    assert [r.stop_reason for r in done.report.results] == ["answered", "answered"]
    assert [r.first_relevant_rank for r in done.report.results] == [1, 1]

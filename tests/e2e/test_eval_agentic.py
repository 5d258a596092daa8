"""``sira-seek eval agentic`` end to end: the real CPU model (Gemma 3 270M base, in-process
llama.cpp) drives the agent over wikimh on a real OpenSearch node, for 2 HotpotQA questions
(each question runs the same loop; two give per-question rows, a mean and the "yes" gold).

The default protocol runs (evidence-blind, the SIRA paper's §4.4), with a small budget.
Quality is not asserted (a 270M base model only proves the loop); what is: the JSON keys are
the documented ones (docs/reference/json-output.md) and name the protocol, budget and cut-offs,
the budget and step cap hold, every page of the stream is a real document of the index, no
search observation shows anything but the budget and dropped expansions, the final ranking
(SIRA §4.4, on by default) is a reordering of exactly the stream's pages, and Recall@B (a hit
indicator per question) is what the trace's ranked list gives against the qrels (the stream's
figures what the stream gives), recomputed here independently.
A missing model is a failure, not a skip.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import run_cli
from readme_keys import check_keys, documented

from sira_seek.backend import SearchBackend
from sira_seek.corpus import read_qrels
from sira_seek.llm.llamacpp_inprocess import llama_cpp_available

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

BUDGET = 5
MAX_STEPS = 2  # two CPU-model calls per question keep 3 questions within minutes on 2 cores
SEARCH_K = 3  # below the budget, so a second search can still add pages
QUESTIONS = 2  # the second one's gold is "yes"
SEED = 0  # the loop's sampling seed (temperature 0: greedy, so the run is repeatable)


def test_two_questions_with_the_cpu_model(
    node_urls: dict[str, str],
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run sira-seek llm install cpu")
    print(f"seed={SEED} (temperature 0)")
    index = wikimh_indexes["opensearch"]
    qrels_path = wikimh_dir / "qrels-hotpotqa.tsv"
    trace_path = tmp_path / "trace.jsonl"
    res = run_cli(
        [
            "eval", "agentic",
            "--url", node_urls["opensearch"],
            "--index", index,
            "--qa", str(wikimh_dir / "qa-hotpotqa.jsonl"),
            "--qrels", str(qrels_path),
            "--llm", "llamacpp:gemma3-270m",
            "--limit", str(QUESTIONS),
            "--budget", str(BUDGET),
            "--max-steps", str(MAX_STEPS),
            "--search-k", str(SEARCH_K),
            "--trace", str(trace_path),
            "--json",
        ],
        env={"SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")},  # a real run, not a replay
        timeout=1800,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    print(json.dumps({k: v for k, v in out.items() if k != "results"}))
    check_keys(out, documented("eval agentic"), "eval agentic", nonempty={"results", "steps"})

    assert out["questions"] == QUESTIONS and len(out["results"]) == QUESTIONS
    assert out["protocol"] == "evidence-blind"
    assert (out["budget"], out["max_steps"], out["search_k"]) == (BUDGET, MAX_STEPS, SEARCH_K)
    assert out["cutoffs"] == [1, BUDGET]  # 10 and 100 lie above this budget: not scored
    assert out["recall_at_10"] is None and out["recall_at_100"] is None
    assert out["llm"] == "llamacpp:gemma3-270m" and out["index"] == index
    qrels = read_qrels(qrels_path)
    traces = [json.loads(line) for line in trace_path.read_text().splitlines()]
    assert [t["question_id"] for t in traces] == [r["id"] for r in out["results"]]

    backend = backends["opensearch"]
    blind = re.compile(rf"\d+ new pages, \d+ of {BUDGET} used(; expansions not used: .*)?")
    ranks: list[int | None] = []
    stream_ranks: list[int | None] = []
    for result, trace in zip(out["results"], traces, strict=True):
        pages = [page["id"] for page in trace["pages_read"]]
        assert result["pages_read"] == pages
        assert len(pages) == len(set(pages)) <= BUDGET
        assert 1 <= len(result["steps"]) <= MAX_STEPS
        assert all(len(step["new_pages"]) <= SEARCH_K for step in result["steps"])
        # every page read came from a tool call of the trace, and is a document of the index
        from_steps = [p for step in result["steps"] for p in step["new_pages"]]
        assert from_steps == pages
        for page in trace["pages_read"]:
            stored = backend.get(index, page["id"])
            assert stored is not None, page["id"]
            assert (stored.source or {}).get("title") == page["title"]
        # evidence-blind: a search tells the LLM the budget used and its dropped expansions
        for step in trace["steps"]:
            if step["kind"] == "search":
                assert blind.fullmatch(step["observation"]), step["observation"]
        # the final ranking reorders exactly the pages inside the budget, nothing else
        assert sorted(result["ranked"]) == sorted(pages) and trace["ranked_ids"] == result["ranked"]
        assert trace["rank_calls"] == len(pages)
        relevant = {doc for doc, grade in qrels[result["id"]].items() if grade > 0}
        rank = next((r for r, d in enumerate(result["ranked"], start=1) if d in relevant), None)
        stream = next((r for r, doc in enumerate(pages, start=1) if doc in relevant), None)
        assert (result["first_relevant_rank"], result["stream_first_relevant_rank"]) == (
            rank, stream
        )  # fmt: skip
        ranks.append(rank)
        stream_ranks.append(stream)
        assert result["stop_reason"] in {"answered", "budget", "max_steps"}
        calls = sum(step["kind"] in ("search", "category") for step in trace["steps"])
        assert result["tool_calls"] == calls
    for key, cutoff in (("recall_at_1", 1), ("recall_at_budget", BUDGET)):
        hits = [int(r is not None and r <= cutoff) for r in ranks]
        assert out[key] == pytest.approx(sum(hits) / QUESTIONS)
        hits = [int(r is not None and r <= cutoff) for r in stream_ranks]
        assert out["stream_recall"][f"recall_at_{cutoff}"] == pytest.approx(sum(hits) / QUESTIONS)
    assert out["final_ranking"] == "llm"
    assert out["judged"] == QUESTIONS and out["llm_errors"] == 0
    assert out["llm_calls"] == sum(len(t["steps"]) + t["rank_calls"] for t in traces)
    assert out["completion_tokens"] > 0
    # the second question's gold is "yes": counted like any other, as eval retrieval's coverage
    assert all(r["answer_covered"] is not None for r in out["results"])
    assert out["coverage_questions"] == QUESTIONS and 0.0 <= out["answer_coverage"] <= 1.0

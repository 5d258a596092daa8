"""``sira-seek eval qa --diagnostics --json`` carries SEEK's Table 3 (knowledge conflict /
utilization) and Fig. 6's four-round population together (issue #42's acceptance), and §5.4's
judge, as a user runs it: the installed command, the real CPU model (Gemma 3 270M base,
in-process llama.cpp) as the method's LLM, the on-the-spot closed-book run's LLM and the judge,
and the session's OpenSearch node holding the wikimh corpus, over 3 HotpotQA questions with
vanilla RAG (the shortest method with a knowledge context).

A missing model is a failure, not a skip. Quality is not asserted: a 270M base model rarely
writes the judge's JSON, so the judge's replies are counted either as judged or as malformed,
and the run must not stop on them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from sira_seek.llm.llamacpp_inprocess import llama_cpp_available
from sira_seek.metrics.seek_knowledge import JUDGE_DIMENSIONS

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

QUESTIONS = 3

CPU_CAPS = {
    "SIRA_SEEK_SEEK_DOC_CHARS": "120",
    "SIRA_SEEK_SEEK_ANSWER_MAX_TOKENS": "12",
}


def test_table3_fig6_and_the_judge_in_eval_qa_json(
    node_urls: dict[str, str],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run sira-seek llm install cpu")
    args = [
        "eval", "qa",
        "--index", wikimh_indexes["opensearch"], "--url", node_urls["opensearch"],
        "--qa", str(wikimh_dir / "qa-hotpotqa.jsonl"), "--limit", str(QUESTIONS),
        "--method", "vanilla-rag", "--llm", "llamacpp:gemma3-270m", "--temperature", "0",
        "--concurrency", "1", "--diagnostics", "--closed-book",
        "--judge-llm", "llamacpp:gemma3-270m", "--json",
    ]  # fmt: skip
    done = run_cli(
        args,
        env={**CPU_CAPS, "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")},
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), done.stderr[-3000:]  # seen once empty with exit 0: show why
    out = json.loads(done.stdout)
    assert out["answered"] == QUESTIONS and out["failed"] == 0
    diag = out["diagnostics"]
    # Fig. 6's population (vanilla RAG retrieves once: no question took four rounds).
    assert diag["fig6_rounds"] == 4 and diag["fig6_questions"] == 0
    assert diag["document_overlap_by_iteration_fig6"] == []
    # Table 3: every question is in one population (the closed-book run answered all three).
    split = diag["knowledge_split"]
    print(json.dumps(split))
    assert split["metric"] == "cover_em" and split["unmatched"] == 0
    conflict, utilization = split["conflict"], split["utilization"]
    assert conflict["questions"] + utilization["questions"] == QUESTIONS
    assert sorted(split["conflict_ids"] + split["utilization_ids"]) == sorted(
        r["id"] for r in diag["per_question"]
    )
    for part in (conflict, utilization):
        assert all(0.0 <= part[m] <= 1.0 for m in ("cover_em", "em", "f1"))
    # The judge saw every question's retrieved documents; each reply judged or malformed.
    judged = diag["knowledge_judge"]
    print(json.dumps({k: v for k, v in judged.items() if k != "verdicts"}))
    assert judged["context"] == "documents" and judged["no_context"] == 0
    assert judged["judged"] + judged["malformed"] + judged["failed"] == QUESTIONS
    assert set(judged["means"]) == set(JUDGE_DIMENSIONS)
    assert "our wording" in judged["template"]

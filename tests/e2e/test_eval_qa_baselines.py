"""``sira-seek eval qa --method iter-retgen|rewoo`` end to end as a user runs it: the installed
command, the real CPU model (Gemma 3 270M base, in-process llama.cpp, few-shot prompts), and
the session's OpenSearch node holding the wikimh corpus, over 2 HotpotQA questions (every
question runs the same loop; two still make a run of several).

A missing model is a failure, not a skip. Quality is not asserted (a 270M base model only
proves the loops run): the printed scores have the documented keys and count 2 questions, and
the predictions file shows each method's loop with real document ids from the cluster.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli
from readme_keys import check_keys, documented

from sira_seek.llm.llamacpp_inprocess import llama_cpp_available
from sira_seek.seek.results import SeekResult

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

QUESTIONS = 2

# Small caps keep the questions to a few minutes per method on 2 cores; temperature 0 makes
# the run repeatable (no seed to print).
CPU_CAPS = {
    "SIRA_SEEK_SEEK_DOC_CHARS": "120",
    "SIRA_SEEK_SEEK_SLOT_CHARS": "200",
    "SIRA_SEEK_SEEK_SKETCH_MAX_TOKENS": "64",
    "SIRA_SEEK_SEEK_SLOT_MAX_TOKENS": "24",
    "SIRA_SEEK_SEEK_ANSWER_MAX_TOKENS": "12",
    "SIRA_SEEK_SEEK_REWOO_MAX_STEPS": "3",
}


@pytest.fixture(scope="module")
def corpus_ids(wikimh_dir: Path) -> set[str]:
    with (wikimh_dir / "corpus.jsonl").open(encoding="utf-8") as handle:
        return {json.loads(line)["_id"] for line in handle if line.strip()}


@pytest.mark.parametrize("method", ["iter-retgen", "rewoo"])
def test_eval_qa_baseline_on_the_cpu_model(
    method: str,
    node_urls: dict[str, str],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    corpus_ids: set[str],
    tmp_path: Path,
) -> None:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run sira-seek llm install cpu")
    predictions = tmp_path / "predictions.jsonl"
    done = run_cli(
        [
            "eval",
            "qa",
            "--index",
            wikimh_indexes["opensearch"],
            "--url",
            node_urls["opensearch"],
            "--qa",
            str(wikimh_dir / "qa-hotpotqa.jsonl"),
            "--limit",
            str(QUESTIONS),
            "--method",
            method,
            "--llm",
            "llamacpp:gemma3-270m",
            "--temperature",
            "0",
            "--concurrency",
            "1",
            "--predictions",
            str(predictions),
            "--json",
            # 3 rounds, not the default 4, keep the CPU run short (and use the flag).
            *(["--iter-retgen-rounds", "3"] if method == "iter-retgen" else []),
        ],
        env={**CPU_CAPS, "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache")},
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    check_keys(out, documented("eval qa"), "eval qa", nonempty=set())
    n = QUESTIONS
    assert (out["questions"], out["answered"], out["failed"], out["no_gold"]) == (n, n, 0, 0)
    assert all(0.0 <= out[m] <= 1.0 for m in ("cover_em", "em", "f1"))

    results = [
        SeekResult.model_validate_json(line) for line in predictions.read_text().splitlines()
    ]
    assert len(results) == QUESTIONS
    for result in results:
        assert result.method == method and result.error is None, result.error
        assert result.steps, f"{result.id}: no search recorded"
        for step in result.steps:
            assert step.error is None and step.sub_query.strip()
            assert len(step.retrieved_ids) == 5 and set(step.retrieved_ids) <= corpus_ids
        assert result.raw_answer is not None and result.raw_answer.startswith("<answer>")
        assert result.usage.by_stage["answer"].calls == 1
        assert result.usage.total.completion_tokens > 0
        # What the answer was asked from is kept for DIG: the last round's documents, or the
        # plan's evidence.
        assert result.answer_context_kind == ("documents" if method == "iter-retgen" else "notes")
        assert result.answer_context
        if method == "iter-retgen":
            # The last round's 5 documents, numbered as the answer prompt showed them.
            assert result.answer_context.startswith("[1] ") and "\n[5] " in result.answer_context
            # T = 3 (--iter-retgen-rounds): the question first, then each previous generation
            # + question.
            assert len(result.steps) == 3 and result.steps[0].sub_query == result.question
            for step in result.steps[1:]:
                assert step.sub_query.endswith(result.question) and step.raw_output
            assert result.usage.by_stage["generate"].calls == 2
        else:
            # One planner call (one pass: every search planned before any runs); the executed
            # plan is the record's sketch, one gist per step.
            assert result.usage.by_stage["plan"].calls == 1
            assert result.initial_sketch_raw and result.initial_sketch_raw.startswith("Plan:")
            assert result.sketch is not None and result.sketch.is_complete
            assert 1 <= len(result.sketch.gists) <= 3
            assert {s.gist_index for s in result.steps} <= set(range(len(result.sketch.gists)))
    print(
        f"{method}: cover_em={out['cover_em']} em={out['em']} f1={out['f1']} "
        f"steps={[len(r.steps) for r in results]} notes={[r.notes for r in results]}"
    )

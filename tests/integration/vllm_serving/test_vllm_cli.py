"""The command line through ``--llm openai:`` against a real vLLM server: SIRA search, sira-sync,
SEEK ask and eval qa, each as a user runs it (the installed console scripts).

The spec given to the commands names no model, so the client must read it from ``/v1/models``
and every recorded call must carry that name. The served model is Gemma 3 270M, a base model:
SEEK runs with the few-shot prompts (``--prompt-style fewshot``) and small caps, and only the
pipeline is asserted, not the quality of the answers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from vllm_kit import SLOW_SERVER_ENV, VllmEndpoint

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from cli_runner import run_cli  # noqa: E402

from sira_seek.backend import SearchBackend  # noqa: E402
from sira_seek.ingest import ingest_corpus  # noqa: E402
from sira_seek.metrics.qa import cover_em, extract_tagged_answer  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
#: Small SEEK caps: a 270M model at a few tokens a second on 2 shared cores.
SMALL_SEEK = {
    "SIRA_SEEK_SEEK_MAX_GISTS": "2",
    "SIRA_SEEK_SEEK_SKETCH_MAX_TOKENS": "48",
    "SIRA_SEEK_SEEK_SUBQUERY_MAX_TOKENS": "20",
    "SIRA_SEEK_SEEK_SLOT_MAX_TOKENS": "32",
    "SIRA_SEEK_SEEK_ANSWER_MAX_TOKENS": "16",
    "SIRA_SEEK_SEEK_DOC_CHARS": "120",
    "SIRA_SEEK_SEEK_SLOT_CHARS": "200",
}


def llm_env(tmp_path: Path, **more: str) -> dict[str, str]:
    """A cache of the test's own (so every call is live) and timeouts for a slow server."""
    return {**SLOW_SERVER_ENV, "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "llm-cache"), **more}


def sira_sync(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "sira-sync"
    found = str(exe) if exe.exists() else shutil.which("sira-sync")
    assert found, "the sira-sync console script is not installed (pip install -e .)"
    return subprocess.run(
        [found, *args], capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, **env},
    )  # fmt: skip


def test_search_sira_candidates_come_from_the_vllm_model(
    vllm_server: VllmEndpoint,
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    tmp_path: Path,
) -> None:
    args = [
        "search", QUESTION, "--index", wikimh_indexes["opensearch"],
        "--url", backends["opensearch"].info.url, "--llm", vllm_server.spec_without_model,
        "--json",
    ]  # fmt: skip
    first = run_cli(args, env=llm_env(tmp_path), timeout=900)
    assert first.returncode == 0, first.stderr[-2000:]
    out = json.loads(first.stdout)
    print("candidates:", [(c["phrase"], c["decision"], c["doc_freq"]) for c in out["candidates"]])
    assert out["expansion_source"] == "llm" and out["doc_count"] == 9003
    assert out["candidates"], "the model proposed nothing"
    for candidate in out["candidates"]:
        assert candidate["phrase"] and candidate["decision"] and candidate["doc_freq"] >= 0
    # The expansion's call first, then the rerank's (SIRA reranks the top hits with a live LLM
    # by default, §3.1): at least one each.
    call, *rerank_calls = out["llm_calls"]
    assert rerank_calls and out["timings_ms"]["rerank_ms"] > 0
    # No model in the spec: the name is the one /v1/models lists.
    assert call["backend"] == "openai" and call["model"] == vllm_server.model
    assert call["error"] is None and not call["cache_hit"]
    assert call["prompt_tokens"] > 0 and call["completion_tokens"] > 0
    assert out["hits"], "no hits"

    again = run_cli(args, env=llm_env(tmp_path), timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    repeat = json.loads(again.stdout)
    assert repeat["llm_calls"][0]["cache_hit"]  # cached under the model /v1/models named
    assert repeat["candidates"] == out["candidates"]
    assert [h["_id"] for h in repeat["hits"]] == [h["_id"] for h in out["hits"]]


def test_sira_sync_enriches_a_small_index_and_status_is_current(
    vllm_server: VllmEndpoint,
    backends: dict[str, SearchBackend],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    backend = backends["opensearch"]
    index = f"test-vllm-sync-{uuid.uuid4().hex[:8]}"
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:5]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    original = {json.loads(line)["_id"]: json.loads(line) for line in lines}
    common = ["--index", index, "--url", backend.info.url]
    run_args = [
        *common, "--llm", vllm_server.spec_without_model, "--concurrency", "5",
        "--state-dir", str(tmp_path / "state"), "--no-progress", "--json",
    ]  # fmt: skip
    try:
        ingest_corpus(backend, index, corpus)
        first = sira_sync(*run_args, env=llm_env(tmp_path))
        assert first.returncode == 0, first.stderr[-2000:]
        report = json.loads(first.stdout)
        counts = report["counts"]
        # Schema-constrained answers all parse: every document enriched, none failed.
        assert counts["seen"] == counts["new"] == counts["enriched"] == 5, counts
        assert counts["failed"] == 0 and counts["phrases_proposed"] > 0
        assert report["fingerprint"]["model"] == f"openai:{vllm_server.model}"
        usage = report["llm_usage"]
        assert usage["calls"] == usage["succeeded"] == 5 and usage["errors"] == 0
        assert list(usage["by_backend_model"]) == [f"openai:{vllm_server.model}"]

        status = sira_sync("status", *common, "--json", env={})
        assert status.returncode == 0, status.stderr[-2000:]
        state = json.loads(status.stdout)
        assert (state["total"], state["enriched"]) == (5, 5)
        assert state["stale"] == state["failed"] == state["never_enriched"] == 0
        (fingerprint,) = state["by_fingerprint"]
        assert fingerprint["model"] == f"openai:{vllm_server.model}"

        again = sira_sync(*run_args, env=llm_env(tmp_path))
        assert again.returncode == 0, again.stderr[-2000:]
        second = json.loads(again.stdout)
        assert second["counts"]["current"] == 5 and second["counts"]["enriched"] == 0
        assert not (second["llm_usage"] or {}).get("calls")  # nothing asked again

        backend.refresh(index)
        for page in backend.scan(index, page_size=50):
            for hit in page:
                src = hit.source or {}
                doc = original[hit.id]
                assert (src["title"], src["text"]) == (doc["title"], doc["text"])
                assert src["sira_sync"]["status"] == "enriched"
    finally:
        backend.delete_index(index)


def test_ask_answers_with_seek_through_vllm(
    vllm_server: VllmEndpoint,
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    tmp_path: Path,
) -> None:
    args = [
        "ask", QUESTION, "--index", wikimh_indexes["opensearch"],
        "--url", backends["opensearch"].info.url, "--llm", vllm_server.spec_without_model,
        "--prompt-style", "fewshot", "--temperature", "0", "--json",
    ]  # fmt: skip
    done = run_cli(args, env=llm_env(tmp_path, **SMALL_SEEK), timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    headings = [g["heading"] for g in result["sketch"]["gists"]]
    print("answer:", result["answer"], "| gists:", headings)
    assert result["error"] is None and result["method"] == "seek"
    assert result["raw_answer"].startswith("<answer>") and result["answer"]
    assert 1 <= len(result["sketch"]["gists"]) <= 2
    assert result["steps"] and all(len(s["retrieved_ids"]) == 5 for s in result["steps"])
    stages = result["usage"]["by_stage"]
    assert stages["sketch"]["calls"] == 1 and stages["answer"]["calls"] == 1
    assert sum(s["completion_tokens"] for s in stages.values()) > 0


def test_eval_qa_two_hotpotqa_questions_through_vllm(
    vllm_server: VllmEndpoint,
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    predictions = tmp_path / "predictions.jsonl"
    args = [
        "eval", "qa", "--qa", str(wikimh_dir / "qa-hotpotqa.jsonl"), "--limit", "2",
        "--index", wikimh_indexes["opensearch"], "--url", backends["opensearch"].info.url,
        "--llm", vllm_server.spec_without_model, "--prompt-style", "fewshot",
        "--temperature", "0", "--predictions", str(predictions), "--json",
    ]  # fmt: skip
    done = run_cli(args, env=llm_env(tmp_path, **SMALL_SEEK), timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    scores = json.loads(done.stdout)
    print("eval qa:", scores, "|", done.stderr.strip().splitlines()[-1])
    assert (scores["questions"], scores["answered"], scores["failed"]) == (2, 2, 0)
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(rows) == 2 and len({r["id"] for r in rows}) == 2
    for row in rows:
        assert row["error"] is None and row["raw_answer"].startswith("<answer>")
        assert row["usage"]["by_stage"]["sketch"]["calls"] == 1
    # The printed Cover-EM is the mean over the written predictions.
    recomputed = sum(
        cover_em(extract_tagged_answer(r["raw_answer"]), r["golden_answers"]) for r in rows
    )
    assert scores["cover_em"] == pytest.approx(recomputed / 2, abs=1e-4)

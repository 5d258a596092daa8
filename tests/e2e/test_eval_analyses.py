"""The papers' analyses from the command line, on real nodes and the shared wikimh data.

* ``eval retrieval --qa``: answer coverage@5/@10 (SIRA paper, Fig. 3) on the 100 HotpotQA
  questions, checked against a recomputation from the run's own TREC file, with passages
  read back from the index by id and an answer matcher written differently (token windows,
  not padded substrings) from the product's.
* ``eval qa --diagnostics --per-iteration --slot-ablation --json`` (SEEK paper's analyses) on
  2 questions with the CPU model (``llamacpp:gemma3-270m``), checked against the run's own
  predictions file, qrels and the retrieved passages read one by one (``GET``, matched with
  the token-window matcher below). The same run is the evidence that SEEK runs end to end on
  the CPU model (complete sketches, real retrievals, a tagged answer, its checkpoint).

Coverage is arithmetic over the run file and the stored passages: one engine
(tests/engine_matrix.py).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from engine_matrix import ONE_ENGINE

from sira_seek.backend import SearchBackend
from sira_seek.llm.llamacpp_inprocess import llama_cpp_available
from sira_seek.metrics.qa import normalize_answer
from sira_seek.seek.results import SeekResult

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def _tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def _contains(passage: list[str], alias: list[str]) -> bool:
    """Token-window match: the alias's tokens as one contiguous run of the passage's."""
    if not alias:
        return False
    width = len(alias)
    return any(passage[i : i + width] == alias for i in range(len(passage) - width + 1))


def _read_trec(path: Path) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        qid, _, doc, rank, _, _ = line.split()
        ranked[qid].append((int(rank), doc))
    return {q: [d for _, d in sorted(rows)] for q, rows in ranked.items()}


def _stored_tokens(backend: SearchBackend, index: str, doc_ids: set[str]) -> dict[str, list[str]]:
    """Each document's stored title and text as tokens, read back by id (an ``ids`` query per
    500 documents: the top 10 of 100 questions is up to 1,000 reads)."""
    ids, texts = sorted(doc_ids), {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found = backend.search(index, {"query": {"ids": {"values": chunk}}, "size": len(chunk)})
        for hit in found.hits:
            assert hit.source is not None
            texts[hit.id] = _tokens(f"{hit.source['title']} {hit.source['text']}")
    assert set(texts) == doc_ids
    return texts


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@ONE_ENGINE
def test_eval_retrieval_coverage_equals_a_recomputation_from_the_run(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    engine: str,
    node_urls: dict[str, str],
    tmp_path: Path,
) -> None:
    files = [
        "--queries",
        str(wikimh_dir / "queries-hotpotqa.jsonl"),
        "--qrels",
        str(wikimh_dir / "qrels-hotpotqa.tsv"),
    ]
    cluster = ["--index", wikimh_indexes[engine], "--url", node_urls[engine]]
    run_file = tmp_path / "bm25.trec"
    qa = ["--qa", str(wikimh_dir / "qa-hotpotqa.jsonl")]
    res = run_cli(
        ["eval", "retrieval", *files, *qa, *cluster, "--run-file", str(run_file), "--json"]
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    print(f"{engine}: {out}")

    golds = {
        str(r["id"]): [str(a) for a in r["golden_answers"]]
        for r in _read_jsonl(wikimh_dir / "qa-hotpotqa.jsonl")
    }
    ranked = _read_trec(run_file)
    assert len(ranked) == 100
    top10 = {doc for docs in ranked.values() for doc in docs[:10]}
    texts = _stored_tokens(backends[engine], wikimh_indexes[engine], top10)
    covered = {5: 0, 10: 0}
    for qid, docs in ranked.items():
        passages = [texts[doc_id] for doc_id in docs[:10]]
        aliases = [_tokens(a) for a in golds[qid]]
        for k in covered:
            covered[k] += any(_contains(p, a) for p in passages[:k] for a in aliases)
    expected = {f"coverage@{k}": round(n / len(ranked), 4) for k, n in covered.items()}
    assert {k: out[k] for k in expected} == expected
    # Sanity of the figures themselves: BM25 finds the answer for most HotpotQA questions,
    # and more of them in 10 passages than in 5.
    assert 0.3 < out["coverage@5"] < out["coverage@10"] <= 1.0

    # Without --qa the keys stay, as null (JSON keys never depend on flags).
    plain = run_cli(["eval", "retrieval", *files, *cluster, "--json"])
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert json.loads(plain.stdout)["coverage@5"] is None


#: Two questions: each SEEK run on the CPU model, its per-iteration and slot-ablation answers and
#: DIG scoring cost about 15 s here; two already give means over more than one question.
CPU_QUESTIONS = 2


def test_eval_qa_diagnostics_json_with_the_cpu_model(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    node_urls: dict[str, str],
    tmp_path: Path,
) -> None:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run sira-seek llm install cpu")
    predictions, html = tmp_path / "predictions.jsonl", tmp_path / "seek.html"
    checkpoint = tmp_path / "ckpt.jsonl"
    qrels_path = wikimh_dir / "qrels-hotpotqa.tsv"
    args = [
        "eval", "qa",
        "--index", wikimh_indexes["opensearch"], "--url", node_urls["opensearch"],
        "--qa", str(wikimh_dir / "qa-hotpotqa.jsonl"), "--limit", str(CPU_QUESTIONS),
        "--method", "seek", "--llm", "llamacpp:gemma3-270m", "--no-cache",
        "--max-gists", "2", "--temperature", "0", "--concurrency", "2",
        "--checkpoint", str(checkpoint),
        "--diagnostics", "--qrels", str(qrels_path), "--per-iteration", "--slot-ablation",
        "--predictions", str(predictions), "--report", str(html), "--json",
    ]  # fmt: skip
    # Small output caps keep the questions within a minute on 2 cores.
    caps = {
        "SIRA_SEEK_SEEK_SKETCH_MAX_TOKENS": "32",
        "SIRA_SEEK_SEEK_SUBQUERY_MAX_TOKENS": "20",
        "SIRA_SEEK_SEEK_SLOT_MAX_TOKENS": "32",
        "SIRA_SEEK_SEEK_ANSWER_MAX_TOKENS": "12",
        "SIRA_SEEK_SEEK_DOC_CHARS": "120",
        "SIRA_SEEK_SEEK_SLOT_CHARS": "200",
        "SIRA_SEEK_LLM_CACHE_DIR": str(tmp_path / "cache"),
    }
    res = run_cli(args, env={**os.environ, **caps}, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    diag = out["diagnostics"]
    print(json.dumps({k: v for k, v in diag.items() if k != "per_question"}))
    assert out["answered"] == diag["questions"] == CPU_QUESTIONS and diag["failed"] == 0

    # SEEK itself ran on the 270M model (quality is not asserted: it only proves the
    # pipeline): a complete sketch of 1-2 gists per question, one sketch call, top-5
    # retrievals, a tagged answer, tokens counted, and one checkpoint line per question.
    records = [
        SeekResult.model_validate_json(line) for line in predictions.read_text().splitlines()
    ]
    assert len(records) == CPU_QUESTIONS
    for record in records:
        assert record.error is None, record.error
        assert record.sketch is not None and record.sketch.is_complete
        assert 1 <= len(record.sketch.gists) <= 2
        assert record.steps and all(len(step.retrieved_ids) == 5 for step in record.steps)
        assert record.raw_answer is not None and record.raw_answer.startswith("<answer>")
        assert record.usage.total.completion_tokens > 0
        assert record.usage.by_stage["sketch"].calls == 1
    assert len(checkpoint.read_text().splitlines()) == CPU_QUESTIONS

    # Every figure again, from the run's own records, the qrels and the stored passages.
    results = _read_jsonl(predictions)
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in qrels_path.read_text().splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        if int(grade) > 0:
            relevant[qid].add(doc)
    backend, index = backends["opensearch"], wikimh_indexes["opensearch"]
    texts: dict[str, list[str]] = {}

    def passage(doc_id: str) -> list[str]:
        if doc_id not in texts:
            hit = backend.get(index, doc_id)
            assert hit is not None and hit.source is not None
            texts[doc_id] = _tokens(f"{hit.source['title']} {hit.source['text']}")
        return texts[doc_id]

    n = CPU_QUESTIONS
    shares, overlaps, recalls, judged, gists = [], [], [], [], []
    for r in results:
        steps = [s["retrieved_ids"] for s in r["steps"]]
        seen: set[str] = set()
        new = total = 0
        for ids in steps:
            for doc in dict.fromkeys(ids):
                new += doc not in seen
                total += 1
            seen |= set(ids)
        shares.append(new / total)
        jaccards = [
            len(set(steps[t]) & set(steps[t - 1])) / len(set(steps[t]) | set(steps[t - 1]))
            for t in range(1, len(steps))
        ]  # every step retrieved 5 documents (asserted above): no empty pair
        if jaccards:
            overlaps.append(sum(jaccards) / len(jaccards))
        aliases = [_tokens(a) for a in r["golden_answers"]]
        recalls.append(
            max(
                float(any(_contains(passage(d), a) for d in ids[:5] for a in aliases))
                for ids in steps
            )
        )
        rel = relevant[str(r["id"])]
        judged.append(max(len(set(ids[:5]) & rel) / len(rel) for ids in steps))
        gists.append(len(r["sketch"]["gists"]))
    assert diag["new_document_share"] == pytest.approx(round(sum(shares) / n, 4), abs=1e-4)
    assert diag["document_overlap_questions"] == len(overlaps)
    if overlaps:
        mean_overlap = round(sum(overlaps) / len(overlaps), 4)
        assert diag["document_overlap"] == pytest.approx(mean_overlap, abs=1e-4)
    assert [row["iteration"] for row in diag["document_overlap_by_iteration"]] == (
        [2] if overlaps else []
    )
    assert diag["subquery_similarity_measure"] == "token_jaccard"
    # DIG, scored by the same in-process model: every question has gold answers and a sketch.
    assert diag["dig_unavailable"] is None and diag["dig_questions"] == CPU_QUESTIONS
    # Eq. 14-15's parameters are echoed beside it (the defaults: no option sets them).
    assert diag["dig_parameters"] == {
        "W": 3,
        "k": 3,
        "alpha": 0.6,
        "omega": [0.8, 0.8, 0.8],
        "edges": "zero",
    }
    rows = diag["per_question"]
    for row in rows:
        with_k = row["answer_confidence_with_knowledge"]
        without = row["answer_confidence_without_knowledge"]
        assert 0.0 < with_k <= 1.0 and 0.0 < without <= 1.0
        assert row["dig"] == pytest.approx(with_k - without, abs=1e-9)
    assert diag["dig"] == pytest.approx(round(sum(r["dig"] for r in rows) / n, 4), abs=1e-4)
    # The knowledge scored is the completed sketch the answer was asked from.
    assert all(r["answer_context_kind"] == "sketch" and r["answer_context"] for r in results)
    # A.5 over answer-containing passages; the judged form from the qrels.
    assert diag["max_subquery_recall_at_5"] == pytest.approx(round(sum(recalls) / n, 4), abs=1e-4)
    assert diag["max_subquery_recall_questions"] == CPU_QUESTIONS
    assert diag["qrels_subquery_recall_at_5"] == pytest.approx(round(sum(judged) / n, 4), abs=1e-4)
    assert diag["qrels_recall_questions"] == CPU_QUESTIONS
    assert diag["gists_per_question"] == pytest.approx(round(sum(gists) / n, 4), abs=1e-4)
    assert sum(diag["gist_counts"].values()) == CPU_QUESTIONS and all(1 <= g <= 2 for g in gists)
    assert [row["id"] for row in diag["per_question"]] == [r["id"] for r in results]
    assert diag["seconds_per_question"] > 0 and diag["amortised_seconds_per_question"] > 0
    assert diag["subquery_diversity"] is None or 0.0 <= diag["subquery_diversity"] <= 1.0
    assert diag["step_cap_reached"] == 0  # SEEK fills each gist once
    # Fig. 6a: one answer call per iteration but the last; the last row is the run's answers.
    curve, cost = diag["performance_by_iteration"], diag["performance_by_iteration_cost"]
    iterations = [len(r["iteration_contexts"]) for r in results]
    assert iterations == [len(r["steps"]) for r in results]
    assert [row["iteration"] for row in curve] == list(range(1, max(iterations) + 1))
    assert cost["llm_calls"] == sum(n - 1 for n in iterations) and cost["failed_questions"] == 0
    assert curve[-1]["cover_em"] == out["cover_em"] and curve[-1]["questions"] == CPU_QUESTIONS
    # Fig. 4b: every completed sketch of the most common slot count, slots + 1 calls each.
    ablation = diag["slot_ablation"]
    seeds = sum(1 for g in gists if g == ablation["seed_slots"])
    assert ablation["questions"] == seeds and ablation["cost"]["llm_calls"] == seeds * (
        ablation["seed_slots"] + 1
    )
    assert [row["removed"] for row in ablation["rows"]] == (
        ["N/A", "First", "Second"][: ablation["seed_slots"] + 1] + ["w/o Sketch"]
    )
    print(json.dumps({"per_iteration_cost": cost, "slot_ablation_cost": ablation["cost"]}))

    page = html.read_text(encoding="utf-8")
    assert "<h2>SEEK analyses</h2>" in page
    assert f'<td data-key="dig">{diag["dig"]:.4f}</td>' in page
    dig_with = "W=3, k=3, alpha=0.6, omega=(0.8, 0.8, 0.8), edges=zero"
    assert f'<td data-key="dig_parameters">{dig_with}</td>' in page
    share = diag["new_document_share"]
    assert f'<td data-key="new_document_share">{share:.4f}</td>' in page
    assert "performance across iterations (Fig. 6a)" in page and "(Fig. 4b)" in page


def test_a_qa_file_matching_no_query_stops_before_any_search(
    wikimh_dir: Path, tmp_path: Path
) -> None:
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "not-a-query", "question": "x?", "answer": "y"}) + "\n")
    res = run_cli(
        [
            "eval", "retrieval", "--index", "no-such-index", "--url", "http://127.0.0.1:9",
            "--queries", str(wikimh_dir / "queries-hotpotqa.jsonl"),
            "--qrels", str(wikimh_dir / "qrels-hotpotqa.tsv"), "--qa", str(qa), "--json",
        ]
    )  # fmt: skip
    # Exit 2 (bad input), not 1 (cluster unreachable): the file was refused first.
    assert res.returncode == 2, res.stderr[-2000:]
    assert "ids must match" in res.stderr and res.stdout == ""

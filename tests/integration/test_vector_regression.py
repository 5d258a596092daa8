"""Every retrieval method on a fixed subset of wikimh/HotpotQA against pinned numbers, per engine.

Embedding all 9,003 wikimh passages on the CPU takes 5-20 minutes an engine, beyond the suite's
budget, so the pins are of a subset (tests/regression/vectors_wikimh_hotpotqa_subset.json says
which): the judged passages of the first 30 queries plus 300 distractors drawn with a fixed seed,
ingested with --embed once per engine for the session. The full-corpus figures are in
docs/benchmarks/retrieval.md (ingest --embed and eval retrieval).

``hyde`` and ``cot`` replay texts the embedded CPU model wrote for these queries
(tests/regression/generations-hotpotqa-{hyde,cot}.cpu-gemma3-270m.jsonl, re-recorded by
``python tests/regression/regenerate.py --generations``) through ``--llm jsonl:FILE``: the
same expander and query construction as a live model's answer, without the model.

Regenerate after a deliberate change: ``python tests/integration/test_vector_regression.py`` with
SIRA_SEEK_TEST_OPENSEARCH_URL / SIRA_SEEK_TEST_ELASTICSEARCH_URL set (nodes with vectors).
"""

from __future__ import annotations

import json
import os
import random
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sira_seek.backend import SearchBackend
from sira_seek.corpus import read_corpus, read_qrels, read_queries
from sira_seek.embed import make_embedder
from sira_seek.ingest import ingest_corpus
from sira_seek.workflows.evaluate import RetrievalEvaluationRequest, evaluate_retrieval

pytestmark = pytest.mark.integration

REGRESSION = Path(__file__).parents[1] / "regression"
PINS = REGRESSION / "vectors_wikimh_hotpotqa_subset.json"
QUERIES, DISTRACTORS, SEED = 30, 300, 41
METHODS = ("bm25", "dense", "hybrid", "sira", "sira-hybrid", "hyde", "cot")
MEASURES = ("ndcg@10", "recall@10", "recall@100")
GENERATED = {
    m: REGRESSION / f"generations-hotpotqa-{m}.cpu-gemma3-270m.jsonl" for m in ("hyde", "cot")
}


def subset(wikimh: Path, out: Path) -> tuple[Path, list[Any], dict[str, dict[str, int]]]:
    """The subset corpus file, its queries and their qrels (deterministic)."""
    queries = read_queries(wikimh / "queries-hotpotqa.jsonl")[:QUERIES]
    all_qrels = read_qrels(wikimh / "qrels-hotpotqa.tsv")
    qrels = {q.id: all_qrels[q.id] for q in queries if q.id in all_qrels}
    judged = {doc for docs in qrels.values() for doc in docs}
    docs = list(read_corpus(wikimh))
    others = sorted(d.id for d in docs if d.id not in judged)
    keep = judged | set(random.Random(SEED).sample(others, DISTRACTORS))
    out.write_text(
        "".join(
            json.dumps({"_id": d.id, "title": d.title, "text": d.text}) + "\n"
            for d in docs
            if d.id in keep
        ),
        encoding="utf-8",
    )
    return out, queries, qrels


def measure(backend: SearchBackend, index: str, wikimh: Path, queries: Any, qrels: Any) -> dict:
    """Each method's metrics on the embedded subset index."""
    figures: dict[str, dict[str, float]] = {}
    for method in METHODS:
        request = RetrievalEvaluationRequest(
            index=index,
            queries=queries,
            qrels=qrels,
            method=method,
            expansions=(
                wikimh / "expansions-hotpotqa.strong-llm.jsonl" if "sira" in method else None
            ),
            llm=f"jsonl:{GENERATED[method]}" if method in GENERATED else None,
        )
        done = evaluate_retrieval(backend, request)
        figures[method] = {m: done.metrics[m] for m in MEASURES}
        if method in GENERATED:  # queries whose recorded text was empty ran as plain BM25
            figures[method]["fallbacks"] = done.metrics["fallbacks"]
    return figures


@pytest.fixture(scope="session")
def embedded_subsets(
    backends: dict[str, SearchBackend], wikimh_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict[str, str], Any, Any]]:
    """The subset ingested with --embed once per engine (the CPU embedder loaded once)."""
    corpus, queries, qrels = subset(wikimh_dir, tmp_path_factory.mktemp("vec") / "corpus.jsonl")
    names: dict[str, str] = {}
    embedder = make_embedder("cpu")
    try:
        for eng, be in backends.items():
            names[eng] = f"test-vec-{uuid.uuid4().hex[:8]}"
            report = ingest_corpus(be, names[eng], corpus, embedder=embedder)
            assert report.embedded == report.written and not report.failed
    finally:
        embedder.close()
    yield names, queries, qrels
    for eng, name in names.items():
        backends[eng].delete_index(name)


def test_every_method_matches_its_pins(
    backends: dict[str, SearchBackend],
    embedded_subsets: tuple[dict[str, str], Any, Any],
    wikimh_dir: Path,
    engine: str,
) -> None:
    names, queries, qrels = embedded_subsets
    pinned = json.loads(PINS.read_text())
    got = measure(backends[engine], names[engine], wikimh_dir, queries, qrels)
    want = pinned["engines"][engine]
    for method in METHODS:
        for name in MEASURES:
            assert got[method][name] == pytest.approx(
                want[method][name], abs=pinned["tolerance"]
            ), (method, name)
    for method in GENERATED:  # a replay that found no text would run BM25 under hyde's name
        assert got[method]["fallbacks"] == want[method]["fallbacks"], method
    # the acceptance's shape on the subset too: fusion does not lose to BM25
    assert got["hybrid"]["ndcg@10"] >= got["bm25"]["ndcg@10"] - 0.01


def regenerate() -> None:
    """Measure on the nodes in SIRA_SEEK_TEST_<ENGINE>_URL and write the pins."""
    import tempfile

    from sira_seek.config import ClusterSettings
    from sira_seek.esplugin.engines.registry import connect

    wikimh = Path(__file__).parents[3] / "shared" / "data" / "wikimh"
    corpus, queries, qrels = subset(wikimh, Path(tempfile.mkdtemp()) / "corpus.jsonl")
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    embedder = make_embedder("cpu")
    for engine in ("opensearch", "elasticsearch"):
        backend = connect(ClusterSettings(url=os.environ[f"SIRA_SEEK_TEST_{engine.upper()}_URL"]))
        index = f"pin-vec-{uuid.uuid4().hex[:8]}"
        try:
            ingest_corpus(backend, index, corpus, embedder=embedder)
            pins.setdefault("engines", {})[engine] = measure(backend, index, wikimh, queries, qrels)
        finally:
            backend.delete_index(index)
    embedder.close()
    PINS.write_text(json.dumps(pins, indent=2) + "\n")
    print(json.dumps(pins["engines"], indent=2), file=sys.stderr)


if __name__ == "__main__":
    regenerate()

"""The Python facade (``sira_seek.connect`` / ``SiraSeek``) on real nodes.

Its methods must give exactly what the library functions the CLI calls give (the facade only
wires them), on a slice of wikimh: 400 paragraphs plus the judged ones of 12 questions.
``connect`` detects the engine, so it runs on both engines; the wiring checks run on one
(tests/engine_matrix.py): they compare the facade with the library on the same node.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_matrix import ONE_ENGINE

import sira_seek
from sira_seek.backend import SearchBackend
from sira_seek.client import SiraSeek
from sira_seek.corpus import read_qrels, read_queries
from sira_seek.esplugin.engines.errors import SiraSeekEngineError
from sira_seek.sira.evaluation import evaluate_bm25, evaluate_sira
from sira_seek.sira.expansions import PrecomputedExpander
from sira_seek.sira.retriever import SiraRetriever
from sira_seek.workflows import InvalidInput, NotFound

pytestmark = pytest.mark.integration

QUESTIONS = 12
BACKGROUND = 400


@pytest.fixture(scope="module")
def wikimh_slice(wikimh_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small BEIR folder: queries, their qrels, their judged paragraphs and some others."""
    folder = tmp_path_factory.mktemp("wikimh-slice")
    queries = read_queries(wikimh_dir / "queries-hotpotqa.jsonl")[:QUESTIONS]
    qrels = read_qrels(wikimh_dir / "qrels-hotpotqa.tsv")
    judged = {doc for q in queries for doc in qrels.get(q.id, {})}
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [
        line for n, line in enumerate(lines) if n < BACKGROUND or json.loads(line)["_id"] in judged
    ]
    (folder / "corpus.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q.id, "text": q.text}) + "\n" for q in queries),
        encoding="utf-8",
    )
    rows = [f"{q.id}\t{d}\t{r}\n" for q in queries for d, r in qrels.get(q.id, {}).items()]
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(rows))
    return folder


@pytest.fixture
def sk(backend: SearchBackend) -> Iterator[SiraSeek]:
    yield SiraSeek(backend)  # the session's backend: closing it is the session's job


def test_connect_detects_the_engine_behind_a_url_and_closes(
    node_urls: dict[str, str], engine: str
) -> None:
    with sira_seek.connect(node_urls[engine]) as client:
        assert type(client.backend).__name__.lower().startswith(engine)
        assert client.backend.index_exists(".no-such-index-here") is False


def test_connect_to_a_url_where_nothing_answers_is_a_clear_error() -> None:
    with pytest.raises(SiraSeekEngineError, match="No search cluster answers"):
        sira_seek.connect("http://127.0.0.1:9")


@ONE_ENGINE
def test_ingest_is_safe_to_rerun_and_recreate_starts_over(
    sk: SiraSeek, index_name: str, wikimh_slice: Path
) -> None:
    docs = len((wikimh_slice / "corpus.jsonl").read_text().splitlines())
    first = sk.ingest(wikimh_slice, index_name)
    assert (first.created_index, first.written, first.unchanged) == (True, docs, 0)
    again = sk.ingest(wikimh_slice / "corpus.jsonl", index_name)
    assert (again.created_index, again.written, again.unchanged) == (False, 0, docs)
    fresh = sk.ingest(wikimh_slice, index_name, recreate=True)
    assert (fresh.created_index, fresh.written) == (True, docs)
    assert sk.backend.count(index_name) == docs


@ONE_ENGINE
def test_search_and_evaluate_equal_the_library_calls(
    sk: SiraSeek, backend: SearchBackend, index_name: str, wikimh_slice: Path, wikimh_dir: Path
) -> None:
    sk.ingest(wikimh_slice, index_name)
    queries = read_queries(wikimh_slice / "queries.jsonl")
    qrels = read_qrels(wikimh_slice / "qrels.tsv")
    expansions = wikimh_dir / "expansions-hotpotqa.strong-llm.jsonl"

    bm25 = sk.evaluate(
        index_name, queries=wikimh_slice / "queries.jsonl", qrels=wikimh_slice / "qrels.tsv"
    )
    # The metrics of the library call, plus the coverage keys eval retrieval --json always
    # carries (null without gold answers).
    assert bm25.pop("coverage@5") is None and bm25.pop("coverage@10") is None
    assert bm25.pop("fallbacks") == 0 and bm25.pop("rerank") == 0
    assert bm25 == evaluate_bm25(backend, index_name, queries, qrels)
    assert bm25["queries"] == QUESTIONS and 0 < bm25["ndcg@10"] <= 1

    sira = sk.evaluate(
        index_name, queries=queries, qrels=qrels, method="sira", expansions=expansions
    )
    expected = evaluate_sira(
        backend, index_name, queries, qrels, expander=PrecomputedExpander.from_file(expansions)
    )
    assert sira.pop("coverage@5") is None and sira.pop("coverage@10") is None
    # What the evaluation adds to the metrics: no query fell back, and precomputed phrases
    # without an LLM are not reranked (SIRA's rerank default needs a live LLM).
    assert sira.pop("fallbacks") == 0 and sira.pop("rerank") == 0
    assert sira == expected
    assert sira != bm25  # the expansions reached the queries

    query = queries[0]
    direct = SiraRetriever(
        backend, index_name, expander=PrecomputedExpander.from_file(expansions), source=["title"]
    ).search(query.text, query_id=query.id)
    found = sk.search(query.text, index=index_name, query_id=query.id, method="sira",
                      expansions=str(expansions))  # fmt: skip
    assert [h.id for h in found.hits] == [h.id for h in direct.hits]
    assert found.body == direct.body and found.candidates.kept

    # In-memory expansions, keyed by the query text; k and tau reach the query.
    phrases = json.loads(expansions.read_text().splitlines()[0])["keywords"]
    by_text = sk.search(query.text, index=index_name, method="sira",
                        expansions={query.text: phrases}, k=3, tau=0.5)  # fmt: skip
    assert len(by_text.hits) == 3
    assert by_text.candidates.max_doc_freq == pytest.approx(0.5 * by_text.candidates.doc_count)
    assert [c.phrase for c in by_text.candidates.kept]

    plain = sk.search(query.text, index=index_name, k=5)
    assert plain.plain_bm25 and not plain.candidates.candidates and len(plain.hits) == 5


@ONE_ENGINE
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "bm25", "expansions": {"q": ["x"]}}, "method 'sira' only"),
        ({"method": "sira"}, "needs candidate phrases"),
        ({"method": "sira", "expansions": {"q": ["x"]}, "llm": "jsonl:x.jsonl"}, "not both"),
        ({"method": "dense", "expansions": {"q": ["x"]}}, "method 'sira' only"),
        ({"method": "hybrid", "llm": "jsonl:x.jsonl"}, "does not apply to method 'hybrid'"),
        ({"method": "nope"}, "'bm25', 'sira', 'hyde', 'cot', 'dense', 'hybrid' or 'sira-hybrid'"),
    ],
)
def test_search_refuses_contradictory_options(
    sk: SiraSeek, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        sk.search("anything", index="never-created", **kwargs)


@ONE_ENGINE
def test_ask_checks_its_inputs_before_calling_any_llm(sk: SiraSeek, index_name: str) -> None:
    with pytest.raises(InvalidInput, match="question: is blank"):
        sk.ask("   ", index=index_name, llm="openai:http://127.0.0.1:9/v1#none")
    with pytest.raises(InvalidInput, match="give an index"):
        sk.ask("Who?", index=None, llm="openai:http://127.0.0.1:9/v1#none")
    with pytest.raises(NotFound, match="does not exist"):
        sk.ask("Who?", index=index_name, llm="openai:http://127.0.0.1:9/v1#none")


@ONE_ENGINE
def test_enrich_from_jsonl_writes_once_then_finds_everything_current(
    sk: SiraSeek, index_name: str, wikimh_slice: Path, tmp_path: Path
) -> None:
    sk.ingest(wikimh_slice, index_name)
    ids = [json.loads(line)["_id"] for line in (wikimh_slice / "corpus.jsonl").open()][:30]
    records = [{"_id": i, "keywords": [f"zq{i} alias"], "categories": ["bucket"]} for i in ids]
    enrichments = tmp_path / "enrichments.jsonl"
    enrichments.write_text("".join(json.dumps(r) + "\n" for r in records))
    state = tmp_path / "state"

    dry = sk.enrich(index_name, from_jsonl=enrichments, dry_run=True, state_dir=state)
    assert dry.dry_run and dry.counts.enriched == 0
    first = sk.enrich(index_name, from_jsonl=enrichments, state_dir=state)
    assert first.counts.enriched == len(ids) and first.counts.failed == 0
    hit = sk.search(f"zq{ids[0]} alias", index=index_name, k=1)
    assert [h.id for h in hit.hits] == [ids[0]]  # the enrichment is searchable
    again = sk.enrich(index_name, from_jsonl=enrichments, state_dir=state)
    assert again.counts.enriched == 0

    with pytest.raises(ValueError, match="exactly one"):
        sk.enrich(index_name, state_dir=state)


@ONE_ENGINE
def test_enrich_with_the_cpu_alias_dry_run_starts_no_server(
    sk: SiraSeek,
    index_name: str,
    wikimh_slice: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sira_seek.sync import cpu_default

    def no_server() -> None:
        raise AssertionError("a dry run must not start a vLLM server")

    monkeypatch.setattr(cpu_default, "cpu_vllm_server", no_server)
    written = sk.ingest(wikimh_slice, index_name).written
    ids = [json.loads(line)["_id"] for line in (wikimh_slice / "corpus.jsonl").open()][:5]
    enrichments = tmp_path / "enrichments.jsonl"
    enrichments.write_text("".join(json.dumps({"_id": i, "keywords": ["x y"]}) + "\n" for i in ids))
    state = tmp_path / "state"
    sk.enrich(index_name, from_jsonl=enrichments, state_dir=state)

    dry = sk.enrich(index_name, llm="cpu", dry_run=True, state_dir=state)
    assert dry.dry_run and dry.counts.enriched == 0
    # The 5 documents enriched from the file carry another model's fingerprint; the rest are new.
    assert (dry.counts.outdated, dry.counts.new) == (5, written - 5)

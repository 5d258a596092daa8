"""The LangChain, LlamaIndex and Haystack retrievers against a real node.

Issue 15's acceptance: each retriever returns the same top ids as ``sira-seek search --json``
for the same query and expansions. The reference is the installed command line, run as a
subprocess as a user runs it (tests/e2e/cli_runner.py), on the session's wikimh index, for
HotpotQA questions with the shared strong-LLM expansions; the frameworks are the real
packages. The CLI looks expansions up by ``--id`` in the shared file, the retrievers by the
question's text in a mapping built from that file: the same phrases reached two ways.

The retrievers are thin adapters over the engine-neutral facade, compared with the CLI on the
same node, so an engine difference would show on both sides alike: one engine
(tests/engine_matrix.py; the engines are compared by the backend contract suite and the
pinned figures).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from docs_pages import section
from engine_matrix import ENGINE

from sira_seek.backend import SearchBackend
from sira_seek.client import SiraSeek
from sira_seek.corpus import read_queries
from sira_seek.integrations._common import METADATA_KEYS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cli_runner import run_cli  # noqa: E402

pytestmark = pytest.mark.integration

QUESTIONS = 3
K = 10
METHODS = ["bm25", "sira"]
STRONG = "expansions-hotpotqa.strong-llm.jsonl"


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    keywords: list[str]


@dataclass(frozen=True)
class CliHit:
    id: str
    score: float
    title: str | None


@pytest.fixture(scope="module")
def questions(wikimh_dir: Path) -> list[Question]:
    """The first HotpotQA questions that have strong-LLM expansions."""
    strong = {}
    for line in (wikimh_dir / STRONG).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        strong[record["_id"]] = record["keywords"]
    picked = [
        Question(q.id, q.text, strong[q.id])
        for q in read_queries(wikimh_dir / "queries-hotpotqa.jsonl")
        if q.id in strong
    ][:QUESTIONS]
    assert len(picked) == QUESTIONS
    return picked


@pytest.fixture(scope="module")
def corpus(wikimh_dir: Path) -> dict[str, tuple[str, str]]:
    """``_id`` -> (title, text) of every wikimh paragraph, to check the documents' text."""
    rows = {}
    for line in (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        rows[record["_id"]] = (record["title"], record["text"])
    return rows


@pytest.fixture
def index(wikimh_indexes: dict[str, str]) -> str:
    return wikimh_indexes[ENGINE]


@pytest.fixture
def url(node_urls: dict[str, str]) -> str:
    return node_urls[ENGINE]


@pytest.fixture
def by_text(questions: list[Question]) -> dict[str, list[str]]:
    """The shared expansions keyed by question text (how a retriever's caller has them)."""
    return {q.text: q.keywords for q in questions}


@pytest.fixture(scope="module")
def cli_runs() -> dict[tuple[str, str, str], dict[str, Any]]:
    """``search --json`` outputs by (url, method, question id), run once per module."""
    return {}


@pytest.fixture
def cli_search(
    cli_runs: dict[tuple[str, str, str], dict[str, Any]],
    url: str,
    index: str,
    wikimh_dir: Path,
) -> Any:
    def search(method: str, question: Question) -> dict[str, Any]:
        key = (url, method, question.id)
        if key not in cli_runs:
            args = ["search", question.text, "--index", index, "--url", url]
            args += ["--size", str(K), "--json"]
            if method == "sira":
                args += ["--expansions", str(wikimh_dir / STRONG), "--id", question.id]
            done = run_cli(args)
            assert done.returncode == 0, done.stderr
            cli_runs[key] = json.loads(done.stdout)
        return cli_runs[key]

    return search


def cli_hits(out: dict[str, Any]) -> list[CliHit]:
    return [CliHit(h["_id"], h["score"], h["title"]) for h in out["hits"]]


@pytest.fixture
def sk(backends: dict[str, SearchBackend]) -> Iterator[SiraSeek]:
    yield SiraSeek(backends[ENGINE])  # the session's backend: closing it is the session's job


def options(method: str, by_text: dict[str, list[str]]) -> dict[str, Any]:
    return {"k": K, "method": method, "expansions": by_text if method == "sira" else None}


def assert_same_ranking(got: list[tuple[str, float]], want: list[CliHit]) -> None:
    assert len(want) == K
    assert [doc_id for doc_id, _ in got] == [h.id for h in want]
    assert [score for _, score in got] == pytest.approx([h.score for h in want], rel=1e-6)


def assert_metadata(
    meta: dict[str, Any],
    *,
    rank: int,
    hit: CliHit,
    index: str,
    method: str,
    corpus: dict[str, tuple[str, str]],
) -> None:
    assert set(meta) == set(METADATA_KEYS)
    assert (meta["id"], meta["rank"], meta["index"], meta["method"]) == (
        hit.id,
        rank,
        index,
        method,
    )
    assert meta["score"] == pytest.approx(hit.score, rel=1e-6)
    assert meta["title"] == hit.title == corpus[hit.id][0]
    # Every hit matches the original question's clause; a SIRA hit may match expansions too.
    assert meta["matched_queries"]


# -- the reference itself -------------------------------------------------------------------
def test_sira_reference_runs_differ_from_bm25(cli_search: Any, questions: list[Question]) -> None:
    """The comparison below means something only if the expansions change the ranking."""
    sira = [cli_search("sira", q) for q in questions]
    bm25 = [cli_search("bm25", q) for q in questions]
    assert all(out["expansion_source"] == "precomputed" for out in sira)
    assert not any(out["plain_bm25"] for out in sira)
    assert all(out["plain_bm25"] for out in bm25)
    assert [cli_hits(s) for s in sira] != [cli_hits(b) for b in bm25]


# -- LangChain --------------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_langchain_returns_the_cli_ranking_as_documents(
    method: str,
    url: str,
    index: str,
    by_text: dict[str, list[str]],
    questions: list[Question],
    cli_search: Any,
    corpus: dict[str, tuple[str, str]],
) -> None:
    from langchain_core.documents import Document

    from sira_seek.integrations.langchain import SiraSeekLangChainRetriever

    retriever = SiraSeekLangChainRetriever(url=url, index=index, **options(method, by_text))
    try:
        for q in questions:
            want = cli_hits(cli_search(method, q))
            docs = retriever.invoke(q.text)
            assert all(type(d) is Document for d in docs)
            assert_same_ranking([(d.id or "", d.metadata["score"]) for d in docs], want)
            for rank, (doc, hit) in enumerate(zip(docs, want, strict=True), start=1):
                assert doc.page_content == corpus[hit.id][1]
                assert_metadata(
                    doc.metadata, rank=rank, hit=hit, index=index, method=method, corpus=corpus
                )
        async_docs = asyncio.run(retriever.ainvoke(questions[0].text))
        assert async_docs == retriever.invoke(questions[0].text)
        batched = retriever.batch([q.text for q in questions])
        assert [[d.id for d in docs] for docs in batched] == [
            [h.id for h in cli_hits(cli_search(method, q))] for q in questions
        ]
    finally:
        retriever.close()


def test_langchain_query_id_reaches_expansions_keyed_by_id(
    sk: SiraSeek,
    index: str,
    wikimh_dir: Path,
    questions: list[Question],
    cli_search: Any,
) -> None:
    """The shared file is keyed by ``_id`` only: without the id the text finds no entry and
    the search is plain BM25, with it the search is the CLI's ``--id`` SIRA search."""
    from sira_seek.integrations.langchain import SiraSeekLangChainRetriever

    retriever = SiraSeekLangChainRetriever(
        client=sk, index=index, k=K, method="sira", expansions=wikimh_dir / STRONG
    )
    q = questions[0]
    with_id = retriever.invoke(q.text, query_id=q.id)
    without = retriever.invoke(q.text)
    assert [d.id for d in with_id] == [h.id for h in cli_hits(cli_search("sira", q))]
    assert [d.id for d in without] == [h.id for h in cli_hits(cli_search("bm25", q))]
    assert with_id != without


def test_langchain_sira_without_a_phrase_source_is_a_clear_error(sk: SiraSeek, index: str) -> None:
    from sira_seek.integrations.langchain import SiraSeekLangChainRetriever

    retriever = SiraSeekLangChainRetriever(client=sk, index=index, method="sira")
    with pytest.raises(ValueError, match="needs candidate phrases"):
        retriever.invoke("anything")


# -- LlamaIndex -------------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_llamaindex_returns_the_cli_ranking_as_scored_nodes(
    method: str,
    sk: SiraSeek,
    index: str,
    by_text: dict[str, list[str]],
    questions: list[Question],
    cli_search: Any,
    corpus: dict[str, tuple[str, str]],
) -> None:
    from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

    from sira_seek.integrations.llamaindex import SiraSeekLlamaIndexRetriever

    retriever = SiraSeekLlamaIndexRetriever(client=sk, index=index, **options(method, by_text))
    for q in questions:
        want = cli_hits(cli_search(method, q))
        nodes = retriever.retrieve(q.text)
        assert all(type(n) is NodeWithScore and type(n.node) is TextNode for n in nodes)
        assert_same_ranking([(n.node.node_id, n.score or 0.0) for n in nodes], want)
        for rank, (node, hit) in enumerate(zip(nodes, want, strict=True), start=1):
            title, text = corpus[hit.id]
            assert node.node.get_content(MetadataMode.NONE) == text
            assert_metadata(
                node.node.metadata, rank=rank, hit=hit, index=index, method=method, corpus=corpus
            )
            # What a query engine shows its LLM: the title and the passage, no bookkeeping.
            assert node.node.get_content(MetadataMode.LLM) == f"title: {title}\n\n{text}"
    async_nodes = asyncio.run(retriever.aretrieve(questions[-1].text))
    assert [(n.node.node_id, n.score) for n in async_nodes] == [
        (n.node.node_id, n.score) for n in retriever.retrieve(questions[-1].text)
    ]


# -- Haystack ---------------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_haystack_pipeline_returns_the_cli_ranking_and_its_result(
    method: str,
    url: str,
    index: str,
    by_text: dict[str, list[str]],
    questions: list[Question],
    cli_search: Any,
    corpus: dict[str, tuple[str, str]],
) -> None:
    from haystack import Document, Pipeline

    from sira_seek.integrations.haystack import SiraSeekHaystackRetriever

    component = SiraSeekHaystackRetriever(url=url, index=index, **options(method, by_text))
    pipeline = Pipeline()
    pipeline.add_component("retriever", component)
    try:
        for q in questions:
            cli = cli_search(method, q)
            want = cli_hits(cli)
            out = pipeline.run({"retriever": {"query": q.text}})["retriever"]
            docs = out["documents"]
            assert all(type(d) is Document for d in docs)
            assert_same_ranking([(d.id, d.score or 0.0) for d in docs], want)
            for rank, (doc, hit) in enumerate(zip(docs, want, strict=True), start=1):
                assert doc.content == corpus[hit.id][1]
                assert_metadata(
                    doc.meta, rank=rank, hit=hit, index=index, method=method, corpus=corpus
                )
            # The second output is search --json's view: same request, same grounding.
            assert out["result"]["query"] == cli["query"]
            assert [(c["phrase"], c["decision"]) for c in out["result"]["candidates"]] == [
                (c["phrase"], c["decision"]) for c in cli["candidates"]
            ]
        # top_k per run; run_async gives what run gives.
        top3 = component.run(query=questions[0].text, top_k=3)["documents"]
        assert [d.id for d in top3] == [h.id for h in cli_hits(cli_search(method, questions[0]))][
            :3
        ]
        async_out = asyncio.run(component.run_async(query=questions[0].text, top_k=3))
        assert async_out["documents"] == top3
    finally:
        component.close()


def test_haystack_pipeline_round_trips_through_yaml(
    url: str,
    index: str,
    by_text: dict[str, list[str]],
    questions: list[Question],
    cli_search: Any,
) -> None:
    """A saved pipeline holds the options and the URL, no secret, and runs the same search."""
    from haystack import Pipeline

    from sira_seek.integrations.haystack import SiraSeekHaystackRetriever

    pipeline = Pipeline()
    pipeline.add_component(
        "retriever",
        SiraSeekHaystackRetriever(url=url, index=index, **options("sira", by_text), tau=0.1),
    )
    saved = pipeline.dumps()
    assert url in saved and "api_key" not in saved and "password" not in saved
    # Haystack 3 loads only the classes of modules the caller trusts.
    loaded = Pipeline.loads(saved, allowed_modules=["sira_seek.integrations.haystack"])
    component = loaded.get_component("retriever")
    assert isinstance(component, SiraSeekHaystackRetriever)
    assert component.options.model_dump() == {
        "index": index,
        "k": K,
        "method": "sira",
        "expansions": by_text,
        "llm": None,
        "tau": 0.1,
        "weight": None,
        "task": None,
        "on_llm_failure": "error",
    }
    try:
        q = questions[1]
        docs = loaded.run({"retriever": {"query": q.text}})["retriever"]["documents"]
        assert [d.id for d in docs] == [h.id for h in cli_hits(cli_search("sira", q))]
    finally:
        component.close()


def test_haystack_component_around_a_client_refuses_to_serialise(sk: SiraSeek, index: str) -> None:
    from sira_seek.integrations.haystack import SiraSeekHaystackRetriever

    with pytest.raises(TypeError, match="build it with url="):
        SiraSeekHaystackRetriever(client=sk, index=index).to_dict()
    with pytest.raises(ValueError, match="either client= or url="):
        SiraSeekHaystackRetriever(client=sk, url="http://127.0.0.1:9", index=index)


# -- the extras -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("langchain", "langchain_core", "langchain"),
        ("llamaindex", "llama_index", "llamaindex"),
        ("haystack", "haystack", "haystack"),
    ],
)
def test_a_missing_framework_names_its_extra(module: str, framework: str, extra: str) -> None:
    """Without the framework (hidden from the import system), importing the adapter fails
    with an ImportError that says which extra to install."""
    code = (
        f"import sys; sys.modules[{framework!r}] = None\n"
        "try:\n"
        f"    import sira_seek.integrations.{module}\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.startswith("ImportError ")
    assert f"pip install 'sira-seek[{extra}]'" in done.stdout


# -- the docs' examples (docs/tutorials/frameworks.md) -----------------------------------------
FRAMEWORKS_PAGE = "tutorials/frameworks.md"
README_GOLD = {  # the judged paragraphs of the docs examples' two questions
    "langchain": {"hp00010", "hp00015"},
    "llamaindex": {"hp00010", "hp00015"},
    "haystack": {"hp00005", "hp00009"},
}


def readme_examples() -> dict[str, str]:
    """The python blocks of the docs' 'Framework retrievers' page, keyed by the framework they
    import."""
    body = section(FRAMEWORKS_PAGE, "Framework retrievers")
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    found = {}
    for block in blocks:
        (module,) = re.findall(r"from sira_seek\.integrations\.(\w+) import", block)
        found[module] = block
    assert set(found) == set(README_GOLD)
    return found


@pytest.mark.parametrize("framework", sorted(README_GOLD))
def test_the_readme_example_runs(framework: str, url: str, index: str, shared_data: Path) -> None:
    """Each example, as printed in the docs, runs on the session's wikimh index (its name
    and the data folder substituted) and prints ranked hits that include a judged paragraph."""
    code = readme_examples()[framework]
    assert 'index="wikimh"' in code
    code = code.replace('index="wikimh"', f"index={index!r}")
    code = code.replace("../shared/data", str(shared_data))
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "SIRA_SEEK_URL": url},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    ranked = re.findall(r"^(\d+) (\S+) (-?[0-9.]+) (.+)$", done.stdout, re.M)
    assert [int(rank) for rank, *_ in ranked] == [1, 2, 3, 4, 5], done.stdout
    scores = [float(score) for _, _, score, _ in ranked]
    assert scores == sorted(scores, reverse=True)
    assert README_GOLD[framework] & {doc_id for _, doc_id, _, _ in ranked}, done.stdout
    if framework == "llamaindex":
        assert done.stdout.splitlines()[-1] == f"title: {ranked[0][3]}"
    if framework == "haystack":
        decisions = re.findall(r"^  (\w+)\s+\S", done.stdout, re.M)
        assert decisions and "kept" in decisions, done.stdout

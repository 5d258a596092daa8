"""SEEK over real OpenSearch and Elasticsearch nodes: BM25 retrieval from the wikimh index,
with the scripted LLM double so the assertions are about retrieval and wiring."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "seek"))

from seek_llm_double import ScriptedSeekLLMDouble, target_in  # noqa: E402

from sira_seek.backend import SearchBackend  # noqa: E402
from sira_seek.cli.main import cli  # noqa: E402
from sira_seek.seek import api  # noqa: E402
from sira_seek.seek.batch import run_questions  # noqa: E402
from sira_seek.seek.pipeline import SeekPipeline  # noqa: E402
from sira_seek.seek.questions import read_questions  # noqa: E402
from sira_seek.seek.retrieval import BM25Retriever, SiraDocumentRetriever  # noqa: E402
from sira_seek.seek.settings import SeekSettings  # noqa: E402
from sira_seek.sira.retriever import SiraRetriever  # noqa: E402

pytestmark = pytest.mark.integration


def scripted() -> ScriptedSeekLLMDouble:
    """Gists name what to look up; sub-queries are the gist headings."""
    return ScriptedSeekLLMDouble(
        {
            "sketch": "# Leland film\n## Maximum Overdrive film Leland North Carolina\n"
            "## Maximum Overdrive director",
            "subquery": lambda text: f"<query>{target_in(text)}</query>",
            "evidence": lambda text: "Maximum Overdrive (1986) was directed by Stephen King.",
            # the parallel variant fills every section in one call, each under its heading
            "fill": lambda text: "\n".join(
                f"## {n}. {heading}\nMaximum Overdrive (1986) was directed by Stephen King."
                for n, heading in re.findall(r"### Section (\d+): (.+)", text)
            ),
            "answer": "<answer>Stephen King</answer>",
        }
    )


def test_seek_retrieves_top5_for_every_gist_from_the_index(
    backend: SearchBackend, engine: str, wikimh_indexes: dict[str, str]
) -> None:
    index = wikimh_indexes[engine]
    pipeline = SeekPipeline(scripted(), BM25Retriever(backend, index))
    result = asyncio.run(pipeline.answer("Who directed the film shot in Leland in 1986?"))
    assert result.error is None and result.answer == "Stephen King"
    assert [s.sub_query for s in result.steps] == [
        "Maximum Overdrive film Leland North Carolina",
        "Maximum Overdrive director",
    ]
    for step in result.steps:
        assert len(step.retrieved_ids) == 5 and step.error is None
        assert all(backend.get(index, doc_id) is not None for doc_id in step.retrieved_ids)
    titles = [backend.get(index, i).source["title"] for i in result.steps[0].retrieved_ids]  # type: ignore[union-attr]
    assert any("Leland" in t or "Maximum Overdrive" in t for t in titles)


def test_msearch_batch_equals_single_searches(
    backend: SearchBackend, engine: str, wikimh_indexes: dict[str, str]
) -> None:
    retriever = BM25Retriever(backend, wikimh_indexes[engine])
    queries = ["Gallu demon", "Haymo of Faversham", "Christopher Nolan director"]
    batched = retriever.retrieve_many(queries, 5)
    assert [[d.id for d in docs] for docs in batched] == [
        [d.id for d in retriever.retrieve(q, 5)] for q in queries
    ]
    assert all(doc.text for docs in batched for doc in docs)


def test_batch_of_wikimh_questions_with_variants(
    backend: SearchBackend, engine: str, wikimh_indexes: dict[str, str], wikimh_dir: Path
) -> None:
    questions = read_questions(wikimh_dir / "qa-hotpotqa.jsonl", limit=4)
    retriever = BM25Retriever(backend, wikimh_indexes[engine])
    for method, variant in [("seek", "parallel"), ("vanilla-rag", "sequential")]:
        settings = SeekSettings(method=method, variant=variant)  # type: ignore[arg-type]
        pipeline = SeekPipeline(scripted(), retriever, settings=settings)
        report = asyncio.run(run_questions(pipeline, questions, concurrency=4))
        assert report.failed == 0 and len(report.results) == 4
        assert all(s.retrieved_ids for r in report.results for s in r.steps)
    # vanilla-rag searched with the questions themselves
    assert [r.steps[0].sub_query for r in report.results] == [q.question for q in questions]


def test_ask_command_against_the_node(
    node_urls: dict[str, str],
    engine: str,
    wikimh_indexes: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: scripted())
    args = [
        "ask",
        "Who directed the film shot in Leland in 1986?",
        "--index",
        wikimh_indexes[engine],
        "--url",
        node_urls[engine],
        "--llm",
        "openai:http://127.0.0.1:9/v1#scripted",
    ]
    shown = CliRunner().invoke(cli, args)
    assert shown.exit_code == 0, shown.output
    assert (
        "## Maximum Overdrive director" in shown.output and "Answer: Stephen King" in shown.output
    )
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    assert [len(s["retrieved_ids"]) for s in data["steps"]] == [5, 5]


def test_sira_retriever_feeds_seek_with_document_texts(
    backend: SearchBackend, engine: str, wikimh_indexes: dict[str, str]
) -> None:
    index = wikimh_indexes[engine]
    sira = SiraDocumentRetriever(SiraRetriever(backend, index))  # no expander: plain SIRA query
    docs = sira.retrieve("Maximum Overdrive director", 5)
    assert len(docs) == 5 and all(d.text and d.title for d in docs)
    assert [d.id for d in docs] == [
        d.id for d in BM25Retriever(backend, index).retrieve("Maximum Overdrive director", 5)
    ]
    result = asyncio.run(SeekPipeline(scripted(), sira).answer("Who directed it?"))
    assert result.error is None and all(len(s.retrieved_ids) == 5 for s in result.steps)


def test_ask_explain_requests_return_the_same_documents(
    backend: SearchBackend, engine: str, wikimh_indexes: dict[str, str]
) -> None:
    """Each printed Dev Tools request, sent to the node, returns the step's documents."""
    import urllib.request

    from sira_seek.cli.ask_cmd import explain_retrievals

    index = wikimh_indexes[engine]
    retriever = BM25Retriever(backend, index)
    result = asyncio.run(SeekPipeline(scripted(), retriever).answer("Who directed it?"))
    text = explain_retrievals(result, retriever, 5)
    blocks = text.split("\n\n# ")
    assert len(blocks) == len(result.steps) == 2
    for block, step in zip(blocks, result.steps, strict=True):
        _, request_line, body = block.split("\n", 2)
        method, path = request_line.split(" ", 1)
        assert method == "GET"
        req = urllib.request.Request(
            f"{backend.info.url}/{path}",
            data=body.encode(),
            method="POST",
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req) as resp:
            hits = json.loads(resp.read())["hits"]["hits"]
        assert [h["_id"] for h in hits] == step.retrieved_ids

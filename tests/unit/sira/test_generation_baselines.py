"""The SIRA paper's LLM query-expansion baselines, ``hyde`` and ``cot``, in the workflows every
front end calls (``search``, ``search_queries``, ``evaluate_retrieval``), the method table,
the prompts, and offline batch rounds.

Above the LLM protocol: ``ScriptedLLMDouble`` (or a ``BodyServer`` / batch output files from
``batch_kit``) stands in for the LLM, the in-memory ``SearchBackend`` double for the engine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, get_args

import pytest
from click.testing import CliRunner
from in_memory_backend import InMemoryBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from batch_kit import (  # noqa: E402
    BodyServer,
    own_response_cache,  # noqa: E402, F401  (autouse: this test's own LLM cache)
    request_lines,
    run_rounds,
)
from scripted_llm import ScriptedLLMDouble, use_llm_double  # noqa: E402

from sira_seek.cli.main import cli  # noqa: E402
from sira_seek.corpus import Query  # noqa: E402
from sira_seek.llm.errors import ServerUnreachableError  # noqa: E402
from sira_seek.sira.expansions import GenerativeExpander  # noqa: E402
from sira_seek.sira.generation_prompts import generation_request  # noqa: E402
from sira_seek.sira.weighted_query import (  # noqa: E402
    GENERATED_NAME,
    ORIGINAL_NAME,
    DerivedParts,
    TextClause,
    WeightedQuery,
)
from sira_seek.workflows.ask import build_retriever  # noqa: E402
from sira_seek.workflows.errors import InvalidInput, Unavailable  # noqa: E402
from sira_seek.workflows.evaluate import (  # noqa: E402
    RetrievalEvaluationRequest,
    evaluate_retrieval,
)
from sira_seek.workflows.methods import GENERATED_WEIGHT, METHODS, RetrievalMethod  # noqa: E402
from sira_seek.workflows.search import (  # noqa: E402
    QueriesSearchRequest,
    SearchRequest,
    search,
    search_queries,
)
from sira_seek.workflows.sira_setup import choose_expander  # noqa: E402

SPEC = "openai:http://llm.test:8000/v1#m"
DOCS = {
    "d1": {"title": "Fritz Lang films", "text": "Fritz Lang film. Fritz Lang film."},
    "d2": {"title": "Metropolis", "text": "A Fritz Lang film about a city of machines."},
    "d3": {"title": "Cinema", "text": "A film industry of Berlin studios."},
    "d4": {"title": "Paris", "text": "Paris is the capital of France on the Seine."},
}
QUERIES = [
    Query(id="q1", text="Fritz Lang film"),
    Query(id="q2", text="capital of France"),
    Query(id="q3", text="Berlin studios"),
]
QRELS = {"q1": {"d2": 1}, "q2": {"d4": 1}, "q3": {"d3": 1}}
# What the scripted LLM writes for each query: words of the judged document only.
PASSAGES = {
    "Fritz Lang film": "Metropolis is about a city of machines.",
    "capital of France": "Paris lies on the Seine.",
    "Berlin studios": "The German film industry of the Weimar years.",
}


def _writer(request: Any) -> str:
    """The passage for the query the prompt carries (either method's wording)."""
    text = json.dumps(request.messages[0].content if request.messages else request.prompt)
    return next(p for q, p in PASSAGES.items() if q in text)


# -- the method table --------------------------------------------------------------------------
def test_the_method_table_and_the_literal_name_the_same_methods() -> None:
    assert tuple(METHODS) == get_args(RetrievalMethod)
    assert {m for m, s in METHODS.items() if s.additions == "generated"} == {"hyde", "cot"}


def test_every_front_end_offers_the_baselines() -> None:
    from sira_seek.service.bodies import SearchBody as HttpSearch

    for command in (["search"], ["eval", "retrieval"], ["explain"]):
        shown = CliRunner().invoke(cli, [*command, "--help"])
        assert "hyde" in shown.output and "cot" in shown.output, command
    schema = json.dumps(HttpSearch.model_json_schema()["properties"]["method"])
    assert '"hyde"' in schema and '"cot"' in schema


# -- prompts -----------------------------------------------------------------------------------
def test_hyde_asks_for_a_passage_in_the_hyde_papers_words() -> None:
    chat = generation_request("hyde", "  Who directed   Metropolis? ", "multihop", chat=True)
    assert chat.messages is not None and len(chat.messages) == 1
    assert chat.messages[0].content == (
        "Please write a passage to answer the question.\n"
        "Question: Who directed Metropolis?\nPassage:"
    )
    claim = generation_request("hyde", "The Seine flows through Paris.", "claim", chat=False)
    assert claim.prompt is not None and claim.prompt.startswith(
        "Please write a passage to support/refute the claim.\nClaim: The Seine"
    )
    assert "\nQuestion:" in claim.stop and claim.json_schema is None  # free text, not JSON


def test_cot_asks_for_the_rationale_before_the_answer() -> None:
    chat = generation_request("cot", "Who directed Metropolis?", "multihop", chat=True)
    assert chat.messages is not None
    assert chat.messages[0].content == (
        "Answer the following query:\nWho directed Metropolis?\n"
        "Give the rationale before answering."
    )
    assert chat.temperature == 0.0 and chat.seed == 0  # one fixed request: cache and rounds


# -- the workflows -----------------------------------------------------------------------------
def test_hyde_adds_the_passage_to_the_query_as_a_named_weighted_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(default=_writer))
    request = SearchRequest.build(query="capital of France", index="idx", method="hyde", llm=SPEC)
    found = search(InMemoryBackend(DOCS), request)
    assert len(llm.calls) == 1 and "Question: capital of France" in str(llm.calls[0].messages)
    assert found.expansion.generated is not None
    assert found.expansion.generated.text == "Paris lies on the Seine."
    assert found.to_search_json()["generated_text"] == {
        "method": "hyde",
        "text": "Paris lies on the Seine.",
    }
    should = found.body["query"]["bool"]["should"]
    group = should[1]["bool"]
    assert group["boost"] == GENERATED_WEIGHT == 0.2  # query2doc's five query copies
    assert "Paris lies on the Seine." in json.dumps(group["should"])
    assert f"{GENERATED_NAME}:hyde" in json.dumps(group["should"])
    assert not found.plain_bm25 and not found.fell_back_to_bm25
    assert found.hits[0].id == "d4"
    assert not found.candidates.candidates  # no grounding: the baseline adds its text as is


def test_cot_text_reaches_documents_the_query_alone_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_llm_double(monkeypatch, ScriptedLLMDouble(default=_writer))
    plain = search(InMemoryBackend(DOCS), SearchRequest.build(query="Berlin studios", index="idx"))
    request = SearchRequest.build(query="Berlin studios", index="idx", method="cot", llm=SPEC)
    found = search(InMemoryBackend(DOCS), request)
    assert {h.id for h in plain.hits} == {"d3"}
    assert {"d1", "d2", "d3"} <= {h.id for h in found.hits}  # "film" from the reasoning
    assert found.hits[0].id == "d3"  # the query still counts five times as much


def test_a_weight_given_wins_over_the_baselines_default(monkeypatch: pytest.MonkeyPatch) -> None:
    use_llm_double(monkeypatch, ScriptedLLMDouble(default=_writer))
    request = SearchRequest.build(
        query="capital of France", index="idx", method="hyde", llm=SPEC, weight=1.5
    )
    assert request.settings().weight == 1.5
    sira = SearchRequest.build(query="x", index="idx", method="sira", phrases=["y"])
    assert sira.settings().weight != GENERATED_WEIGHT  # SIRA keeps its own default
    found = search(InMemoryBackend(DOCS), request)
    assert found.body["query"]["bool"]["should"][1]["bool"]["boost"] == 1.5


def test_a_long_text_is_cut_to_the_query_word_budget_and_said_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SIRA_SEEK_SIRA_MAX_QUERY_WORDS", "10")
    long_text = " ".join(f"w{i}" for i in range(40))
    use_llm_double(monkeypatch, ScriptedLLMDouble(default=long_text))
    request = SearchRequest.build(query="capital of France", index="idx", method="hyde", llm=SPEC)
    found = search(InMemoryBackend(DOCS), request)
    clause = json.dumps(found.body["query"]["bool"]["should"][1])
    assert "w6" in clause and "w7" not in clause  # 10 words minus the query's 3
    assert found.expansion.generated is not None
    assert found.expansion.generated.text == long_text  # the record keeps what was written
    assert any("hyde text cut from 40 to 7 words" in note for note in found.notes)


def test_the_baselines_need_an_llm_and_take_no_phrases() -> None:
    with pytest.raises(InvalidInput, match="method 'hyde' needs an LLM") as caught:
        choose_expander("hyde")
    assert caught.value.field == "llm"
    with pytest.raises(InvalidInput, match="expansions apply to method 'sira' only"):
        choose_expander("cot", expansions={"q": ["x"]}, llm=SPEC)
    with pytest.raises(InvalidInput, match="phrases apply to method 'sira' only"):
        search(
            InMemoryBackend(DOCS),
            SearchRequest.build(query="x", index="idx", method="cot", llm=SPEC, phrases=["y"]),
        )
    assert isinstance(choose_expander("cot", llm=SPEC), GenerativeExpander)


def test_seek_refuses_a_baseline_as_its_sub_query_retriever() -> None:
    with pytest.raises(InvalidInput, match="not 'hyde'"):
        build_retriever(InMemoryBackend(DOCS), "idx", "hyde", llm=SPEC)


# -- the policy for a failing LLM: as SIRA's -----------------------------------------------------
def _evaluate(method: str, tmp_path: Path, **values: Any) -> Any:
    request = RetrievalEvaluationRequest.build(
        index="idx", queries=QUERIES, qrels=QRELS, method=method, llm=SPEC, **values
    )
    return evaluate_retrieval(InMemoryBackend(DOCS), request)


@pytest.mark.parametrize("method", ["hyde", "cot"])
def test_a_dead_llm_stops_the_baseline_after_one_probe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, method: str
) -> None:
    down = ServerUnreachableError("cannot reach the LLM server at http://llm.test:8000/v1")
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(default=down))
    with pytest.raises(Unavailable, match="not answering"):
        _evaluate(method, tmp_path)
    assert len(llm.calls) == 1


def test_with_fallback_the_queries_without_a_text_are_counted_as_bm25(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # q1 gets a passage, q2 an empty answer, q3 a dead LLM
    down = ServerUnreachableError("cannot reach the LLM server")
    use_llm_double(monkeypatch, ScriptedLLMDouble(sequence=[_writer, "   ", down]))
    done = _evaluate("hyde", tmp_path, on_llm_failure="fallback")
    assert done.metrics["fallbacks"] == 2 and done.metrics["queries"] == 3
    assert any("hyde fell back to plain BM25 for 2 of 3 queries" in n for n in done.notes)


def test_an_evaluation_names_its_run_and_records_after_the_method(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_llm_double(monkeypatch, ScriptedLLMDouble(default=_writer))
    run_file, record = tmp_path / "run.trec", tmp_path / "run.json"
    done = _evaluate("cot", tmp_path, run_file=run_file, save_run=record)
    assert done.metrics["ndcg@10"] == 1.0 and done.metrics["fallbacks"] == 0
    assert {line.split()[-1] for line in run_file.read_text().splitlines()} == {"cot"}
    saved = json.loads(record.read_text())
    assert saved["name"] == saved["method"] == "cot"


# -- offline batch rounds ----------------------------------------------------------------------
def _server(url: str, body: dict[str, Any]) -> str:
    text = json.dumps(body["messages"])
    return next(p for q, p in PASSAGES.items() if q in text)


def test_hyde_in_batch_rounds_asks_once_per_query_and_equals_a_live_run(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": q.id, "text": q.text}) + "\n" for q in QUERIES))

    def run(llm: str) -> list[tuple[str | None, list[str], str | None]]:
        request = QueriesSearchRequest.build(queries=queries, index="idx", method="hyde", llm=llm)
        return [
            (
                r.query_id,
                [h.id for h in r.hits],
                r.expansion.generated and r.expansion.generated.text,
            )
            for r in search_queries(InMemoryBackend(DOCS), request)
        ]

    with BodyServer(_server) as live:
        expected = run(f"openai:{live.base_url}#m")
    rounds = tmp_path / "rounds"
    done, waits = run_rounds(lambda: run(f"batch:{rounds}#m"), rounds, _server)
    assert [w.count for w in waits] == [3]  # one round, one request per query, no probe
    bodies = [line["body"] for line in request_lines(rounds, 1)]
    assert all("Please write a passage to answer the question." in json.dumps(b) for b in bodies)
    assert done == expected
    assert [hits[0] for _, hits, _ in done] == ["d2", "d4", "d3"]


# -- the compiled query ------------------------------------------------------------------------
def test_derived_parts_split_a_score_into_the_query_and_the_generated_text() -> None:
    clause = TextClause(name=f"{GENERATED_NAME}:hyde", text="Paris Seine", fields=["text"])
    query = WeightedQuery(
        original=TextClause(name=ORIGINAL_NAME, text="capital", fields=["text"]),
        generated=clause,
        weight=0.2,
        group_names=False,
    )
    body = query.query_dict()
    parts = DerivedParts.of(body)
    assert parts is not None
    assert parts.complete({f"{GENERATED_NAME}:hyde": 5.0}, 3.0) == {
        ORIGINAL_NAME: pytest.approx(2.0),
        GENERATED_NAME: pytest.approx(1.0),
        f"{GENERATED_NAME}:hyde": 5.0,
    }

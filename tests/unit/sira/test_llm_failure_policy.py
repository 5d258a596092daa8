"""One policy for a failing LLM (``on_llm_failure``), in the workflows every front end calls:
``search``, ``search_queries`` and ``evaluate_retrieval`` (batched and recorded).

Above the LLM protocol: ``ScriptedLLMDouble`` stands in for the server (an
``LLMCallError`` in its script is raised as a real client raises it) and the in-memory
``SearchBackend`` double for the engine. ``error`` (the default) stops after one probe naming
the LLM, its URL's password masked; ``fallback`` runs such queries as plain BM25 and counts
them; a single bad answer (malformed, too long) is a counted fallback under either policy.
These are the expansion's calls: every request says ``rerank=0`` (SIRA's default pipeline would
add the rerank's calls, tested in test_rerank_workflows.py).
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from in_memory_backend import InMemoryBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from scripted_llm import ScriptedLLMDouble, use_llm_double  # noqa: E402

from sira_seek.corpus import Query  # noqa: E402
from sira_seek.llm.errors import (  # noqa: E402
    ContextTooLongError,
    LLMTimeoutError,
    ServerUnreachableError,
)
from sira_seek.workflows.errors import InvalidInput, Unavailable  # noqa: E402
from sira_seek.workflows.evaluate import (  # noqa: E402
    RetrievalEvaluationRequest,
    evaluate_retrieval,
)
from sira_seek.workflows.search import (  # noqa: E402
    FALLBACK_NOTE,
    QueriesSearchRequest,
    SearchRequest,
    search,
    search_queries,
)

SPEC = "openai:http://user:s3cret-pw@llm.test:8000/v1#m"
SHOWN = "openai:http://***@llm.test:8000/v1#m"
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
    Query(id="q4", text="city of machines"),
]
QRELS = {"q1": {"d2": 1}, "q2": {"d4": 1}, "q3": {"d3": 1}, "q4": {"d2": 1}}
ANSWER = json.dumps({"keywords": ["machines"]})


def _down() -> ServerUnreachableError:
    return ServerUnreachableError(
        "cannot reach the LLM server at http://user:s3cret-pw@llm.test:8000/v1/chat/completions"
    )


def _evaluate(recorded: bool, tmp_path: Path, **values: Any) -> Any:
    extra = {"save_run": tmp_path / "run.json"} if recorded else {}
    request = RetrievalEvaluationRequest.build(
        index="idx",
        queries=QUERIES,
        qrels=QRELS,
        method="sira",
        llm=SPEC,
        **extra,
        **{"rerank": 0, **values},  # rerank=None: SIRA's default depth
    )
    return evaluate_retrieval(InMemoryBackend(DOCS), request)


def _says_the_llm(error: BaseException) -> None:
    text = str(error)
    assert SHOWN in text and "not answering" in text
    assert "s3cret-pw" not in text
    assert "--on-llm-failure fallback" in text


# -- error, the default: one probe, then a stop naming the LLM -----------------------------------
@pytest.mark.parametrize("recorded", [False, True], ids=["batched", "recorded"])
def test_an_evaluation_with_its_llm_down_stops_after_one_probe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, recorded: bool
) -> None:
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(default=_down()))
    with pytest.raises(Unavailable) as caught:
        _evaluate(recorded, tmp_path)
    _says_the_llm(caught.value)
    assert len(llm.calls) == 1  # the probe: not one call (and its retries) per query
    assert not (tmp_path / "run.json").exists()  # no record of a run that did not happen


def test_a_timeout_stops_the_run_as_unreachable_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_llm_double(monkeypatch, ScriptedLLMDouble(default=LLMTimeoutError("no answer in 60 s")))
    with pytest.raises(Unavailable, match="timeout: no answer in 60 s"):
        _evaluate(False, tmp_path)


def test_an_llm_that_dies_after_the_probe_still_stops_the_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(sequence=[ANSWER], default=_down()))
    with pytest.raises(Unavailable) as caught:
        _evaluate(False, tmp_path)
    _says_the_llm(caught.value)
    assert len(llm.calls) == len(QUERIES)


def test_a_single_search_with_its_llm_down_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_llm_double(monkeypatch, ScriptedLLMDouble(default=_down()))
    request = SearchRequest.build(query="Fritz Lang film", index="idx", method="sira", llm=SPEC)
    with pytest.raises(Unavailable) as caught:
        search(InMemoryBackend(DOCS), request)
    _says_the_llm(caught.value)


def test_search_queries_with_its_llm_down_stops_after_one_probe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": q.id, "text": q.text}) + "\n" for q in QUERIES))
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(default=_down()))
    request = QueriesSearchRequest.build(
        queries=queries, index="idx", method="sira", llm=SPEC, rerank=0
    )
    with pytest.raises(Unavailable):
        search_queries(InMemoryBackend(DOCS), request)
    assert len(llm.calls) == 1

    llm.calls.clear()
    fallback = QueriesSearchRequest.build(
        queries=queries, index="idx", method="sira", llm=SPEC, rerank=0, on_llm_failure="fallback"
    )
    results = search_queries(InMemoryBackend(DOCS), fallback)
    assert len(llm.calls) == 1  # the circuit opened at the probe: no call per query
    assert [r.fell_back_to_bm25 for r in results] == [True] * len(QUERIES)
    assert "not there at query 1" in results[-1].notes[-1]


# -- fallback: every query tried, those without phrases counted and shown ------------------------
@pytest.mark.parametrize("recorded", [False, True], ids=["batched", "recorded"])
def test_fallback_finishes_and_counts_the_queries_run_as_bm25(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, recorded: bool
) -> None:
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(sequence=[ANSWER, ANSWER], default=_down()))
    done = _evaluate(recorded, tmp_path, on_llm_failure="fallback")
    assert len(llm.calls) == len(QUERIES)
    assert done.metrics["fallbacks"] == 2 and done.metrics["queries"] == 4
    assert any(f"{FALLBACK_NOTE} for 2 of 4 queries" in note for note in done.notes)


def test_fallback_of_a_single_search_is_shown_in_the_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_llm_double(monkeypatch, ScriptedLLMDouble(default=_down()))
    request = SearchRequest.build(
        query="Fritz Lang film", index="idx", method="sira", llm=SPEC, on_llm_failure="fallback"
    )
    result = search(InMemoryBackend(DOCS), request)
    assert result.fell_back_to_bm25 and result.plain_bm25
    assert result.to_search_json()["fell_back_to_bm25"] is True
    assert any(note.startswith(FALLBACK_NOTE) for note in result.notes)


def test_one_bad_answer_is_a_counted_fallback_not_a_stop(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A prompt too long for the model is that query's problem, not the LLM being down."""
    too_long = ContextTooLongError("prompt too long")
    use_llm_double(monkeypatch, ScriptedLLMDouble(sequence=[ANSWER, too_long], default=ANSWER))
    done = _evaluate(False, tmp_path)
    assert done.metrics["fallbacks"] == 1


def test_bm25_has_no_fallbacks_and_the_policy_is_checked_once() -> None:
    request = RetrievalEvaluationRequest.build(index="idx", queries=QUERIES, qrels=QRELS)
    assert evaluate_retrieval(InMemoryBackend(DOCS), request).metrics["fallbacks"] == 0
    with pytest.raises(InvalidInput, match="on_llm_failure"):
        SearchRequest.build(query="q", index="idx", on_llm_failure="ignore")


# -- fallback's circuit: an LLM found absent is not called again in the run ---------------------
@pytest.mark.parametrize("recorded", [False, True], ids=["batched", "recorded"])
def test_fallback_with_the_llm_down_calls_it_once_not_once_per_query(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, recorded: bool
) -> None:
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(default=_down()))
    done = _evaluate(recorded, tmp_path, on_llm_failure="fallback")
    assert len(llm.calls) == 1  # the probe found it absent: the other 3 queries never call it
    assert done.metrics["fallbacks"] == 4 and done.metrics["queries"] == 4
    (note,) = [n for n in done.notes if n.startswith(FALLBACK_NOTE)]
    assert "the LLM was not there at query 1" in note
    assert "the remaining 3 queries ran as BM25" in note
    assert "s3cret-pw" not in note


@pytest.mark.parametrize("recorded", [False, True], ids=["batched", "recorded"])
def test_fallback_with_the_llm_down_reranks_one_query_not_every_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, recorded: bool
) -> None:
    """SIRA's default rerank in a fallback run: the first query's rerank calls find the LLM
    absent and open the rerank's circuit, so the other queries keep BM25 order uncalled (found
    on wikimh: 20 queries, 200 rerank calls to a dead server after the expansions' circuit)."""
    q1_hits = search(InMemoryBackend(DOCS), SearchRequest.build(query=QUERIES[0].text, index="idx"))
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(default=_down()))
    done = _evaluate(recorded, tmp_path, on_llm_failure="fallback", rerank=None)
    assert len(llm.calls) == 1 + len(q1_hits.hits) > 2  # the probe, then q1's rerank calls only
    assert done.metrics["rerank"] == 10 and done.metrics["fallbacks"] == 4
    plain = _evaluate(recorded, tmp_path, on_llm_failure="fallback", rerank=0)
    assert done.metrics["ndcg@10"] == plain.metrics["ndcg@10"]  # every list kept its order
    (note,) = [n for n in done.notes if n.startswith("rerank: the LLM was not there")]
    assert "at query 1" in note and "the remaining 3 queries kept their order" in note
    assert "s3cret-pw" not in note


def test_an_llm_dying_mid_run_opens_the_circuit_after_its_chunk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Probe (q1), then chunks of 2: q2 answered, q3 finds the LLM gone; q4 is never asked."""
    monkeypatch.setattr("sira_seek.sira.expansions.CIRCUIT_CHUNK", 2)
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(sequence=[ANSWER, ANSWER], default=_down()))
    done = _evaluate(False, tmp_path, on_llm_failure="fallback")
    assert len(llm.calls) == 3
    assert done.metrics["fallbacks"] == 2  # q3 (failed) and q4 (not asked), both counted
    assert any("not there at query 3" in n and "remaining 1 queries" in n for n in done.notes)


def test_one_bad_answer_does_not_open_the_circuit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A malformed or too-long answer is that query's problem: the next queries still ask."""
    too_long = ContextTooLongError("prompt too long")
    llm = use_llm_double(monkeypatch, ScriptedLLMDouble(sequence=[too_long], default=ANSWER))
    done = _evaluate(False, tmp_path, on_llm_failure="fallback")
    assert len(llm.calls) == len(QUERIES)
    assert done.metrics["fallbacks"] == 1
    assert not any("not there" in n for n in done.notes)


def test_a_saved_run_and_its_report_name_the_queries_that_fell_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--save-run`` keeps which queries ran as BM25; ``sira-seek report`` shows the count in
    the run's summary row and names them."""
    import re

    from sira_seek.metrics.run_record import RunRecord
    from sira_seek.reporting.html_report import render_report

    use_llm_double(monkeypatch, ScriptedLLMDouble(sequence=[ANSWER, ANSWER], default=_down()))
    done = _evaluate(True, tmp_path, on_llm_failure="fallback", name="sira-fb")
    record = RunRecord.load(tmp_path / "run.json")
    assert record.fallbacks == ["q3", "q4"]  # the LLM went away after two answers
    assert done.metrics["fallbacks"] == len(record.fallbacks)

    bm25 = RunRecord(name="bm25", method="bm25", per_query={"q1": {}})
    html = render_report([bm25, record])
    cells = re.findall(r'<td data-key="fallbacks">(\d+)</td>', html)
    assert cells == ["0", "2"]  # one per run, in the summary beside the metrics
    (note,) = re.findall(r'<p class="note" data-run="sira-fb">([^<]*)</p>', html)
    assert "2 of 4 queries fell back to plain BM25" in note and note.endswith("q3, q4")


def test_the_cli_says_a_fallback_once_not_as_a_warning_and_a_note(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``eval retrieval --on-llm-failure fallback``: the library logs the fallback (and the
    open circuit) for its own users; the CLI, which prints the evaluation's notes, shows each
    fact on one ``note:`` line, not a second time as the log record."""
    from click.testing import CliRunner

    from sira_seek.cli import eval_cmds
    from sira_seek.cli.main import cli

    use_llm_double(monkeypatch, ScriptedLLMDouble(default=_down()))
    monkeypatch.setattr(eval_cmds, "LazyBackend", lambda cluster: InMemoryBackend(DOCS))
    # As in a fresh process: no handler of pytest's on the root logger (with none, Python's
    # last-resort handler would print every warning on stderr).
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    (tmp_path / "q.jsonl").write_text(
        "".join(json.dumps({"_id": q.id, "text": q.text}) + "\n" for q in QUERIES)
    )
    (tmp_path / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q}\t{d}\t1\n" for q, docs in QRELS.items() for d in docs)
    )
    args = ["eval", "retrieval", "--index", "idx", "--method", "sira", "--llm", SPEC]
    args += ["--on-llm-failure", "fallback", "--queries", str(tmp_path / "q.jsonl")]
    args += ["--qrels", str(tmp_path / "qrels.tsv"), "--json", "--no-progress"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["fallbacks"] == 4
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert [line for line in lines if FALLBACK_NOTE in line] == [
        f"note: {FALLBACK_NOTE} for 4 of 4 queries: their figures are BM25's (the LLM failed "
        "or the phrase source had no entry); the LLM was not there at query 1 (unreachable: "
        "cannot reach the LLM server at http://***@llm.test:8000/v1/chat/completions); the "
        "remaining 3 queries ran as BM25 without calling it"
    ]
    assert sum("not there at query 1" in line for line in lines) == 2  # expansions, rerank
    assert sum("rerank: the LLM was not there" in line for line in lines) == 1

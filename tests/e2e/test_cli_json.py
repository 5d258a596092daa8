"""Every command's ``--json`` as a script meets it: the installed CLIs on real nodes print one
valid JSON document (no NaN) whose keys are exactly the ones the docs' JSON output page
documents, read from docs/reference/json-output.md itself (tests/e2e/readme_keys.py).

``ask`` and ``eval qa`` talk to the scripted OpenAI-compatible stub server (a real HTTP server
on 127.0.0.1), so they run without a model; everything else needs no LLM. The keys are the
CLI's, whatever engine answers: one engine (tests/engine_matrix.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_runner import BIN, run_cli
from engine_matrix import ONE_ENGINE
from readme_keys import check_keys, documented

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "llm"))
from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.integration, ONE_ENGINE]

DOCS = {
    "d1": ("Arthur's Magazine", "Arthur's Magazine (1844-1846) was an American literary "
           "periodical published in Philadelphia in the 19th century."),
    "d2": ("First for Women", "First for Women is a woman's magazine published by Bauer Media "
           "Group in the USA. The magazine was started in 1989."),
    "d3": ("Philadelphia", "Philadelphia is the largest city in Pennsylvania."),
    "d4": ("Bauer Media Group", "Bauer Media Group is a German media company in Hamburg."),
    "d5": ("Hamburg", "Hamburg is the second-largest city in Germany."),
}  # fmt: skip
QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
SEEK_REPLY = (
    "# Sketch\n## Evidence about the magazines\n<query>magazine started</query>\n"
    "Arthur's Magazine is the older one.\n<answer>Arthur's Magazine</answer>"
)


@dataclass
class World:
    """One engine's node, a small ingested corpus, and every input file the commands read."""

    url: str
    index: str
    folder: Path
    stub_url: str

    def path(self, name: str) -> str:
        return str(self.folder / name)


@pytest.fixture(scope="module")
def world(
    node_urls: dict[str, str], engine: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    folder = tmp_path_factory.mktemp(f"cli-json-{engine}")
    lines = [json.dumps({"_id": k, "title": t, "text": x}) for k, (t, x) in DOCS.items()]
    (folder / "corpus.jsonl").write_text("\n".join([*lines, '{"title": "no id"}']) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": QUESTION}) + "\n")
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\n")
    expansions = {"_id": "q1", "keywords": ["literary periodical", "Bauer Media Group", "1844"]}
    (folder / "expansions.jsonl").write_text(json.dumps(expansions) + "\n")
    (folder / "enrich.jsonl").write_text(
        json.dumps({"_id": "d1", "keywords": ["nineteenth century magazine"]}) + "\n"
    )
    (folder / "qa.jsonl").write_text(
        json.dumps({"id": "q1", "question": QUESTION, "answer": "Arthur's Magazine"}) + "\n"
        + json.dumps({"id": "q2", "question": "Where is Bauer Media Group?"}) + "\n"
    )  # fmt: skip
    (folder / "predictions.jsonl").write_text(
        json.dumps({"answer": "Arthur's Magazine", "pred_ans": "arthur's magazine"}) + "\n"
        + json.dumps({"golden_answers": ["Hamburg"], "pred_ans": "Berlin"}) + "\n"
    )  # fmt: skip
    index = f"test-json-{uuid.uuid4().hex[:8]}"
    with StubOpenAIServer(default=StubReply(text=SEEK_REPLY)) as stub:
        found = World(url=node_urls[engine], index=index, folder=folder, stub_url=stub.base_url)
        try:
            _ok(run_cli(["ingest", found.path("corpus.jsonl"), *_cluster(found)]))
            for method in ("bm25", "sira"):
                extra = _sira(found) if method == "sira" else []
                saved = ["--save-run", found.path(f"{method}.json")]
                args = ["eval", "retrieval", *_eval_files(found), "--method", method]
                _ok(run_cli([*args, *extra, *_cluster(found), *saved]))
            yield found
        finally:
            backend = connect(ClusterSettings(url=node_urls[engine]))
            backend.delete_index(index)
            backend.delete_index(f"{index}-migrated")


def _ok(res: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr[-2000:]}"
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    return res


def run_sync(args: list[str]) -> subprocess.CompletedProcess[str]:
    """The installed ``sira-sync`` console script, as a user runs it."""
    return subprocess.run(
        [str(BIN / "sira-sync"), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
        check=False,
    )


def _no_nan(constant: str) -> Any:
    raise AssertionError(f"{constant} is not JSON")


@dataclass
class Case:
    command: str  # the docs table's name for it
    run: Callable[[World], subprocess.CompletedProcess[str]]
    nonempty: frozenset[str] = frozenset()
    check: Callable[[Any], Any] | None = None  # values that show the command really ran


def _cluster(w: World) -> list[str]:
    return ["--index", w.index, "--url", w.url]


def _eval_files(w: World) -> list[str]:
    return ["--queries", w.path("queries.jsonl"), "--qrels", w.path("qrels.tsv")]


def _sira(w: World) -> list[str]:
    return ["--expansions", w.path("expansions.jsonl"), "--tau", "0.5"]


def _llm(w: World) -> list[str]:
    return ["--llm", f"openai:{w.stub_url}#stub-model", "--no-cache"]


CASES: dict[str, Case] = {
    "node status": Case(
        "node status",
        lambda w: run_cli(["node", "status", "--json"]),
        nonempty=frozenset({"nodes"}),
    ),
    "ingest": Case(
        "ingest",
        lambda w: run_cli(["ingest", w.path("corpus.jsonl"), *_cluster(w), "--json"]),
        nonempty=frozenset({"bad_records"}),
        check=lambda out: out["unchanged"] == len(DOCS) and out["bad_records"][0]["line"] == 6,
    ),
    "search bm25": Case(
        "search",
        lambda w: run_cli(["search", QUESTION, *_cluster(w), "--json"]),
        nonempty=frozenset({"hits"}),
        check=lambda out: out["plain_bm25"] and out["expansion_source"] == "none",
    ),
    "search sira": Case(
        "search",
        lambda w: run_cli(["search", QUESTION, "--id", "q1", *_sira(w), *_cluster(w), "--json"]),
        nonempty=frozenset({"hits"}),
        check=lambda out: out["expansion_source"] == "precomputed" and not out["plain_bm25"],
    ),
    "explain": Case(
        "explain",
        lambda w: run_cli(
            ["explain", "d1", "--query", QUESTION, *_sira(w), *_cluster(w), "--json"]
        ),
        check=lambda out: out["matched"] is True and out["score"] > 0,
    ),
    "ask": Case(
        "ask",
        lambda w: run_cli(["ask", QUESTION, *_llm(w), *_cluster(w), "--json"]),
        check=lambda out: out["answer"] == "Arthur's Magazine" and out["explain"] is None,
    ),
    "eval retrieval bm25": Case(
        "eval retrieval",
        lambda w: run_cli(["eval", "retrieval", *_eval_files(w), *_cluster(w), "--json"]),
        check=lambda out: out["queries"] == 1 and 0 < out["ndcg@10"] <= 1,
    ),
    "eval retrieval sira": Case(
        "eval retrieval",
        lambda w: run_cli(
            [
                "eval",
                "retrieval",
                *_eval_files(w),
                "--method",
                "sira",
                *_sira(w),
                *_cluster(w),
                "--json",
            ]
        ),  # fmt: skip
        check=lambda out: out["queries"] == 1 and out["recall@10"] == 1.0,
    ),
    "eval enrichment": Case(
        "eval enrichment",
        lambda w: run_cli(
            ["eval", "enrichment", *_eval_files(w), *_sira(w), *_cluster(w), "--json"]
        ),
        nonempty=frozenset({"rows"}),
        check=lambda out: {r["method"] for r in out["rows"]} == {"bm25", "sira"},
    ),
    "eval qa": Case(
        "eval qa",
        lambda w: run_cli(
            [
                "eval",
                "qa",
                "--qa",
                w.path("qa.jsonl"),
                "--method",
                "seek",
                *_llm(w),
                *_cluster(w),
                "--json",
            ]
        ),  # fmt: skip
        check=lambda out: (out["questions"], out["no_gold"], out["cover_em"]) == (1, 1, 1.0),
    ),
    "eval qa-score": Case(
        "eval qa-score",
        lambda w: run_cli(
            ["eval", "qa-score", "--predictions", w.path("predictions.jsonl"), "--json"]
        ),  # fmt: skip
        check=lambda out: (out["questions"], out["em"]) == (2, 0.5),
    ),
    "report": Case(
        "report",
        lambda w: run_cli(
            [
                "report",
                w.path("bm25.json"),
                w.path("sira.json"),
                "--out",
                w.path("report.html"),
                "--json",
            ]
        ),  # fmt: skip
        check=lambda out: out["runs"] == ["bm25", "sira"] and out["screenshot"] is None,
    ),
    "kibana export": Case(
        "kibana export",
        lambda w: run_cli(["kibana", "export", "--out", w.path("objects.ndjson"), "--json"]),
        check=lambda out: out["count"] == len(out["objects"]) > 0,
    ),
    "sira-sync run": Case(
        "sira-sync run",
        lambda w: run_sync(
            [
                "run",
                *_cluster(w),
                "--from-jsonl",
                w.path("enrich.jsonl"),
                "--state-dir",
                w.path("sync-state"),
                "--json",
            ]
        ),  # fmt: skip
        check=lambda out: out["counts"]["enriched"] == 1,
    ),
    "sira-sync status": Case(
        "sira-sync status",
        lambda w: run_sync(["status", *_cluster(w), "--json"]),
        check=lambda out: out["total"] == len(DOCS) and out["enriched"] >= 1,
    ),
    "sira-sync export-requests": Case(
        "sira-sync export-requests",
        lambda w: run_sync(
            [
                "export-requests",
                *_cluster(w),
                "--out",
                w.path("req.jsonl"),
                "--model",
                "m",
                "--json",
            ]
        ),
        # Documents enriched from a JSONL have another model: each needs an openai:m request.
        check=lambda out: out["requests"] == len(DOCS) and out["fingerprint_model"] == "openai:m",
    ),
    "sira-sync migrate": Case(
        "sira-sync migrate",
        lambda w: run_sync(["migrate", *_cluster(w), "--into", f"{w.index}-migrated", "--json"]),
        check=lambda out: out["copied"] == len(DOCS),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_json_output_has_exactly_the_documented_keys(world: World, case: str) -> None:
    spec = CASES[case]
    res = _ok(spec.run(world))
    out = json.loads(res.stdout, parse_constant=_no_nan)
    documented_keys = documented(spec.command)
    entries = out if spec.command.startswith("node ") else [out]
    assert entries, f"{case}: nothing listed"
    for n, entry in enumerate(entries):
        check_keys(entry, documented_keys, f"{case}[{n}]", nonempty=set(spec.nonempty))
    if spec.check is not None:
        assert spec.check(out), f"{case}: unexpected values {json.dumps(out)[:1500]}"

"""A dead LLM never passes for SIRA: ``eval retrieval --method sira`` with nothing listening at
the LLM's address, as a user runs it against a real node.

By default (``--on-llm-failure error``) the run stops after one probe, exit 1, naming the LLM
(its password masked); with ``--on-llm-failure fallback`` it finishes and says how many queries
ran as plain BM25, in ``--json`` and on stderr.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import ingested_collection, run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

PASSWORD = "llm-pw-8c1e"
DEAD_LLM = f"openai:http://user:{PASSWORD}@127.0.0.1:9/v1#m"  # port 9: nothing listens
SHOWN = "openai:http://***@127.0.0.1:9/v1#m"
DOCS = [
    {"_id": "a", "title": "Apollo 11", "text": "First crewed Moon landing, July 1969."},
    {"_id": "b", "title": "Sputnik", "text": "First artificial Earth satellite, 1957."},
    {"_id": "c", "title": "Vostok 1", "text": "Yuri Gagarin, first human in space."},
]
QUERIES = {"q1": "first human in space", "q2": "moon landing 1969", "q3": "artificial satellite"}
QRELS = {"q1": "c", "q2": "a", "q3": "b"}


@pytest.fixture
def tiny(node_urls: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """(url, index, folder): three documents ingested into a fresh index on the shared node,
    its queries and qrels in ``folder``."""
    url, index = node_urls["opensearch"], f"e2e-llm-down-{uuid.uuid4().hex[:8]}"
    with ingested_collection(url, index, tmp_path, DOCS, QUERIES, QRELS):
        yield url, index, tmp_path


def _eval(url: str, index: str, folder: Path, *extra: str) -> tuple[int, str, str]:
    done = run_cli(
        [
            "eval", "retrieval", "--index", index, "--url", url, "--method", "sira",
            "--llm", DEAD_LLM, "--queries", str(folder / "queries.jsonl"),
            "--qrels", str(folder / "qrels.tsv"), "--json", *extra,
        ]
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_eval_with_an_unreachable_llm_stops_naming_it(tiny: tuple[str, str, Path]) -> None:
    code, out, err = _eval(*tiny)
    assert code == 1, (out, err)
    assert out == ""  # no metrics: BM25's figures are not reported as SIRA's
    assert SHOWN in err and "not answering" in err and "unreachable" in err
    assert "--on-llm-failure fallback" in err
    assert PASSWORD not in out + err


def test_eval_with_fallback_finishes_and_counts_the_fallen_back_queries(
    tiny: tuple[str, str, Path],
) -> None:
    code, out, err = _eval(*tiny, "--on-llm-failure", "fallback")
    assert code == 0, err
    metrics = json.loads(out)
    assert metrics["queries"] == 3 and metrics["fallbacks"] == 3
    assert "SIRA fell back to plain BM25 for 3 of 3 queries" in err
    assert PASSWORD not in out + err

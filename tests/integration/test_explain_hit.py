"""`sira-seek explain`: one hit's score split into the weighted query's named clauses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek.cli.main import cli

pytestmark = pytest.mark.integration

QID = "hotpotqa-5a77ec115542992a6e59dff7"
QUESTION = "If Gallu is a demon Lilu is what?"


def _run(args: list[str]) -> dict:
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{") :])


def test_clause_scores_add_up_to_the_hit_score(
    node_urls: dict[str, str], wikimh_indexes: dict[str, str], wikimh_dir: Path, engine: str
) -> None:
    common = [
        "--index",
        wikimh_indexes[engine],
        "--url",
        node_urls[engine],
        "--id",
        QID,
        "--expansions",
        str(wikimh_dir / "expansions-hotpotqa.strong-llm.jsonl"),
        "--json",
    ]
    hits = _run(["search", QUESTION, *common])["hits"]
    top = hits[1]
    info = _run(["explain", top["_id"], "--query", QUESTION, *common])
    assert info["matched"] and info["score"] == pytest.approx(top["score"], rel=1e-5)
    parts = {c["name"]: c["score"] for c in info["clauses"]}
    assert "sira_original" in parts and "sira_expansion" in parts
    # the expansion group reports its boosted score; the two groups sum to the hit's score
    assert parts["sira_original"] + parts["sira_expansion"] == pytest.approx(
        info["score"], rel=1e-4
    )
    assert info["engine_explanation"]["value"] == pytest.approx(info["score"], rel=1e-4)


def test_non_matching_document_is_said_plainly(
    node_urls: dict[str, str], wikimh_indexes: dict[str, str], engine: str
) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "explain",
            "no-such-doc",
            "--query",
            QUESTION,
            "--index",
            wikimh_indexes[engine],
            "--url",
            node_urls[engine],
        ],
    )
    assert res.exit_code == 0 and "does not match this query" in res.output

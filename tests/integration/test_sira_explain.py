"""`search --explain` prints a Dev Tools request that, sent to the node, returns the same hits."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek.backend import SearchBackend
from sira_seek.cli.main import cli

pytestmark = pytest.mark.integration

STRONG = "expansions-hotpotqa.strong-llm.jsonl"
QUERIES = [
    (
        "hotpotqa-5ae40c465542996836b02c25",
        "Are Christopher Nolan and Sathish Kalathil both film directors?",
    ),
    ("hotpotqa-5a77ec115542992a6e59dff7", "If Gallu is a demon Lilu is what?"),
]


def send_dev_tools_request(url: str, text: str) -> dict:
    """What pasting into Dev Tools does: first line METHOD path, the rest the JSON body."""
    first, body = text.split("\n", 1)
    method, path = first.split(" ", 1)
    req = urllib.request.Request(
        f"{url.rstrip('/')}/{path.lstrip('/')}",
        data=body.encode("utf-8"),
        method=method,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def _search(url: str, index: str, *args: str) -> tuple[str, str]:
    result = CliRunner().invoke(cli, ["search", *args, "--index", index, "--url", url])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


@pytest.mark.parametrize(("qid", "text"), QUERIES)
def test_explain_output_returns_the_same_ids_in_the_same_order(
    backends: dict[str, SearchBackend],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    engine: str,
    qid: str,
    text: str,
) -> None:
    url, index = backends[engine].info.url, wikimh_indexes[engine]
    flags = [text, "--id", qid, "--expansions", str(wikimh_dir / STRONG), "--size", "20"]
    as_json, _ = _search(url, index, *flags, "--json")
    explained, _ = _search(url, index, *flags, "--explain")
    payload = json.loads(as_json)
    params = "search_type=dfs_query_then_fetch&include_named_queries_score=true"
    assert explained.startswith(f"GET {index}/_search?{params}\n")
    raw = send_dev_tools_request(url, explained)
    pasted = [(h["_id"], round(h["_score"], 4)) for h in raw["hits"]["hits"]]
    printed = [(h["_id"], round(h["score"], 4)) for h in payload["hits"]]
    assert pasted == printed and len(printed) == 20
    # the request really is SIRA's weighted query, and the named clauses show up in hits
    assert payload["query"] == json.loads(explained.split("\n", 1)[1])
    group = payload["query"]["query"]["bool"]["should"][1]["bool"]
    weight = group["boost"]
    assert all("sira_expansion:" in json.dumps(clause) for clause in group["should"])
    # The formula score = BM25(q) + w * BM25(q_exp) in every printed hit: the phrases' own
    # scores come from the engine (the same when the request is pasted), the two parts are
    # derived from them (the engine names only the phrase clauses: cheaper per hit).
    for pasted_hit, hit in zip(raw["hits"]["hits"], payload["hits"], strict=True):
        named = hit["matched_queries"] or {}
        phrases = {k: v for k, v in named.items() if k.startswith("sira_expansion:")}
        assert phrases == pytest.approx(pasted_hit.get("matched_queries") or {})
        expansion = named.get("sira_expansion", 0.0)
        assert expansion == pytest.approx(weight * sum(phrases.values()))
        assert named.get("sira_original", 0.0) + expansion == pytest.approx(hit["score"], 1e-4)
    assert "sira_original" in payload["hits"][0]["matched_queries"]
    assert any(h["matched_queries"].get("sira_expansion") for h in payload["hits"])
    kept = [c for c in payload["candidates"] if c["decision"] == "kept"]
    assert kept and all(c["doc_freq"] > 0 for c in kept)
    assert {c["decision"] for c in payload["candidates"]} <= {
        "kept",
        "absent",
        "too_common",
        "no_terms",
        "too_long",
        "in_query",
        "over_limit",
    }


def test_search_json_shape(
    backends: dict[str, SearchBackend], wikimh_indexes: dict[str, str], engine: str
) -> None:
    out, _ = _search(backends[engine].info.url, wikimh_indexes[engine], "Kalathil", "--json")
    payload = json.loads(out)
    assert {"hits", "query", "candidates"} <= set(payload)
    assert payload["hits"][0]["_id"] == "hp00015" and payload["hits"][0]["score"] > 0
    assert payload["plain_bm25"] is True and payload["candidates"] == []

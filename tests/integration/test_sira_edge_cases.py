"""Hostile inputs on a real node: each gives a result or a clear error, never a stack trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from seeds import seeded_rng

from sira_seek.backend import SearchBackend
from sira_seek.cli.main import cli
from sira_seek.sira import EmptyQueryError, SiraRetriever, SiraSettings

pytestmark = pytest.mark.integration


def _cli(backend: SearchBackend, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*args, "--url", backend.info.url])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_empty_query(backend: SearchBackend, wikimh_indexes: dict[str, str], engine: str) -> None:
    index = wikimh_indexes[engine]
    with pytest.raises(EmptyQueryError):
        SiraRetriever(backend, index).search("   ")
    code, _, err = _cli(backend, "search", "  ", "--index", index)
    assert code == 2 and "query: is blank" in err


def test_query_with_no_known_terms(
    backend: SearchBackend, wikimh_indexes: dict[str, str], engine: str
) -> None:
    res = SiraRetriever(backend, wikimh_indexes[engine]).search(
        "qzxwvv blorptang", phrases=["frobnicatrix", "zzyzzyva quux"]
    )
    assert res.hits == [] and res.plain_bm25
    assert [c.decision for c in res.candidates.candidates] == ["absent", "absent"]
    code, out, _ = _cli(backend, "search", "qzxwvv blorptang", "--index", wikimh_indexes[engine])
    assert code == 0 and "no hits" in out


def test_unicode_query_and_phrases(
    backend: SearchBackend, wikimh_indexes: dict[str, str], engine: str
) -> None:
    res = SiraRetriever(backend, wikimh_indexes[engine]).search(
        "Zürich naïve café 東京タワー 🗼 Ελλάδα", phrases=["São Paulo", "Ελλάδα", "🗼"]
    )
    assert res.hits and res.total > 0
    assert {c.phrase: c.decision for c in res.candidates.candidates}["🗼"] in {"no_terms", "absent"}
    code, out, _ = _cli(
        backend, "search", "Zürich café 東京", "--index", wikimh_indexes[engine], "--json"
    )
    assert code == 0 and json.loads(out)["hits"]


def test_very_long_query_is_cut_not_refused(
    backend: SearchBackend, wikimh_indexes: dict[str, str], engine: str
) -> None:
    rng = seeded_rng("long query words")
    words = ["film", "river", "album", "born", "city", "Nolan", "war", "band", "novel"]
    text = " ".join(rng.choice(words) for _ in range(20_000))
    res = SiraRetriever(backend, wikimh_indexes[engine]).search(text)
    assert res.hits and any("cut from 20000" in n for n in res.notes)
    # The command line cuts a long query too (under the 8,192-character bound every front end
    # applies), and refuses a longer one with the bound, before any request.
    shorter = " ".join(text.split()[:1200])
    code, out, _ = _cli(backend, "search", shorter, "--index", wikimh_indexes[engine], "--json")
    assert code == 0 and json.loads(out)["hits"]
    assert any("cut from 1200" in n for n in json.loads(out)["notes"])
    code, _, err = _cli(backend, "search", text, "--index", wikimh_indexes[engine])
    assert code == 2 and "at most 8,192 are accepted" in err


def test_one_thousand_candidate_phrases_in_one_df_request(
    backend: SearchBackend, wikimh_indexes: dict[str, str], engine: str, tmp_path: Path
) -> None:
    rng = seeded_rng("candidate phrases")
    vocab = [
        "film",
        "director",
        "Kerala",
        "Malayalam",
        "Nolan",
        "album",
        "river",
        "qzxv",
        "the",
        "battle",
        "Mesopotamia",
        "novel",
        "singer",
        "zzkq",
        "Danube",
    ]
    phrases = list(
        dict.fromkeys(" ".join(rng.sample(vocab, rng.randint(1, 3))) + f" {i}" for i in range(1000))
    )
    assert len(phrases) == 1000
    # the index's counts kept for the whole test: the second search is one request
    settings = SiraSettings(df_stats_max_age=3600)
    retriever = SiraRetriever(backend, wikimh_indexes[engine], settings=settings)
    question = "Are Christopher Nolan and Sathish Kalathil both film directors?"
    retriever.search(question, phrases=phrases[:1])
    res = retriever.search(question, phrases=phrases)
    table = res.candidates
    assert len(table.candidates) == 1000 and table.round_trips == 1  # analysis and DF at once
    decisions = {c.decision for c in table.candidates}
    assert "kept" in decisions and "over_limit" in decisions
    assert len(table.kept) == retriever.settings.max_kept
    assert res.hits
    # more than the limit is a clear error through the CLI too
    exp = tmp_path / "exp.jsonl"
    exp.write_text(json.dumps({"text": "nolan", "keywords": [f"w{i}" for i in range(1001)]}))
    code, _, err = _cli(
        backend, "search", "nolan", "--index", wikimh_indexes[engine], "--expansions", str(exp)
    )
    assert code == 2 and "exceed max_candidates=1000" in err


def test_index_without_enrichment_fields(backend: SearchBackend, index_name: str) -> None:
    """A user's index built without sira_enrichment: contents only, no shingle subfield."""
    backend.create_index(
        index_name,
        {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {"properties": {"contents": {"type": "text"}}},
        },
    )
    backend.bulk_upsert(
        index_name,
        [
            {"_id": "1", "contents": "Christopher Nolan directed Inception"},
            {"_id": "2", "contents": "Sathish Kalathil is a Malayalam documentary filmmaker"},
            {"_id": "3", "contents": "The Danube flows through Budapest"},
        ],
    )
    backend.refresh(index_name)
    retriever = SiraRetriever(backend, index_name, settings=SiraSettings(tau=0.5))
    assert not retriever.profile.has_enrichment and retriever.profile.shingle_field is None
    res = retriever.search("who directed films", phrases=["Malayalam", "Inception", "Budapest"])
    assert res.candidates.doc_count == 3
    assert res.hits[0].id == "1" and len(res.hits) == 3  # orig + expansion beat expansion only
    assert {c.decision for c in res.candidates.candidates} == {"kept"}


def test_index_that_is_not_a_sira_index(backend: SearchBackend, index_name: str) -> None:
    backend.create_index(index_name, {"mappings": {"properties": {"body": {"type": "text"}}}})
    code, _, err = _cli(backend, "search", "x", "--index", index_name)
    assert code == 1 and "no `contents` field" in err
    code, _, err = _cli(backend, "search", "x", "--index", f"{index_name}-missing")
    assert code == 1 and "does not exist" in err

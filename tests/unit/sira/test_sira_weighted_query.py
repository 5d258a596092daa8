"""The compiled query: plain BM25 without kept phrases, BM25(q) + w*BM25(q_exp) with them."""

from __future__ import annotations

import json

import pytest

from sira_seek.sira.results import dev_tools_request
from sira_seek.sira.weighted_query import CategoryClause, DerivedParts, TextClause, WeightedQuery


def _orig() -> TextClause:
    return TextClause(name="sira_original", text="who directed", fields=["contents"])


def test_without_expansion_it_is_exactly_plain_bm25() -> None:
    wq = WeightedQuery(original=_orig(), weight=0.7, size=5)
    assert wq.is_plain_bm25
    assert wq.to_dict() == {
        "size": 5,
        "_source": False,
        "query": {"match": {"contents": {"query": "who directed", "_name": "sira_original"}}},
    }


def test_expansion_group_carries_the_weight_and_every_clause_is_named() -> None:
    exp = [
        TextClause(name="sira_expansion:Kerala", text="Kerala", fields=["contents"]),
        TextClause(
            name="sira_expansion:Malayalam cinema",
            text="Malayalam cinema",
            fields=["contents", "contents.shingles"],
        ),
    ]
    cats = [
        CategoryClause(
            name="sira_category:Films", field="sira_enrichment.categories", value="Films"
        )
    ]
    q = WeightedQuery(
        original=_orig(), expansion=exp, weight=0.3, categories=cats, category_weight=2.0
    ).query_dict()
    orig, group, cat_group = q["bool"]["should"]
    assert orig["match"]["contents"]["_name"] == "sira_original"
    assert group["bool"]["boost"] == 0.3 and group["bool"]["_name"] == "sira_expansion"
    first, second = group["bool"]["should"]
    assert first == {"match": {"contents": {"query": "Kerala", "_name": "sira_expansion:Kerala"}}}
    assert second["multi_match"]["type"] == "most_fields"
    assert second["multi_match"]["fields"] == ["contents", "contents.shingles"]
    assert cat_group["bool"]["boost"] == 2.0
    assert cat_group["bool"]["should"][0] == {
        "term": {"sira_enrichment.categories": {"value": "Films", "_name": "sira_category:Films"}}
    }


def test_zero_weight_drops_the_expansion_group() -> None:
    exp = [TextClause(name="e", text="x", fields=["contents"])]
    q = WeightedQuery(original=_orig(), expansion=exp, weight=0.0).query_dict()
    assert q == _orig().to_dict()


def test_dev_tools_request_round_trips() -> None:
    body = WeightedQuery(original=_orig(), weight=1.0).to_dict()
    text = dev_tools_request("my-index", body)
    first, rest = text.split("\n", 1)
    assert first == "GET my-index/_search"
    assert json.loads(rest) == body
    # The layout people read in Dev Tools: the json module's indent=2, non-ASCII as is.
    unicode = WeightedQuery(
        original=TextClause(name="o", text="Motörhead 𝔘 café", fields=["contents"]), weight=0.5
    ).to_dict()
    assert dev_tools_request("my-index", unicode).split("\n", 1)[1] == json.dumps(
        unicode, indent=2, ensure_ascii=False
    )


def _named_only() -> WeightedQuery:
    exp = [
        TextClause(name="sira_expansion:Kerala", text="Kerala", fields=["contents"]),
        TextClause(
            name="sira_expansion:Malayalam cinema",
            text="Malayalam cinema",
            fields=["contents"],
            ngram_fields=["contents.shingles"],
            combined=True,
        ),
    ]
    cats = [CategoryClause(name="sira_category:Films", field="cats", value="Films")]
    return WeightedQuery(
        original=_orig(),
        expansion=exp,
        weight=0.5,
        categories=cats,
        category_weight=2.0,
        group_names=False,
    )


def test_without_group_names_only_phrase_and_category_clauses_are_named() -> None:
    text = json.dumps(_named_only().query_dict())
    assert "sira_original" not in text and '"sira_expansion"' not in text
    assert "sira_categories" not in text
    for name in ("sira_expansion:Kerala", "sira_expansion:Malayalam cinema", "sira_category:Films"):
        assert f'"{name}"' in text
    plain = WeightedQuery(original=_orig(), weight=0.5, group_names=False).query_dict()
    assert plain == {"match": {"contents": {"query": "who directed"}}}


def test_derived_parts_add_up_to_the_hit_score_as_named_groups_would() -> None:
    """score = original + w * sum(phrases) + cw * sum(categories): the groups' parts from the
    clauses' own scores and their boosts, the original's from what the score leaves."""
    derived = DerivedParts.of(_named_only().query_dict())
    assert derived is not None
    named = {"sira_expansion:Kerala": 4.0, "sira_expansion:Malayalam cinema": 6.0}
    named |= {"sira_category:Films": 1.5}
    full = derived.complete(named, 20.0)
    assert isinstance(full, dict)
    assert full == {
        "sira_original": pytest.approx(20.0 - 5.0 - 3.0),
        "sira_expansion": pytest.approx(0.5 * 10.0),
        "sira_categories": pytest.approx(2.0 * 1.5),
        **named,
    }
    assert list(full)[:3] == ["sira_original", "sira_expansion", "sira_categories"]
    # Matched only through phrases: what the float sum leaves is not an original match.
    only = derived.complete({"sira_expansion:Kerala": 4.0}, 2.0000001)
    assert only == {"sira_expansion": 2.0, "sira_expansion:Kerala": 4.0}
    # Only the query matched: the engine names nothing.
    assert derived.complete(None, 7.5) == {"sira_original": 7.5}
    # Names without scores (an engine that cannot score them) are left as they are.
    assert derived.complete(["sira_expansion:Kerala"], 3.0) == ["sira_expansion:Kerala"]


def test_a_query_that_names_its_groups_needs_no_derived_parts() -> None:
    named = _named_only().model_copy(update={"group_names": True})
    assert DerivedParts.of(named.query_dict()) is None
    assert DerivedParts.of(WeightedQuery(original=_orig(), weight=0.5).query_dict()) is None

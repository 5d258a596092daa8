"""Enrichment layouts: read from mappings/, detected from a mapping, compiled into queries."""

from __future__ import annotations

from typing import Any

import pytest

from sira_seek.backend import Capabilities
from sira_seek.index_layout import (
    corpus_index_body,
    enrichment_field_properties,
    enrichment_layouts,
)
from sira_seek.sira.index_profile import IndexProfile, profile_from_mapping
from sira_seek.sira.weighted_query import TextClause


def _mapping(layout: str) -> dict[str, Any]:
    body = corpus_index_body(Capabilities(english_analyzer=True), enrichment_layout=layout)
    return {"idx": {"mappings": body["mappings"]}}


def test_default_layout_copies_phrases_into_contents() -> None:
    layouts = enrichment_layouts()
    assert layouts["default"] in layouts["layouts"]
    phrases = enrichment_field_properties()["sira_enrichment"]["properties"]["phrases"]
    assert phrases["copy_to"] == ["contents"]
    # the gap keeps contents' shingles from joining two phrases or a phrase and the text
    assert phrases["position_increment_gap"] == 100
    assert (
        "copy_to"
        not in enrichment_field_properties("separate_field")["sira_enrichment"]["properties"][
            "phrases"
        ]
    )


def test_unknown_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown enrichment layout"):
        enrichment_field_properties("everywhere")


@pytest.mark.parametrize(
    ("layout", "scoring", "unigrams"),
    [
        ("in_contents", "in_contents", ["contents"]),
        ("in_contents_categories", "in_contents", ["contents"]),
        ("separate_field", "separate_field", ["contents", "sira_enrichment.phrases"]),
        ("combined_fields", "combined_fields", ["contents", "sira_enrichment.phrases"]),
    ],
)
def test_profile_reads_the_layout_from_the_mapping(
    layout: str, scoring: str, unigrams: list[str]
) -> None:
    profile = profile_from_mapping("idx", _mapping(layout))
    assert profile.enrichment_scoring == scoring
    assert profile.unigram_fields() == unigrams


def test_copy_to_wins_over_meta() -> None:
    """An index whose phrases copy into contents is searched that way whatever _meta says."""
    mapping = _mapping("in_contents")
    mapping["idx"]["mappings"]["_meta"]["sira_seek"]["enrichment_scoring"] = "combined_fields"
    assert profile_from_mapping("idx", mapping).enrichment_scoring == "in_contents"


def test_combined_clause_scores_each_analyzer_group_as_one_field() -> None:
    profile = IndexProfile(
        index="i",
        phrase_field="sira_enrichment.phrases",
        phrase_shingle_field="sira_enrichment.phrases.shingles",
        enrichment_scoring="combined_fields",
    )
    clause = profile.text_clause("x", "red planet", ngrams=True).model_copy(update={"boost": 2.0})
    assert clause.to_dict() == {
        "bool": {
            "should": [
                {
                    "combined_fields": {
                        "query": "red planet",
                        "fields": ["contents", "sira_enrichment.phrases"],
                    }
                },
                {
                    "combined_fields": {
                        "query": "red planet",
                        "fields": ["contents.shingles", "sira_enrichment.phrases.shingles"],
                    }
                },
            ],
            "_name": "x",
            "boost": 2.0,
        }
    }
    plain = profile.text_clause("o", "red planet").to_dict()
    assert plain == {
        "combined_fields": {
            "query": "red planet",
            "fields": ["contents", "sira_enrichment.phrases"],
            "_name": "o",
        }
    }


def test_separate_clause_sums_fields() -> None:
    clause = TextClause(name="n", text="t", fields=["a", "b"], ngram_fields=["a.s"])
    assert clause.to_dict() == {
        "multi_match": {
            "query": "t",
            "_name": "n",
            "fields": ["a", "b", "a.s"],
            "type": "most_fields",
        }
    }

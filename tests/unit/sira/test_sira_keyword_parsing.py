"""Tolerant parsing: any recoverable answer yields its phrases."""

from __future__ import annotations

import pytest

from sira_seek.sira.keyword_parsing import clean_phrases, parse_enrichment


@pytest.mark.parametrize(
    "answer",
    [
        '{"keywords": ["Malayalam cinema", "Kerala"]}',
        'Sure! Here you go:\n```json\n{"keywords": ["Malayalam cinema", "Kerala"]}\n```',
        'Reasoning first... {"keywords": ["Malayalam cinema", "Kerala"]} hope it helps',
        '["Malayalam cinema", "Kerala"]',
        {"keywords": ["Malayalam cinema", "Kerala"]},
        ["Malayalam cinema", "Kerala"],
    ],
)
def test_json_in_many_wrappings(answer: object) -> None:
    assert parse_enrichment(answer).phrases == ["Malayalam cinema", "Kerala"]


def test_truncated_answer_keeps_the_complete_strings() -> None:
    parsed = parse_enrichment('{"keywords": ["Malayalam cinema", "Kerala", "docum')
    assert parsed.phrases == ["Malayalam cinema", "Kerala"]
    assert parsed.recovered


def test_plain_lines_or_commas() -> None:
    assert parse_enrichment("- Kerala\n- Malayalam cinema").phrases == [
        "Kerala",
        "Malayalam cinema",
    ]
    assert parse_enrichment("Kerala, Malayalam cinema").phrases == ["Kerala", "Malayalam cinema"]


def test_categories_limit_and_duplicates() -> None:
    parsed = parse_enrichment(
        {"keywords": ["a", "A ", "b", "c"], "categories": ["Indian film directors"]}, limit=2
    )
    assert parsed.phrases == ["a", "b"]
    assert parsed.categories == ["Indian film directors"]


def test_garbage_gives_nothing_not_an_error() -> None:
    assert parse_enrichment("").phrases == []
    assert parse_enrichment("{not json").phrases == []
    assert parse_enrichment({"other": 1}).phrases == []
    assert parse_enrichment(42).phrases == []


def test_clean_phrases_drops_non_strings_and_collapses_space() -> None:
    assert clean_phrases(["  New   York ", None, True, {"x": 1}, "", 1999]) == ["New York", "1999"]

"""Property-based tests (hypothesis) for the DF filter, the query compiler and the LLM-output
parsers; plus a fuzz run of the parsers over thousands of random and truncated outputs."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sira_seek.sira.df_check import WindowStat, decide
from sira_seek.sira.keyword_parsing import parse_enrichment
from sira_seek.sira.weighted_query import EXPANSION_NAME, ORIGINAL_NAME, TextClause, WeightedQuery

words = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF), min_size=1, max_size=20
)
windows = st.lists(
    st.builds(
        WindowStat,
        window=words,
        tier=st.sampled_from(["unigram", "ngram"]),
        doc_freq=st.integers(min_value=0, max_value=10_000),
    ),
    max_size=8,
)


@given(phrase=words, wins=windows, tau=st.floats(0.0001, 1.0), n=st.integers(1, 10_000))
def test_df_rule(phrase: str, wins: list[WindowStat], tau: float, n: int) -> None:
    """Kept iff some window has 0 < DF <= tau*|C|; the reported DF is that of the rarest seen."""
    limit = tau * n
    d = decide(phrase, wins, limit, n)
    seen = [w.doc_freq for w in wins if w.doc_freq > 0]
    expected_kept = any(0 < w.doc_freq <= limit for w in wins)
    assert d.kept == expected_kept
    if not wins:
        assert d.decision == "no_terms"
    elif not seen:
        assert d.decision == "absent" and d.doc_freq == 0
    else:
        assert d.doc_freq == min(seen)
        assert d.decision == ("kept" if expected_kept else "too_common")


def _names(node: object) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        if "_name" in node:
            out.append(node["_name"])
        for v in node.values():
            out += _names(v)
    elif isinstance(node, list):
        for v in node:
            out += _names(v)
    return out


@given(
    query=words,
    phrases=st.lists(words, max_size=12),
    weight=st.floats(0.0, 5.0),
)
def test_query_compiler(query: str, phrases: list[str], weight: float) -> None:
    """One bool/should sum: the original clause always, the expansion group only when it counts."""
    wq = WeightedQuery(
        original=TextClause(name=ORIGINAL_NAME, text=query, fields=["contents"]),
        expansion=[
            TextClause(name=f"{EXPANSION_NAME}:{i}", text=p, fields=["contents"])
            for i, p in enumerate(phrases)
        ],
        weight=weight,
    )
    body = wq.to_dict()
    json.dumps(body)  # always serialisable for Dev Tools
    names = _names(body["query"])
    assert names.count(ORIGINAL_NAME) == 1
    if phrases and weight > 0:
        should = body["query"]["bool"]["should"]
        assert should[1]["bool"]["boost"] == weight and EXPANSION_NAME in names
        assert len([n for n in names if n.startswith(f"{EXPANSION_NAME}:")]) == len(phrases)
    else:
        assert EXPANSION_NAME not in names


@given(st.one_of(st.text(max_size=400), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))
def test_parser_never_raises(text: str) -> None:
    parsed = parse_enrichment(text, limit=10)
    assert len(parsed.phrases) <= 10
    assert all(p == " ".join(p.split()) and p for p in parsed.phrases)
    assert len({p.casefold() for p in parsed.phrases}) == len(parsed.phrases)


@settings(max_examples=50)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=15))
def test_valid_json_round_trips(phrases: list[str]) -> None:
    parsed = parse_enrichment(json.dumps({"keywords": phrases}), limit=10)
    assert not parsed.recovered
    cleaned = [" ".join(p.split()).strip(" \t,;.-*•") for p in phrases]
    assert all(p in cleaned for p in parsed.phrases)


def test_fuzz_truncated_and_random_outputs() -> None:
    """5,000 outputs: truncated valid answers, shuffled bytes, prose around JSON; none raise."""
    rng = random.Random(66)
    vocab = [
        "Sumerian",
        "underworld",
        "Lilith",
        "film director",
        "Kerala",
        "東京",
        "🚀",
        '"',
        "{",
        "]",
    ]
    for i in range(5000):
        phrases = [
            " ".join(rng.choices(vocab, k=rng.randint(1, 3))) for _ in range(rng.randint(0, 12))
        ]
        full = json.dumps({"keywords": phrases}, ensure_ascii=rng.random() < 0.5)
        kind = i % 4
        if kind == 0:
            text = full[: rng.randint(0, len(full))]
        elif kind == 1:
            chars = list(full)
            rng.shuffle(chars)
            text = "".join(chars)
        elif kind == 2:
            text = f"Reasoning first.\n```json\n{full}\n```\nDone"
        else:
            text = "".join(chr(rng.randint(0, 0x10FF)) for _ in range(rng.randint(0, 80)))
        parsed = parse_enrichment(text, limit=10)
        assert len(parsed.phrases) <= 10
        if kind == 2:
            assert not parsed.recovered

"""Property-based tests (hypothesis) for the DF filter, the query compiler and the LLM-output
parsers; plus a fuzz run of the parsers over thousands of random and truncated outputs."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from seeds import seeded_rng

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


# --------------------------------------------------------------------------------------------
# The keyword parser: what it returns must be the model's phrases, no more, no fewer
# --------------------------------------------------------------------------------------------

STRIP = " \t,;.-*•"


def _reference_clean(items: list[str], limit: int) -> list[str]:
    """An independent oracle for the cleaning rule: collapse whitespace, trim list punctuation,
    drop empties and case-insensitive repeats, keep order, stop at ``limit``."""
    out: list[str] = []
    for item in items:
        phrase = " ".join(item.split()).strip(STRIP)
        if phrase and phrase.casefold() not in {p.casefold() for p in out}:
            out.append(phrase)
    return out[:limit]


def _is_number(phrase: str) -> bool:
    try:
        float(phrase)
    except ValueError:
        return False
    return True


def _words_come_from(text: str, phrase: str) -> bool:
    """Every word of ``phrase`` occurs in ``text``: the parser invents nothing. A JSON number
    is re-rendered by the decoder (``1e5`` -> ``100000.0``), so a numeric phrase is exempt."""
    return _is_number(phrase) or all(word in text for word in phrase.split())


def _assert_well_formed(phrases: list[str], limit: int) -> None:
    assert len(phrases) <= limit
    for p in phrases:
        assert p and p == " ".join(p.split()) and p == p.strip(STRIP), repr(p)
    assert len({p.casefold() for p in phrases}) == len(phrases), phrases


# A short, already-clean phrase: letters (any script), digits and inner spaces; no quote or
# backslash, so its JSON text is the phrase itself.
clean_phrase = (
    st.text(
        alphabet=st.characters(
            whitelist_categories=("L", "Nd"), max_codepoint=0x2FFF, blacklist_characters="ǅ"
        )
        | st.just(" "),
        min_size=1,
        max_size=24,
    )
    .map(lambda t: " ".join(t.split()))
    .filter(bool)
)
distinct_phrases = st.lists(clean_phrase, min_size=1, max_size=15, unique_by=str.casefold)


@given(phrases=distinct_phrases, limit=st.integers(1, 20), wrapper=st.sampled_from(range(4)))
def test_well_formed_answer_round_trips_to_exactly_its_phrases(
    phrases: list[str], limit: int, wrapper: int
) -> None:
    """N distinct short phrases as strict JSON (object, bare list, fenced in prose, escaped
    non-ASCII) come back exactly, in order, cut at ``limit``; nothing is lost or added."""
    obj: object = {"keywords": phrases} if wrapper != 1 else phrases
    text = json.dumps(obj, ensure_ascii=wrapper == 3)
    if wrapper == 2:
        text = f"Here are the keywords.\n```json\n{text}\n```\nHope this helps, good luck"
    parsed = parse_enrichment(text, limit=limit)
    assert parsed.phrases == phrases[:limit]
    assert not parsed.recovered


@given(phrases=distinct_phrases, cut=st.floats(0.0, 1.0), limit=st.integers(1, 20))
def test_truncated_answer_gives_a_prefix_of_its_phrases(
    phrases: list[str], cut: float, limit: int
) -> None:
    """A model stopped mid-answer: the phrases it finished are kept (never a half phrase,
    never one it did not write), in order; a complete list is recovered whole."""
    full = json.dumps({"keywords": phrases}, ensure_ascii=False)
    text = full[: int(cut * len(full))]
    got = parse_enrichment(text, limit=limit).phrases
    assert got == phrases[: len(got)], (text, got)
    assert len(got) <= limit
    # where each phrase's closing quote ends in the full answer: those before the cut are done
    ends, pos = [], len('{"keywords": [')
    for phrase in phrases:
        pos += len(json.dumps(phrase, ensure_ascii=False))
        ends.append(pos)
        pos += len(", ")
    finished = sum(end <= len(text) for end in ends)
    if '"keywords"' in text:
        assert len(got) == min(finished, limit), (text, got)


@given(
    text=st.one_of(
        st.text(max_size=400), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))
    ),
    limit=st.integers(1, 12),
)
def test_any_text_gives_well_formed_phrases_from_the_text(text: str, limit: int) -> None:
    """Bounds hold on any input; without JSON escapes in play, every word of every phrase
    occurs in the input: the parser never invents vocabulary."""
    parsed = parse_enrichment(text, limit=limit)
    _assert_well_formed(parsed.phrases, limit)
    if "\\" not in text:
        assert all(_words_come_from(text, p) for p in parsed.phrases), parsed.phrases


@given(text=st.text(alphabet=st.characters(blacklist_characters='"\\{}[]'), max_size=200))
def test_prose_answer_is_split_into_its_lines_and_commas(text: str) -> None:
    """No JSON at all: one phrase per line or comma, cleaned, so a list written as prose still
    feeds SIRA instead of silently degrading it to plain BM25."""
    parsed = parse_enrichment(text, limit=10)
    assert parsed.phrases == _reference_clean(re.split(r"[\n,;]", text.strip()), 10)


@settings(max_examples=50)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=15))
def test_valid_json_round_trips(phrases: list[str]) -> None:
    """Any strings at all (quotes, control characters, padding): strict JSON gives the
    cleaned list, exactly."""
    parsed = parse_enrichment(json.dumps({"keywords": phrases}), limit=10)
    assert not parsed.recovered
    assert parsed.phrases == _reference_clean(phrases, 10)


def test_fuzz_truncated_and_random_outputs() -> None:
    """5,000 outputs: truncated valid answers, shuffled bytes, prose around JSON, random
    characters. Each kind has its own must-hold property; the seed is printed."""
    rng = seeded_rng("parser fuzz")
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
        expected = _reference_clean(phrases, 10)
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
        _assert_well_formed(parsed.phrases, 10)
        context = (i, text, parsed.phrases)
        if kind == 0:
            # a truncated answer yields a prefix of what the complete one would
            assert parsed.phrases == expected[: len(parsed.phrases)], context
            if text == full:
                assert parsed.phrases == expected, context
        elif kind == 2:
            assert not parsed.recovered and parsed.phrases == expected, context
        elif "\\" not in text:
            assert all(_words_come_from(text, p) for p in parsed.phrases), context

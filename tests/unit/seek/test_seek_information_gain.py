"""DIG of a SEEK run (`sira_seek.seek.information_gain`): the continuation's tokens, the two
prompts of each question, and the run-level bookkeeping (what is left out and why). The
confidence formula itself is tested in ``tests/unit/metrics/test_information_gain.py``.

`WordScorer` is a scripted double ABOVE the `TextScorer` protocol (no server, no wire format):
it splits text into words with their leading whitespace and gives each a log-probability from
a rule, so every expected number below can be worked out by hand.
"""

from __future__ import annotations

import asyncio
import math
import re

import pytest

from sira_seek.llm.errors import ContextTooLongError, ServerUnreachableError
from sira_seek.llm.scoring import (
    ScoringUnsupportedError,
    TokenLogprob,
    continuation_logprobs,
    find_scorer,
)
from sira_seek.metrics.information_gain import answer_confidence
from sira_seek.metrics.seek_diagnostics import seek_diagnostics
from sira_seek.seek.information_gain import information_gains
from sira_seek.seek.results import SeekResult

FACT = "Quilmont is the capital of Zorbia."


class WordScorer:
    """Scripted scorer: a word is likely (-0.1) when the fact is in the text and the word is
    "Quilmont", unlikely (-3.0) otherwise; texts holding ``TOO_LONG`` raise as a model would."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def token_logprobs(self, text: str) -> list[TokenLogprob]:
        self.texts.append(text)
        if "TOO_LONG" in text:
            raise ContextTooLongError("too many tokens")
        if "BOOM" in text:
            raise RuntimeError("a bug in a scorer")
        informed = FACT in text
        words = re.findall(r"\s*\S+", text)
        out = [TokenLogprob("<bos>", None)]
        for word in words:
            likely = informed and word.strip().startswith("Quilmont")
            out.append(TokenLogprob(word, -0.1 if likely else -3.0))
        return out


class NoScores:
    async def token_logprobs(self, text: str) -> list[TokenLogprob]:
        raise ScoringUnsupportedError("chat-only API")


def _result(qid: str, *, golds: list[str], context: str | None, error: str | None = None):
    return SeekResult(
        id=qid,
        question="What is the capital of Zorbia?",
        golden_answers=golds,
        method="seek",
        answer="x",
        answer_context=context,
        answer_context_kind=None if context is None else "notes",
        error=error,
    )


def test_continuation_tokens_are_those_after_the_common_prefix() -> None:
    scorer = WordScorer()
    got = asyncio.run(continuation_logprobs(scorer, f"{FACT} Answer:", " Quilmont city"))
    assert got == [-0.1, -3.0]
    # The boundary merges "<answer>" and the answer into one word: that token is the answer's.
    merged = asyncio.run(continuation_logprobs(scorer, f"{FACT} <answer>", "Quilmont"))
    assert merged == [-3.0]  # "<answer>Quilmont" does not start with Quilmont
    with pytest.raises(ValueError):
        asyncio.run(continuation_logprobs(scorer, "p", ""))


def test_find_scorer_looks_through_wrappers() -> None:
    scorer = WordScorer()

    class Wrapper:
        def __init__(self, inner: object) -> None:
            self.inner = inner

    assert find_scorer(Wrapper(Wrapper(scorer))) is scorer
    assert find_scorer(Wrapper(object())) is None


def test_dig_is_best_gold_with_knowledge_minus_without() -> None:
    results = [
        _result("helped", golds=["Quilmont", "nowhere"], context=FACT),
        _result("no-help", golds=["Quilmont"], context="Zorbia has rivers."),
        _result("closed-book", golds=["Quilmont"], context=None),
        _result("no-gold", golds=[" "], context=FACT),
        _result("failed", golds=["Quilmont"], context=FACT, error="boom"),
    ]
    gains = asyncio.run(information_gains(WordScorer(), results))
    assert gains.unavailable is None
    assert set(gains.by_id) == {"helped", "no-help", "closed-book", "no-gold"}
    helped = gains.by_id["helped"]
    assert helped is not None
    # The prompt ends with "<answer>", so the first answer word merges with the tag (-3.0 in
    # this script); best gold "Quilmont" vs "nowhere" is the same token probability here.
    assert helped.with_knowledge == pytest.approx(math.exp(-3.0))
    assert helped.without_knowledge == pytest.approx(math.exp(-3.0))
    assert gains.by_id["closed-book"] is None and gains.by_id["no-gold"] is None


def test_dig_takes_the_best_gold_on_each_side() -> None:
    class Likes:
        """Gold "A B" is likely after knowledge, "C D" without; the best of each side counts."""

        async def token_logprobs(self, text: str) -> list[TokenLogprob]:
            informed = FACT in text
            words = re.findall(r"\s*\S+", text)
            out = [TokenLogprob("<bos>", None)]
            for word in words:
                w = word.strip()
                good = (informed and w == "B") or (not informed and w == "D")
                out.append(TokenLogprob(word, -0.5 if good else -2.0))
            return out

    results = [_result("q", golds=["A B", "C D"], context=FACT)]
    gains = asyncio.run(information_gains(Likes(), results))
    gain = gains.by_id["q"]
    assert gain is not None
    # Each side: tokens "<answer>A"/"<answer>C" (-2.0) then " B"/" D": with knowledge "A B"
    # scores (-2.0, -0.5) against "C D" (-2.0, -2.0); without, the reverse. Same best value.
    best = answer_confidence([-2.0, -0.5])
    assert gain.with_knowledge == pytest.approx(best)
    assert gain.without_knowledge == pytest.approx(best)
    assert gain.dig == pytest.approx(0.0)


def test_knowledge_that_raises_the_gold_answer_gives_positive_dig() -> None:
    class Spaced(WordScorer):
        """The answer prompt ends with "<answer>"; score as if the tag were its own token."""

        async def token_logprobs(self, text: str) -> list[TokenLogprob]:
            return await super().token_logprobs(text.replace("<answer>", "<answer> "))

    results = [
        _result("helped", golds=["Quilmont"], context=FACT),
        _result("no-help", golds=["Quilmont"], context="Zorbia has rivers."),
    ]
    gains = asyncio.run(information_gains(Spaced(), results))
    helped, no_help = gains.by_id["helped"], gains.by_id["no-help"]
    assert helped is not None and no_help is not None
    assert helped.with_knowledge == pytest.approx(math.exp(-0.1))
    assert helped.without_knowledge == pytest.approx(math.exp(-3.0))
    assert helped.dig == pytest.approx(math.exp(-0.1) - math.exp(-3.0))
    assert no_help.dig == pytest.approx(0.0)
    report = seek_diagnostics([r.trace() for r in results], gains=gains)
    assert report.dig == pytest.approx(round(helped.dig / 2, 4))
    assert report.dig_questions == 2 and report.dig_unavailable is None
    rows = {r.id: r for r in report.per_question}
    assert rows["helped"].answer_confidence_with_knowledge == pytest.approx(math.exp(-0.1))


def test_a_backend_without_scores_makes_dig_unavailable_with_the_reason() -> None:
    results = [_result("q", golds=["Quilmont"], context=FACT)]
    none = asyncio.run(information_gains(None, results, backend="precomputed"))
    assert none.by_id == {"q": None} and "precomputed" in (none.unavailable or "")
    refused = asyncio.run(information_gains(NoScores(), results))
    assert refused.unavailable == "chat-only API"
    report = seek_diagnostics([r.trace() for r in results], gains=refused)
    assert report.dig is None and report.dig_unavailable == "chat-only API"


def test_one_question_that_cannot_be_scored_does_not_stop_the_others() -> None:
    results = [
        _result("long", golds=["Quilmont"], context=f"{FACT} TOO_LONG"),
        _result("bug", golds=["Quilmont"], context=f"{FACT} BOOM"),
        _result("fine", golds=["Quilmont"], context=FACT),
    ]
    gains = asyncio.run(information_gains(WordScorer(), results))
    assert gains.unavailable is None
    assert gains.by_id["long"] is None and gains.by_id["bug"] is None
    assert gains.by_id["fine"] is not None


def test_when_every_question_fails_to_score_the_reason_is_reported() -> None:
    class Gone:
        async def token_logprobs(self, text: str) -> list[TokenLogprob]:
            raise ServerUnreachableError("cannot reach the LLM server")

    results = [
        _result("a", golds=["Quilmont"], context=FACT),
        _result("b", golds=["Quilmont"], context=FACT),
        _result("closed", golds=["Quilmont"], context=None),  # not tried: no knowledge
    ]
    gains = asyncio.run(information_gains(Gone(), results))
    assert set(gains.by_id.values()) == {None}
    assert gains.unavailable is not None
    assert "all 2 questions" in gains.unavailable and "cannot reach" in gains.unavailable
    report = seek_diagnostics([r.trace() for r in results], gains=gains)
    assert report.dig is None and report.dig_unavailable == gains.unavailable

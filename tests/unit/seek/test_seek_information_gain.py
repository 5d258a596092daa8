"""DIG of a SEEK run (`sira_seek.seek.information_gain`): the continuation's tokens, the two
prompts of each question (differing only by the knowledge), the one gold answer scored on both
sides, and the run-level bookkeeping (what is left out and why). The confidence formula itself
(Eq. 14-15) is tested in ``tests/unit/metrics/test_information_gain.py``; here the expected
confidences are written out with the default parameters (W = 3, k = 3, alpha = 0.6, omega =
0.8 each: a token among the first three is raised to 0.48).

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
from sira_seek.metrics.information_gain import DigParameters
from sira_seek.metrics.seek_diagnostics import seek_diagnostics
from sira_seek.seek.baselines.vanilla_prompts import VanillaPrompts
from sira_seek.seek.information_gain import information_gains, scored_gold
from sira_seek.seek.prompts_fewshot import FewShotSeekPrompts
from sira_seek.seek.results import SeekResult
from sira_seek.seek.settings import SeekSettings

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


def test_a_scorer_that_tokenises_scores_only_prompt_plus_continuation() -> None:
    class Tokenising(WordScorer):
        """Also a `TextTokenizer`: the same tokens as its scores, without scoring."""

        def __init__(self) -> None:
            super().__init__()
            self.tokenised: list[str] = []

        async def token_pieces(self, text: str) -> list[str]:
            self.tokenised.append(text)
            return ["<bos>", *re.findall(r"\s*\S+", text)]

    scorer = Tokenising()
    got = asyncio.run(continuation_logprobs(scorer, f"{FACT} Answer:", " Quilmont city"))
    assert got == [-0.1, -3.0]  # as with two scorings (the test above)
    assert scorer.tokenised == [f"{FACT} Answer:"]
    assert scorer.texts == [f"{FACT} Answer: Quilmont city"]
    merged = asyncio.run(continuation_logprobs(scorer, f"{FACT} <answer>", "Quilmont"))
    assert merged == [-3.0]


def test_find_scorer_looks_through_wrappers() -> None:
    scorer = WordScorer()

    class Wrapper:
        def __init__(self, inner: object) -> None:
            self.inner = inner

    assert find_scorer(Wrapper(Wrapper(scorer))) is scorer
    assert find_scorer(Wrapper(object())) is None


def test_dig_is_with_knowledge_minus_without_for_answered_questions() -> None:
    results = [
        _result("helped", golds=["Quilmont", "nowhere"], context=FACT),
        _result("no-help", golds=["Quilmont"], context="Zorbia has rivers."),
        _result("closed-book", golds=["Quilmont"], context=None),
        _result("no-gold", golds=[" "], context=FACT),
        _result("failed", golds=["Quilmont"], context=FACT, error="boom"),
    ]
    gains = asyncio.run(information_gains(WordScorer(), results))
    assert gains.unavailable is None and gains.parameters == DigParameters()
    assert set(gains.by_id) == {"helped", "no-help", "closed-book", "no-gold"}
    helped = gains.by_id["helped"]
    assert helped is not None and helped.gold == "Quilmont"
    # The prompt ends with "<answer>", so the answer merges with the tag into one token (-3.0
    # in this script) on both sides: p_s = e^-3 / 3 (Eq. 14, W = 3), raised to 0.48.
    assert helped.with_knowledge == pytest.approx((math.exp(-3.0) / 3) ** 0.48)
    assert helped.without_knowledge == pytest.approx((math.exp(-3.0) / 3) ** 0.48)
    assert gains.by_id["closed-book"] is None and gains.by_id["no-gold"] is None


def test_the_two_prompts_differ_only_by_the_knowledge() -> None:
    prompts = FewShotSeekPrompts(SeekSettings())
    question = "What is the capital of Zorbia?"
    kinds = (("sketch", "Notes"), ("plan", "Notes"), ("notes", "Notes"), ("documents", "Documents"))
    for kind, label in kinds:
        knowledge = f"- Capital: {FACT}\n- Rivers: two."
        informed, closed = prompts.information_gain_prompts(question, knowledge, kind)
        block = f"{label}:\n{knowledge}\n"
        assert informed.count(block) == 1
        assert closed == informed.replace(block, "")
        # The informed side is the answer prompt the method's knowledge gets.
        assert informed == prompts.answer(question, knowledge, kind).prompt
        # Same demonstrations on both sides (those of the prompt with knowledge), so the
        # closed-book generation prompt, whose demonstrations have no notes, is not used.
        shots = informed[: informed.index(f"Question: {question}")]
        assert closed.startswith(shots) and f"{label}:\n- Director of the film Jaws" in shots
        assert closed == f"{shots}Question: {question}\nAnswer: <answer>"
        assert closed != VanillaPrompts(SeekSettings(), "fewshot").answer(question, None).prompt


def test_one_gold_answer_is_scored_on_both_sides() -> None:
    class RecordingScorerDouble:
        """Scripted `TextScorer` double: records each text; gold "B" is likely after the
        knowledge, gold "D" without it (were each side to take its own best, both would)."""

        def __init__(self) -> None:
            self.texts: list[str] = []

        async def token_logprobs(self, text: str) -> list[TokenLogprob]:
            self.texts.append(text)
            informed = FACT in text
            words = re.findall(r"\s*\S+", text)
            out = [TokenLogprob("<bos>", None)]
            for word in words:
                w = word.strip()
                good = (informed and w == "B") or (not informed and w == "D")
                out.append(TokenLogprob(word, -0.5 if good else -2.0))
            return out

    assert scored_gold([" ", " A B ", "C D"]) == "A B" and scored_gold(["", " "]) is None
    scorer = RecordingScorerDouble()
    results = [_result("q", golds=[" ", "A B", "C D"], context=FACT)]
    gains = asyncio.run(information_gains(scorer, results))
    gain = gains.by_id["q"]
    assert gain is not None and gain.gold == "A B"
    # Two scorings a side (the prompt alone, then prompt + gold), the same gold on both.
    assert len(scorer.texts) == 4
    continued = [t for t in scorer.texts if t.endswith("<answer>A B")]
    assert len(continued) == 2 and sum(FACT in t for t in continued) == 1
    assert not any("C D" in t for t in scorer.texts)
    # Tokens "<answer>A" (-2.0) and " B": -0.5 with the knowledge, -2.0 without. W = 3 over
    # two tokens: both p_s are (p_1 + p_2) / 3, both among the first k = 3 (exponent 0.48).
    with_k = ((math.exp(-2.0) + math.exp(-0.5)) / 3) ** 0.48
    without = ((math.exp(-2.0) + math.exp(-2.0)) / 3) ** 0.48
    assert gain.with_knowledge == pytest.approx(with_k * with_k)
    assert gain.without_knowledge == pytest.approx(without * without)
    assert gain.dig == pytest.approx(with_k * with_k - without * without)
    assert gain.dig > 0


def test_knowledge_that_raises_the_gold_answer_gives_positive_dig() -> None:
    class Spaced(WordScorer):
        """The answer prompt ends with "<answer>"; score as if the tag were its own token."""

        async def token_logprobs(self, text: str) -> list[TokenLogprob]:
            return await super().token_logprobs(text.replace("<answer>", "<answer> "))

    results = [
        _result("helped", golds=["Quilmont"], context=FACT),
        _result("no-help", golds=["Quilmont"], context="Zorbia has rivers."),
    ]
    parameters = DigParameters(W=1, k=1, alpha=0.5, omega=(1.0,))
    gains = asyncio.run(information_gains(Spaced(), results, parameters=parameters))
    assert gains.parameters == parameters
    helped, no_help = gains.by_id["helped"], gains.by_id["no-help"]
    assert helped is not None and no_help is not None
    # One token " Quilmont", W = 1, exponent omega_1 * alpha = 0.5.
    assert helped.with_knowledge == pytest.approx(math.exp(-0.1) ** 0.5)
    assert helped.without_knowledge == pytest.approx(math.exp(-3.0) ** 0.5)
    assert helped.dig == pytest.approx(math.exp(-0.05) - math.exp(-1.5))
    assert no_help.dig == pytest.approx(0.0)
    report = seek_diagnostics([r.trace() for r in results], gains=gains)
    assert report.dig == pytest.approx(round(helped.dig / 2, 4))
    assert report.dig_questions == 2 and report.dig_unavailable is None
    assert report.dig_parameters == parameters
    rows = {r.id: r for r in report.per_question}
    assert rows["helped"].answer_confidence_with_knowledge == pytest.approx(math.exp(-0.05))


def test_a_backend_without_scores_makes_dig_unavailable_with_the_reason() -> None:
    results = [_result("q", golds=["Quilmont"], context=FACT)]
    none = asyncio.run(information_gains(None, results, backend="precomputed"))
    assert none.by_id == {"q": None} and "precomputed" in (none.unavailable or "")
    assert none.parameters == DigParameters()  # echoed even when nothing could be scored
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

"""Document Information Gain (DIG): how much a method's gathered knowledge raised the model's
confidence in the gold answer.

The SEEK paper reports DIG among its analyses without the formula reaching this project (its
text was not available here, and the authors' code has no analysis scripts). The measure of
that name in RAG is InfoGain-RAG's (Wang et al., 2025, arXiv 2509.12765):

    DIG(d | x) = p(y | x, d) - p(y | x)

the generator's confidence in the gold answer y with the knowledge d in its context minus
without it. It fits what SEEK's analysis claims to show (external knowledge used, conflict with
the model's own knowledge kept low): a positive DIG means the knowledge helped the model towards
the answer, a negative one that it pulled the model away. Here d is everything the method
answered from (SEEK: the completed sketch; Iter-RetGen: the last round's documents; ReWOO: the
plan's evidence), which `SeekResult.answer_context` records.

What is ours, not theirs:

* **Prompt.** Both probabilities use the few-shot answer prompt of this project (the same
  two worked examples, with and without their notes), whatever prompt style the run used: a
  chat template cannot be scored as plain text portably, and the same prompt for every run
  keeps runs comparable.
* **Confidence.** InfoGain-RAG smooths token probabilities over a sliding window and weights
  the first tokens more; the window and the weights it used were not available. Here p(y | .)
  is the geometric mean of window-smoothed token probabilities (`answer_confidence`, window
  `DIG_WINDOW`), with no head weighting: length-normalised, so a long gold answer is not
  penalised for its length.
* **Several gold answers.** Each side takes its best gold answer (as Cover-EM does).

This module is the arithmetic: token log-probabilities in, confidences and gains out. Scoring
a run (building SEEK's answer prompts, asking the LLM for the log-probabilities of given text
through `sira_seek.llm.scoring`) is `sira_seek.seek.information_gain`. vLLM, llama.cpp's
server and the in-process llama.cpp model give those log-probabilities; a chat-only hosted API
does not, and then DIG is reported as unavailable with the reason, never as 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

DIG_WINDOW = 3
"""Tokens in the smoothing window of `answer_confidence` (centred; cut at the answer's ends)."""


def answer_confidence(logprobs: Sequence[float], window: int = DIG_WINDOW) -> float:
    """p(y | context): the geometric mean of the answer's window-smoothed token probabilities.

    Token i's probability is replaced by the mean probability of the tokens within
    ``window // 2`` of it (InfoGain-RAG's smoothing: one unlikely sub-word token does not
    zero a correct answer), then the geometric mean is taken (length normalisation).
    """
    if not logprobs:
        raise ValueError("an answer with no tokens has no confidence")
    if window < 1:
        raise ValueError("window must be at least 1")
    probs = [math.exp(v) for v in logprobs]
    half = window // 2
    smoothed = []
    for i in range(len(probs)):
        near = probs[max(0, i - half) : i + half + 1]
        smoothed.append(sum(near) / len(near))
    return math.exp(sum(math.log(p) for p in smoothed) / len(smoothed))


class AnswerGain(BaseModel):
    """One question's DIG and the two confidences it is the difference of."""

    model_config = ConfigDict(frozen=True)

    id: str
    with_knowledge: float
    without_knowledge: float

    @property
    def dig(self) -> float:
        return self.with_knowledge - self.without_knowledge


class InformationGains(BaseModel):
    """DIG over a run: per question (None where it does not apply) and why it is missing."""

    model_config = ConfigDict(frozen=True)

    by_id: dict[str, AnswerGain | None]
    unavailable: str | None = None

"""Document Information Gain (DIG): how much a method's gathered knowledge raised the model's
confidence in the gold answer, as the SEEK paper defines it (arXiv 2601.09402, Appendix A.6,
Eq. 13-15, after InfoGain-RAG, Wang et al., 2025, arXiv 2509.12765).

For a question q, the knowledge O a method answered from and the gold answer y (Eq. 13):

    DIG(O | q) = p(y | q, O) - p(y | q)

Each p(y | .) is the model's calibrated confidence in y's tokens t_1 .. t_|y|, computed from
the token probabilities p(t_i) in two steps:

* **Sliding-window smoothing** (Eq. 14), `smoothed_probabilities`:

      p_s(t_i) = (1/W) * sum_{j = i - floor(W/2)}^{i + floor(W/2)} p(t_j)

  The paper does not say what the window holds at the answer's ends, where it reaches
  positions with no answer token. Two readings are available (`DigParameters.edges`):

  - ``zero`` (the default, and this project's reading before both were offered): positions
    outside 1..|y| contribute p(t_j) = 0 and the sum is still divided by W, the formula's 1/W
    taken literally. An edge token's smoothed probability is then at most
    (floor(W/2) + 1) / W, and a one-token answer's at most 1/W: with the defaults (W = 3,
    alpha = 0.6, omega_1 = 0.8) a one-token answer's confidence, and so its DIG, is capped
    near (1/3)^0.48 = 0.59.
  - ``clip``: the window is clipped to the answer and the sum divided by the number of
    positions it still holds (a mean over the answer tokens in reach), so a certain answer
    has confidence 1 whatever its length.

  W must be odd: only then does the window hold exactly W positions (an even W would sum
  W + 1 of them over W).

* **Token importance weighting** (Eq. 15), `dig_confidence`:

      p(y | x) = prod_{i=1}^{k} p_s(t_i)^(omega_i * alpha)
                 * prod_{j=k+1}^{|y|} p_s(t_j)^(1 - alpha)

  An answer shorter than k has only its |y| tokens in the first product (weights omega_1 ..
  omega_|y|) and an empty second product.

The parameters W, k, alpha and omega (`DigParameters`). The SEEK paper names them without
values (and says nothing of the edges, above); InfoGain-RAG's own text, which would state
them, could not be read here. Our defaults are W = 3, k = 3, alpha = 0.6 and omega = (0.8,
0.8, 0.8): the values a third-party replication of InfoGain-RAG (not the authors' code, and
unverified against the paper) gives as the paper's, with omega the same weight for each of
the first k tokens. They are therefore our choice; every DIG report echoes the four values
and the edge reading it was computed with.

Here O is everything the method answered from (SEEK: the completed sketch; Iter-RetGen: the
last round's documents; ReWOO: the plan's evidence), which `SeekResult.answer_context`
records. Both confidences are scored with one answer prompt that differs only by O
(`FewShotSeekPrompts.information_gain_prompts`) and for one gold answer chosen once per
question (`sira_seek.seek.information_gain.scored_gold`).

This module is the arithmetic: token log-probabilities in, confidences and gains out. Scoring
a run (building the prompts, asking the LLM for the log-probabilities of given text through
`sira_seek.llm.scoring`) is `sira_seek.seek.information_gain`. vLLM, llama.cpp's server and the
in-process llama.cpp model give those log-probabilities; a chat-only hosted API does not, and
then DIG is reported as unavailable with the reason, never as 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

Weight = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]

DigEdges = Literal["zero", "clip"]
"""Eq. 14 at the answer's ends (the paper is silent): ``zero`` counts positions outside the
answer as 0 and divides by W; ``clip`` divides by the positions inside the answer."""

DIG_EDGES: tuple[DigEdges, ...] = ("zero", "clip")
DEFAULT_DIG_EDGES: DigEdges = "zero"


class DigParameters(BaseModel):
    """W, k, alpha and omega of Eq. 14-15 (named as in the paper).

    Defaults (our choice, see the module docstring): W = 3, k = 3, alpha = 0.6, omega = 0.8
    for each of the first 3 tokens.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    W: StrictInt = Field(default=3, ge=1, description="Eq. 14 window size (odd)")
    k: StrictInt = Field(default=3, ge=0, description="Eq. 15: leading tokens weighted by omega")
    alpha: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="Eq. 15: emphasis on the first k tokens (the rest get exponent 1 - alpha)",
    )
    omega: tuple[Weight, ...] = Field(
        default=(0.8, 0.8, 0.8), description="Eq. 15: omega_1 .. omega_k, one weight a token"
    )
    edges: DigEdges = Field(
        default=DEFAULT_DIG_EDGES,
        description="Eq. 14 at the answer's ends, which the paper leaves undefined: 'zero' "
        "(positions outside the answer count 0, divided by W) or 'clip' (the window clipped to "
        "the answer)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> DigParameters:
        if self.W % 2 == 0:
            raise ValueError(f"W must be odd (Eq. 14 sums W positions only then), not {self.W}")
        if len(self.omega) != self.k:
            raise ValueError(f"omega must hold k = {self.k} weights, not {len(self.omega)}")
        return self

    def describe(self) -> str:
        """``W=3, k=3, alpha=0.6, omega=(0.8, 0.8, 0.8), edges=zero``: the values, for text
        reports."""
        omega = ", ".join(f"{w:g}" for w in self.omega)
        return f"W={self.W}, k={self.k}, alpha={self.alpha:g}, omega=({omega}), edges={self.edges}"


def smoothed_probabilities(
    logprobs: Sequence[float], window: int, edges: DigEdges = DEFAULT_DIG_EDGES
) -> list[float]:
    """Eq. 14: p_s(t_i) = (1/W) * sum of p(t_j) for |j - i| <= floor(W/2), j within the answer.

    ``edges="zero"``: positions outside the answer contribute 0 and the division is by W even
    at the ends. ``edges="clip"``: the division is by the positions inside the answer."""
    if not logprobs:
        raise ValueError("an answer with no tokens has no confidence")
    if window < 1 or window % 2 == 0:
        raise ValueError(f"the window must be odd and at least 1, not {window}")
    probs = [math.exp(v) for v in logprobs]
    half = window // 2
    smoothed = []
    for i in range(len(probs)):
        near = probs[max(0, i - half) : i + half + 1]
        smoothed.append(sum(near) / (window if edges == "zero" else len(near)))
    return smoothed


def dig_confidence(logprobs: Sequence[float], parameters: DigParameters | None = None) -> float:
    """p(y | context) by Eq. 14-15 from the answer's token log-probabilities.

    The first min(k, |y|) smoothed probabilities are raised to omega_i * alpha, the rest to
    1 - alpha, and all are multiplied.
    """
    p = parameters or DigParameters()
    smoothed = smoothed_probabilities(logprobs, p.W, p.edges)
    head = min(p.k, len(smoothed))
    return math.prod(
        [smoothed[i] ** (p.omega[i] * p.alpha) for i in range(head)]
        + [s ** (1.0 - p.alpha) for s in smoothed[head:]]
    )


def smoothed_geometric_confidence(logprobs: Sequence[float], window: int = 3) -> float:
    """NOT DIG's confidence: the geometric mean of window-smoothed token probabilities, each
    window averaged over the answer tokens it holds (cut at the ends, not divided by W).

    The confidence this project used for DIG before Eq. 14-15 were available: length-normalised
    and without head weighting. Kept for comparing with scores reported then.
    """
    smoothed = smoothed_probabilities(logprobs, window, "clip")
    return math.exp(sum(math.log(p) for p in smoothed) / len(smoothed))


class AnswerGain(BaseModel):
    """One question's DIG, the two confidences it is the difference of, and the gold answer
    both were scored for."""

    model_config = ConfigDict(frozen=True)

    id: str
    gold: str = Field(description="the one gold answer scored on both sides")
    with_knowledge: float
    without_knowledge: float

    @property
    def dig(self) -> float:
        return self.with_knowledge - self.without_knowledge


class InformationGains(BaseModel):
    """DIG over a run: per question (None where it does not apply), why it is missing, and the
    parameters it was (or would have been) computed with."""

    model_config = ConfigDict(frozen=True)

    by_id: dict[str, AnswerGain | None]
    unavailable: str | None = None
    parameters: DigParameters = Field(default_factory=DigParameters)

"""Token log-probabilities of a given text: what an LLM thinks of an answer it did not write.

Generation is not enough for some analyses. Document Information Gain (``eval qa
--diagnostics``) asks how likely the model finds the GOLD answer with and without the
knowledge a method gathered, which needs the log-probability of each token of a fixed
continuation. Backends that can say so implement `TextScorer`; wrappers (cache, ledger) do
not, so `find_scorer` looks through them. Scoring is an analysis, not a method's cost, so it
bypasses the response cache and the usage ledger on purpose.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

from sira_seek.llm.errors import LLMCallError

__all__ = [
    "ScoringUnsupportedError",
    "TextScorer",
    "TextTokenizer",
    "TokenLogprob",
    "continuation_logprobs",
    "find_scorer",
]


class ScoringUnsupportedError(LLMCallError):
    """The backend cannot return log-probabilities of a given text (e.g. a chat-only API)."""


class TokenLogprob(NamedTuple):
    """One token of a scored text; ``logprob`` is None for the first token (nothing before it
    predicts it)."""

    token: str
    logprob: float | None


@runtime_checkable
class TextScorer(Protocol):
    """A backend that can score a text it is given, token by token."""

    async def token_logprobs(self, text: str) -> list[TokenLogprob]:
        """Every token of ``text`` (as the model tokenises it, a BOS token included when the
        model adds one) with log p(token | the tokens before it)."""
        ...


@runtime_checkable
class TextTokenizer(Protocol):
    """A scorer that can also split a text into the tokens ``token_logprobs`` would return for
    it, without the forward pass (in process, tokenising is nearly free; scoring is not)."""

    async def token_pieces(self, text: str) -> list[str]:
        """The ``token`` of each entry ``token_logprobs(text)`` returns, in order."""
        ...


def find_scorer(client: object) -> TextScorer | None:
    """The first object in ``client``'s ``.inner`` chain that can score text, else None."""
    seen: set[int] = set()
    current: object | None = client
    while current is not None and id(current) not in seen:
        if isinstance(current, TextScorer):
            return current
        seen.add(id(current))
        current = getattr(current, "inner", None)
    return None


async def continuation_logprobs(scorer: TextScorer, prompt: str, continuation: str) -> list[float]:
    """log p of each token of ``continuation`` after ``prompt``.

    The model tokenises ``prompt + continuation`` as one text, so the continuation's tokens are
    found by comparing it with ``prompt``'s tokens alone: every token after their common prefix
    belongs to the continuation. When the boundary merges a prompt character into a token, that
    token is counted with the continuation (its probability is the continuation's to bear).
    Offsets in server replies are not used: vLLM shifts them by the BOS token's text. A scorer
    that can tokenise (`TextTokenizer`, llama.cpp in process) gives ``prompt``'s tokens without
    scoring it: one forward pass instead of two, the same tokens.
    """
    if not continuation:
        raise ValueError("an empty continuation has no tokens to score")
    if isinstance(scorer, TextTokenizer):
        head = await scorer.token_pieces(prompt)
    else:
        head = [t.token for t in await scorer.token_logprobs(prompt)]
    whole = await scorer.token_logprobs(prompt + continuation)
    shared = 0
    for mine, theirs in zip(head, whole, strict=False):
        if mine != theirs.token:
            break
        shared += 1
    tail = whole[max(shared, 1) :]
    if not tail:  # this text only: another question may score fine
        raise LLMCallError(f"no token of the continuation {continuation!r:.60} was scored")
    values = [t.logprob for t in tail]
    if any(v is None for v in values):  # the server gives none: no text will score
        raise ScoringUnsupportedError("the model returned no log-probabilities for given text")
    return [float(v) for v in values if v is not None]

"""In-process llama.cpp scoring (`LlamaCppClient.token_logprobs`, `token_pieces`): the
log-softmax arithmetic on llama's logits and the one forward pass a continuation costs.

`StandInLlama` is a stand-in for ``llama_cpp.Llama`` below the client (no model file): a byte
tokenizer with a BOS token and fixed random logits, so every expected number is a plain
float64 log-softmax of the same array.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from scipy.special import log_softmax

from sira_seek.llm.errors import ContextTooLongError
from sira_seek.llm.llamacpp_inprocess import LlamaCppClient
from sira_seek.llm.scoring import TextScorer, TextTokenizer, continuation_logprobs

SEED = 20261202


class StandInLlama:
    """Token 0 is BOS; byte b is token b + 1. Row i of ``scores`` is what position i predicts."""

    def __init__(self, n_ctx: int = 64) -> None:
        rng = np.random.default_rng(SEED)
        # Wide logits (sd 8) over 257 tokens: a float32 softmax without the max shift overflows.
        self.scores = (rng.normal(size=(n_ctx, 257)) * 8 + 100).astype(np.float32)
        self.evaluated: list[list[int]] = []

    def tokenize(self, data: bytes, add_bos: bool, special: bool) -> list[int]:
        return ([0] if add_bos else []) + [b + 1 for b in data]

    def detokenize(self, tokens: list[int]) -> bytes:
        return b"".join(b"<bos>" if t == 0 else bytes([t - 1]) for t in tokens)

    def reset(self) -> None:
        pass

    def eval(self, tokens: list[int]) -> None:
        self.evaluated.append(list(tokens))


def _client(n_ctx: int = 64) -> tuple[LlamaCppClient, StandInLlama]:
    print(f"seed={SEED}")
    client = LlamaCppClient(model_path="stand-in.gguf", n_ctx=n_ctx)
    llama = StandInLlama(n_ctx)
    client._scorer = llama  # what _scoring_model() loads on first use
    return client, llama


def test_token_logprobs_are_the_log_softmax_of_each_position() -> None:
    client, llama = _client()
    got = asyncio.run(client.token_logprobs("abc"))
    tokens = [0, ord("a") + 1, ord("b") + 1, ord("c") + 1]
    expected = log_softmax(llama.scores[:3].astype(np.float64), axis=1)[np.arange(3), tokens[1:]]
    assert [t.token for t in got] == ["<bos>", "a", "b", "c"]
    assert got[0].logprob is None
    assert [t.logprob for t in got[1:]] == pytest.approx(expected.tolist(), abs=1e-5)
    assert llama.evaluated == [tokens]


def test_a_continuation_costs_one_forward_pass_and_the_same_tokens() -> None:
    client, llama = _client()
    assert isinstance(client, TextScorer) and isinstance(client, TextTokenizer)
    pieces = asyncio.run(client.token_pieces("ab"))
    assert pieces == [t.token for t in asyncio.run(client.token_logprobs("ab"))]
    llama.evaluated.clear()
    got = asyncio.run(continuation_logprobs(client, "ab", "cd"))
    whole = asyncio.run(client.token_logprobs("abcd"))
    assert got == [t.logprob for t in whole[3:]]
    assert len(llama.evaluated) == 2  # "abcd" once for the continuation, once just above


def test_too_long_a_text_is_refused_before_scoring() -> None:
    client, llama = _client(n_ctx=4)
    with pytest.raises(ContextTooLongError):
        asyncio.run(client.token_pieces("abcd"))
    with pytest.raises(ContextTooLongError):
        asyncio.run(continuation_logprobs(client, "abcd", "e"))
    assert llama.evaluated == []

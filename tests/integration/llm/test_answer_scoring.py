"""Token log-probabilities of a given answer from the three real CPU backends (vLLM's server,
llama.cpp's server, llama.cpp in process), the input DIG is computed from.

The fact is made up, so the model cannot know it: the gold answer must be far more likely with
the fact in the prompt than without, on every backend, and the backends (one Gemma 3 270M, f32
in vLLM, the GGUF in llama.cpp) must agree on the answer's tokens.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from vllm_kit import VllmEndpoint

from sira_seek.llm.llamacpp_inprocess import LlamaCppClient
from sira_seek.llm.llamacpp_server import LlamaCppServerProcess
from sira_seek.llm.openai_http import OpenAICompatibleClient
from sira_seek.llm.scoring import TextScorer, TokenLogprob, continuation_logprobs
from sira_seek.metrics.information_gain import smoothed_geometric_confidence
from sira_seek.seek.information_gain import information_gains
from sira_seek.seek.results import SeekResult

pytestmark = pytest.mark.integration

FACT = "The capital of Zorbia is Quilmont."
QUESTION = "What is the capital of Zorbia?"
INFORMED = f"Notes: {FACT}\nQuestion: {QUESTION}\nAnswer: <answer>"
CLOSED = f"Question: {QUESTION}\nAnswer: <answer>"


async def _scores(scorer: TextScorer) -> tuple[list[float], list[float]]:
    informed = await continuation_logprobs(scorer, INFORMED, "Quilmont")
    closed = await continuation_logprobs(scorer, CLOSED, "Quilmont")
    return informed, closed


def _check(informed: list[float], closed: list[float]) -> None:
    print(f"informed {informed}\nclosed   {closed}")
    assert len(informed) == len(closed) >= 2  # "Quilmont" is several sub-word tokens
    assert all(v <= 0.0 for v in informed + closed)
    # Seen in the prompt, the made-up name is copied with high confidence; unseen, it is not.
    # (The length-normalised confidence, not DIG's Eq. 15: these bounds were set on it.)
    seen, unseen = smoothed_geometric_confidence(informed), smoothed_geometric_confidence(closed)
    assert seen > 0.3 > 0.05 > unseen


@pytest.fixture(scope="module")
def llama_in_process(gemma_gguf: Path):
    """Loaded once for the two tests below (one model load instead of two)."""
    client = LlamaCppClient(model_path=gemma_gguf, n_ctx=2048)
    yield client
    asyncio.run(client.aclose())


def test_vllm_scores_a_given_answer(vllm_server: VllmEndpoint) -> None:
    client = OpenAICompatibleClient(endpoints=[vllm_server.base_url], model=vllm_server.model)

    async def run() -> tuple[list[float], list[float]]:
        try:
            return await _scores(client)
        finally:
            await client.aclose()

    _check(*asyncio.run(run()))


def test_in_process_llama_cpp_agrees_with_its_server(
    llama_in_process: LlamaCppClient, llama_server: LlamaCppServerProcess
) -> None:
    """The same GGUF scores the same text alike in process and behind llama-cpp-python's
    server, token by token.

    The server computes echo log-probabilities in Python, sorting the 262k-token vocabulary
    at every position (about half a second a token here), so it scores one text, the informed
    prompt with its answer (33 tokens), instead of the four of `_scores` (103): every position
    is compared, which is what a wrong token boundary, a BOS mismatch, an off-by-one in the
    slice or the generated token left in would break, and the answer's last tokens are the
    ones `_check` bounds."""
    served = OpenAICompatibleClient(endpoints=[llama_server.base_url])
    text = INFORMED + "Quilmont"

    async def run() -> tuple[
        tuple[list[float], list[float]], list[TokenLogprob], list[TokenLogprob]
    ]:
        try:
            return (
                await _scores(llama_in_process),
                await llama_in_process.token_logprobs(text),
                await served.token_logprobs(text),
            )
        finally:
            await served.aclose()

    (informed, closed), mine, theirs = asyncio.run(run())
    _check(informed, closed)
    # The in-process scorer lists the BOS token first (no log-probability); the server leaves
    # it out and gives its first token none (OpenAI's echo convention).
    assert mine[0].logprob is None and theirs[0].logprob is None
    assert [t.token for t in theirs] == [t.token for t in mine[1:]]
    for a, b in zip(mine[2:], theirs[1:], strict=True):
        # Not bit-equal: the server batches differently (differences up to 0.1 nats seen); a
        # wrong token boundary or a missing softmax would be off by whole nats.
        assert a.logprob == pytest.approx(b.logprob, abs=0.25), (a, b)
    # The answer's tokens are the text's last ones: the server's copy of the made-up name
    # from the notes is as confident as `_check` requires in process.
    answer = [t.logprob for t in theirs[-len(informed) :]]
    assert None not in answer
    assert smoothed_geometric_confidence([float(v or 0.0) for v in answer]) > 0.3


def test_dig_of_a_run_is_positive_when_its_knowledge_holds_the_answer(
    llama_in_process: LlamaCppClient,
) -> None:
    results = [
        SeekResult(
            id="fact",
            question=QUESTION,
            golden_answers=["Quilmont"],
            method="seek",
            answer_context=f"- Capital of Zorbia: {FACT}",
            answer_context_kind="sketch",
        ),
        SeekResult(
            id="unrelated",
            question=QUESTION,
            golden_answers=["Quilmont"],
            method="seek",
            answer_context="- Rivers of Zorbia: Zorbia has two long rivers.",
            answer_context_kind="sketch",
        ),
    ]
    gains = asyncio.run(information_gains(llama_in_process, results))
    fact, unrelated = gains.by_id["fact"], gains.by_id["unrelated"]
    assert fact is not None and unrelated is not None
    print(f"DIG fact {fact.dig:.4f} unrelated {unrelated.dig:.4f}")
    assert fact.dig > 0.3
    assert fact.dig > unrelated.dig + 0.3

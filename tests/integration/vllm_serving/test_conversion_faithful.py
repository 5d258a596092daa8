"""The model vLLM serves is the packaged GGUF, faithfully converted (gguf_to_hf.py).

vLLM cannot load the Q4_K_M GGUF, so the default model is dequantized to float32 safetensors with
a tokenizer rebuilt around it. A conversion bug (no ``<bos>``, a transposed or mis-scaled tensor,
the wrong norm offset) would still serve text, just different text. So the same prompts go to
vLLM and to llama.cpp in-process on the very GGUF: the prompt token ids must be equal, the first
greedy token equal for every prompt, the first four equal for most (llama.cpp multiplies with
the 4-bit blocks and 8-bit activations, vLLM with float32: near-ties may flip late), and the
log-probability of the first token close. The comparison is printed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import httpx
import pytest
from vllm_kit import VllmEndpoint

from sira_seek.llm.errors import BackendUnavailableError
from sira_seek.llm.gemma_model import ensure_gemma_model
from sira_seek.llm.llamacpp_inprocess import llama_cpp_available
from sira_seek.llm.settings import LLMSettings

pytestmark = pytest.mark.integration

PROMPTS = (
    "The capital of France is",
    "Water boils at a temperature of",
    "Question: Who wrote the play Hamlet?\nAnswer:",
    'Extract keywords.\nText: The Amazon river flows through Brazil.\nJSON: {"keywords": [',
    "def fibonacci(n):\n    ",
)
GREEDY_TOKENS = 4
#: Nats; measured differences were 0.02-0.1 (quantized vs float32 arithmetic).
LOGPROB_TOLERANCE = 0.3


def llama_greedy(llm: Any, prompt: str, n: int) -> tuple[list[int], list[int], list[float]]:
    """(prompt ids, greedy ids, their log-probabilities) from llama.cpp on the GGUF."""
    import numpy as np

    prompt_ids = list(llm.tokenize(prompt.encode(), add_bos=True, special=True))
    llm.reset()
    llm.eval(prompt_ids)
    ids: list[int] = []
    logprobs: list[float] = []
    for _ in range(n):
        logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float64)
        best = int(logits.argmax())
        top = logits.max()
        log_norm = top + math.log(float(np.exp(logits - top).sum()))
        ids.append(best)
        logprobs.append(float(logits[best] - log_norm))
        llm.eval([best])
    return prompt_ids, ids, logprobs


def vllm_greedy(
    endpoint: VllmEndpoint, prompt: str, n: int
) -> tuple[list[int], list[int], list[float]]:
    """(prompt ids, greedy ids, their log-probabilities) from the vLLM server."""
    root = endpoint.base_url.removesuffix("/v1")
    tokenized = httpx.post(
        f"{root}/tokenize", json={"model": endpoint.model, "prompt": prompt}, timeout=120
    )
    tokenized.raise_for_status()
    body = {
        "model": endpoint.model,
        "prompt": prompt,
        "max_tokens": n,
        "temperature": 0.0,
        "ignore_eos": True,
        "logprobs": 1,
        "return_tokens_as_token_ids": True,
    }
    done = httpx.post(f"{endpoint.base_url}/completions", json=body, timeout=600)
    done.raise_for_status()
    logprobs = done.json()["choices"][0]["logprobs"]
    ids = [int(t.removeprefix("token_id:")) for t in logprobs["tokens"]]
    return list(tokenized.json()["tokens"]), ids, list(logprobs["token_logprobs"])


@pytest.fixture(scope="module")
def gguf_llama() -> Any:
    if not llama_cpp_available():
        pytest.fail("llama-cpp-python is not installed: run sira-seek llm install cpu")
    try:
        gguf: Path = ensure_gemma_model(LLMSettings().model_dir)
    except BackendUnavailableError as exc:
        pytest.fail(f"the Gemma 3 270M GGUF is unavailable: {exc}", pytrace=False)
    from llama_cpp import Llama

    return Llama(
        model_path=str(gguf), n_ctx=256, n_threads=2, logits_all=True, seed=0, verbose=False
    )


def test_vllm_greedy_tokens_equal_llama_cpp_on_the_same_gguf(
    vllm_server: VllmEndpoint, gguf_llama: Any
) -> None:
    rows = []
    for prompt in PROMPTS:
        llama_prompt, llama_ids, llama_lp = llama_greedy(gguf_llama, prompt, GREEDY_TOKENS)
        vllm_prompt, vllm_ids, vllm_lp = vllm_greedy(vllm_server, prompt, GREEDY_TOKENS)
        rows.append((prompt, llama_prompt, vllm_prompt, llama_ids, vllm_ids, llama_lp, vllm_lp))
    print(f"\n{'prompt':34s} {'llama.cpp greedy':28s} {'vLLM greedy':28s} first-token logprob")
    for prompt, _, _, llama_ids, vllm_ids, llama_lp, vllm_lp in rows:
        print(
            f"{prompt[:32]!r:34s} {llama_ids!s:28s} {vllm_ids!s:28s} "
            f"{llama_lp[0]:+.3f} / {vllm_lp[0]:+.3f}"
        )
    for prompt, llama_prompt, vllm_prompt, llama_ids, vllm_ids, llama_lp, vllm_lp in rows:
        # The tokenizer rebuilt for vLLM: same ids, <bos> (2) first.
        assert vllm_prompt == llama_prompt and vllm_prompt[0] == 2, prompt
        assert vllm_ids[0] == llama_ids[0], prompt
        assert abs(vllm_lp[0] - llama_lp[0]) < LOGPROB_TOLERANCE, prompt
    all_four = sum(r[3] == r[4] for r in rows)
    assert all_four >= len(PROMPTS) - 1, f"only {all_four} of {len(PROMPTS)} agree on 4 tokens"

"""Greedy schema-constrained decoding with the argmax checked first (``GreedyGrammarLlama``)
gives exactly the tokens of llama-cpp-python's own grammar-first chain, on the real Gemma 3
270M and the requests sira-seek sends; the whole-vocabulary mask still runs where the argmax
breaks the grammar, and sampled decoding keeps the stock chain.

The speed-up is measured, not asserted: ``benchmarks/llamacpp_grammar.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from sira_seek.llm.llamacpp_greedy_grammar import GreedyGrammarLlama
from sira_seek.llm.structured import parse_json_output
from sira_seek.sira.prompts import enrichment_request

pytestmark = pytest.mark.integration


QUERY = "Were Scott Derrickson and Ed Wood of the same nationality?"


def test_argmax_first_gives_the_stock_greedy_tokens(gemma_gguf: Path) -> None:
    stock = Llama(model_path=str(gemma_gguf), n_ctx=2048, n_threads=2, verbose=False)
    fast = GreedyGrammarLlama(model_path=str(gemma_gguf), n_ctx=2048, n_threads=2, verbose=False)
    # One query-expansion request (about 40 tokens; its grammar rejects the argmax at several
    # steps): the stock chain is the slow side, about 5 s here.
    request = enrichment_request(QUERY, "multihop", chat=False)
    assert request.prompt is not None and request.json_schema is not None
    grammar = LlamaGrammar.from_json_schema(
        json.dumps(request.json_schema, sort_keys=True), verbose=False
    )
    kwargs = {"max_tokens": request.max_tokens, "temperature": 0.0, "grammar": grammar}
    expected = stock.create_completion(prompt=request.prompt, **kwargs)["choices"][0]["text"]
    got = fast.create_completion(prompt=request.prompt, **kwargs)["choices"][0]["text"]
    assert got == expected
    parse_json_output(got, request.json_schema)  # the grammar still holds the answer
    checker = fast.last_grammar_sampler
    assert checker is not None and checker.full_masks > 0  # the fallback path ran too

    fast.last_grammar_sampler = None
    sampled = fast.create_completion(
        prompt=request.prompt, max_tokens=8, temperature=0.8, seed=1, grammar=grammar
    )
    assert sampled["choices"][0]["text"].startswith("{")
    assert fast.last_grammar_sampler is None  # sampled decoding: the stock chain

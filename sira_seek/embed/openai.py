"""``openai:URL#MODEL`` embedders: any OpenAI-compatible ``/v1/embeddings`` (vLLM serving an
embedding model, Hugging Face TEI, OpenAI).

The HTTP exchange is the LLM client's (``OpenAICompatibleClient.post_json``): the same API key
(``SIRA_SEEK_LLM_API_KEY``), timeouts, retries with backoff and in-flight cap
(``SIRA_SEEK_LLM_*``, ``LLMSettings``), so an embedding server behind the same gateway as the
LLM needs no second configuration. Texts go in batches of ``batch_size`` per request, several
requests in flight; the vectors come back in input order, scaled to unit length (cosine is
then a dot product, whatever the server returns), with the model's query/passage prefixes
(``prefixes.prefixes_for``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import httpx
import numpy as np

from sira_seek.embed.base import EmbedderError, EmbedderUnavailableError, Similarity, unit_rows
from sira_seek.embed.prefixes import Prefixes, prefixes_for
from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.errors import LLMCallError, LLMTimeoutError, ServerError, ServerUnreachableError
from sira_seek.llm.openai_http import HTTPClientSettings, OpenAICompatibleClient
from sira_seek.llm.settings import LLMSettings
from sira_seek.llm.spec import OpenAIBackendSpec
from sira_seek.redaction import Redactor

logger = logging.getLogger(__name__)

T = TypeVar("T")
BATCH_SIZE = 64
"""Texts per request: OpenAI takes up to 2048, TEI 32 by default (--max-client-batch-size);
vLLM any. 64 keeps a request's body small and several requests in flight."""
_UNAVAILABLE = (ServerUnreachableError, LLMTimeoutError, ServerError)


class OpenAIEmbedder:
    """``Embedder`` over an OpenAI-compatible embeddings endpoint (blocking calls)."""

    similarity: Similarity = "cosine"

    def __init__(
        self,
        spec: OpenAIBackendSpec,
        *,
        settings: LLMSettings | None = None,
        batch_size: int = BATCH_SIZE,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        settings = settings or LLMSettings()
        self._spec = spec.to_spec()
        self._redact = Redactor.configured(llm=self._spec, llm_api_key=settings.api_key)
        self.batch_size = batch_size
        self._client = OpenAICompatibleClient(
            endpoints=spec.endpoints,
            model=spec.model,
            settings=HTTPClientSettings.from_llm_settings(settings),
            transport=transport,
        )
        self._blocking = BlockingLLMClient(self._client)
        self._model = spec.model
        self._dimensions: int | None = None

    @property
    def spec(self) -> str:
        return self._spec

    @property
    def model(self) -> str:
        """The spec's model, else the first one the server lists (asked once)."""
        if self._model is None:
            self._model = self._call(self._client.model_name())
        return self._model

    @property
    def prefixes(self) -> Prefixes:
        return prefixes_for(self.model)

    @property
    def dimensions(self) -> int:
        """The length of the server's vectors: known after the first call, else asked with
        one short text."""
        if self._dimensions is None:
            self.embed_queries(["dimensions"])
        assert self._dimensions is not None
        return self._dimensions

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.prefixes.document + t for t in texts]) if texts else []

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.prefixes.query + t for t in texts]) if texts else []

    def close(self) -> None:
        self._blocking.close()

    def _embed(self, texts: list[str]) -> list[list[float]]:
        model = self.model
        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        answers = self._call(self._post_all(model, batches))
        rows: list[list[float]] = []
        for batch, answer in zip(batches, answers, strict=True):
            rows += self._vectors(answer, len(batch))
        vectors = unit_rows(np.asarray(rows, dtype=np.float64))
        return vectors.tolist()

    async def _post_all(self, model: str, batches: list[list[str]]) -> list[dict[str, Any]]:
        extra: dict[str, Any] = {}
        if "vllm" in await self._client.model_owners():
            # vLLM refuses an input longer than the model's context (all-MiniLM-L6-v2: 256
            # tokens) unless told to cut it, as sentence-transformers and the CPU embedder do;
            # -1: at the model's own length. Other servers truncate themselves (TEI with
            # --auto-truncate, OpenAI up to 8k tokens) or refuse unknown fields (OpenAI).
            extra["truncate_prompt_tokens"] = -1
        return await asyncio.gather(
            *(
                self._client.post_json("/embeddings", {"model": model, "input": b, **extra})
                for b in batches
            )
        )

    def _vectors(self, answer: dict[str, Any], expected: int) -> list[list[float]]:
        """The vectors of one response, in input order, checked for count and length."""
        try:
            items = sorted(answer["data"], key=lambda item: int(item["index"]))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (KeyError, TypeError, ValueError) as exc:
            raise self._error(f"unexpected embeddings payload: {str(answer)[:200]}") from exc
        if len(vectors) != expected:
            raise self._error(f"asked for {expected} vectors, got {len(vectors)}")
        lengths = {len(v) for v in vectors}
        if self._dimensions is not None:
            lengths.add(self._dimensions)
        if len(lengths) != 1 or 0 in lengths:
            raise self._error(f"vectors of differing or zero lengths: {sorted(lengths)}")
        self._dimensions = lengths.pop()
        return vectors

    def _error(self, message: str, kind: type[EmbedderError] = EmbedderError) -> EmbedderError:
        return kind(self._redact(f"embedder {self._spec}: {message}"))

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the client's loop; an LLM-call failure becomes an embedder error
        naming the spec, masked (a dead server: ``EmbedderUnavailableError``)."""
        try:
            return self._blocking.run(coro)
        except LLMCallError as exc:
            kind = EmbedderUnavailableError if isinstance(exc, _UNAVAILABLE) else EmbedderError
            raise self._error(str(exc), kind) from None

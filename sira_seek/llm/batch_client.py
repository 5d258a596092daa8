"""The ``LLMClient`` of offline batch rounds (``--llm batch:DIR#MODEL``; see
``batch_rounds``): it builds each request's body with the live client's body builder, looks
it up among the rounds' answers, and reads an answer as the live client reads a reply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sira_seek.llm.batch_files import BATCH_URL_PREFIX
from sira_seek.llm.batch_rounds import BatchRounds
from sira_seek.llm.client import generate_many_bounded
from sira_seek.llm.openai_body import openai_request_body
from sira_seek.llm.openai_http import complete_request
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.llm.structured import StructuredOutputDialect


class BatchRoundClient:
    """``LLMClient`` over a folder of batch rounds (see the module docstring)."""

    backend = "batch"

    def __init__(
        self,
        rounds: BatchRounds,
        *,
        model: str,
        malformed_retries: int = 2,
        dialect: StructuredOutputDialect = "openai",
        template_kwargs: bool = True,
    ) -> None:
        self.rounds = rounds
        self._model = model
        self._malformed_retries = malformed_retries
        self._dialect: StructuredOutputDialect = dialect
        self._template_kwargs = template_kwargs

    async def model_name(self) -> str:
        return self._model

    def _body(self, request: LLMRequest) -> tuple[str, dict[str, Any]]:
        return openai_request_body(
            request, model=self._model, dialect=self._dialect, template_kwargs=self._template_kwargs
        )

    def request_body(self, request: LLMRequest) -> tuple[str, dict[str, Any]]:
        """(url, body) of ``request`` in a batch file: the live client's body builder, with
        the Batch API's ``/v1`` endpoint."""
        path, body = self._body(request)
        return BATCH_URL_PREFIX + path, body

    async def generate(self, request: LLMRequest) -> LLMResponse:
        async def post(path: str, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
            return self.rounds.answer(BATCH_URL_PREFIX + path, body), 1

        return await complete_request(
            request,
            post,
            build=self._body,
            malformed_retries=self._malformed_retries,
            backend=self.backend,
            model=self._model,
        )

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return await generate_many_bounded(
            self.generate, requests, concurrency or 64, backend=self.backend, model=self._model
        )

    async def aclose(self) -> None:
        return None

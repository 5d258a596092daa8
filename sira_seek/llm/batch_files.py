"""The OpenAI Batch file format, for every offline batch the project writes or reads.

An input file has one request per line (``custom_id``, ``method``, ``url``, ``body``); the
batch job (OpenAI's Batch API, vLLM's ``python -m vllm.entrypoints.openai.run_batch``, another
provider's) writes one output line per request (``custom_id``, ``response`` with
``status_code`` and ``body``, ``error``), in any order. ``sira-sync export-requests`` and the
batch rounds of ``--llm batch:DIR#MODEL`` (``batch_rounds``) write the first; ``sira-sync
--from-batch-output`` and the batch rounds read the second.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

#: Batch files name endpoints with the version prefix; the live client posts under a base URL
#: that already ends in /v1.
BATCH_URL_PREFIX = "/v1"


class BatchRequestLine(BaseModel):
    """One line of an OpenAI Batch input file."""

    custom_id: str
    method: Literal["POST"] = "POST"
    url: str
    body: dict[str, Any]


class BatchResponse(BaseModel):
    """The HTTP answer in an output line."""

    model_config = ConfigDict(extra="ignore")

    status_code: int = 200
    body: dict[str, Any] | None = None


class BatchOutputLine(BaseModel):
    """One line of an OpenAI Batch output file (vLLM's ``BatchRequestOutput``)."""

    model_config = ConfigDict(extra="ignore")

    custom_id: str
    response: BatchResponse | None = None
    error: Any = None

    @property
    def answer(self) -> dict[str, Any] | None:
        """The response body of a line that succeeded (no error, HTTP 200), else None."""
        if self.error is not None or self.response is None or self.response.status_code != 200:
            return None
        return self.response.body


def body_custom_id(url: str, body: dict[str, Any]) -> str:
    """A ``custom_id`` that names a request by its content: the sha256 of its endpoint and
    canonical JSON body. The same request gets the same id in any process, on any machine."""
    canonical = json.dumps(
        {"url": url, "body": body}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()

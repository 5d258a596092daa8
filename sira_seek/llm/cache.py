"""Content-addressed response cache on disk.

Evaluation re-runs become reproducible and free, and an interrupted enrichment resumes without
paying twice. A key is the sha256 of everything that determines an answer (backend, model,
prompt or messages, schema, sampling settings); the value is one JSON file. Files are written
to a temporary name and renamed into place, so concurrent writers (threads or processes) never
leave a torn file: the last complete write wins and readers see either nothing or a whole file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from sira_seek.llm.client import LLMClient, generate_many_bounded
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse

CACHE_FORMAT_VERSION = 1


def cache_key(*, backend: str, model: str, request: LLMRequest) -> str:
    """sha256 hex digest identifying the answer to ``request`` from ``backend``/``model``."""
    payload = {
        "v": CACHE_FORMAT_VERSION,
        "backend": backend,
        "model": model,
        "request": request.model_dump(mode="json", exclude={"lookup_key"}),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """A directory of ``<key[:2]>/<key>.json`` files, one per cached response."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)

    def path_for(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> LLMResponse | None:
        try:
            text = self.path_for(key).read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return LLMResponse.model_validate_json(text)
        except ValueError:
            return None  # an unreadable entry is a miss; the next put replaces it

    def put(self, key: str, response: LLMResponse) -> None:
        target = self.path_for(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        stored = response.model_copy(update={"cache_hit": False})
        fd, tmp_name = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(stored.model_dump_json())
            os.replace(tmp_name, target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("??/*.json")) if self.directory.exists() else 0


class CachingLLMClient:
    """Wraps any ``LLMClient``; answers from the cache when it can, stores what it had to ask.

    ``read=False`` bypasses lookups (refresh) and ``write=False`` leaves the cache untouched;
    errors are never cached.
    """

    def __init__(
        self, inner: LLMClient, cache: ResponseCache, *, read: bool = True, write: bool = True
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.read = read
        self.write = write

    @property
    def backend(self) -> str:
        return self.inner.backend

    async def model_name(self) -> str:
        return await self.inner.model_name()

    async def generate(self, request: LLMRequest) -> LLMResponse:
        if not (self.read or self.write):
            return await self.inner.generate(request)
        started = time.perf_counter()
        key = cache_key(backend=self.backend, model=await self.model_name(), request=request)
        if self.read:
            hit = self.cache.get(key)
            if hit is not None:
                return hit.model_copy(
                    update={"cache_hit": True, "latency_s": time.perf_counter() - started}
                )
        response = await self.inner.generate(request)
        if self.write:
            self.cache.put(key, response)
        return response

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return await generate_many_bounded(
            self.generate, requests, concurrency or 64, backend=self.backend
        )

    async def aclose(self) -> None:
        await self.inner.aclose()

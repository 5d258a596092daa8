"""Content-addressed response cache on disk.

Evaluation re-runs become reproducible and free, and an interrupted enrichment resumes without
paying twice. A key is the sha256 of everything that determines an answer (backend, model,
prompt or messages, schema, sampling settings); the value is one JSON file. Files are written
to a temporary name and renamed into place, so concurrent writers (threads or processes) never
leave a torn file: the last complete write wins and readers see either nothing or a whole file.

The cache is capped in bytes (``SIRA_SEEK_LLM_CACHE_MAX_BYTES``): when a write takes it past
the cap, the least recently used entries (a hit touches its file's time) are removed until it
is back under 90% of the cap, so a long-lived server or a large evaluation cannot fill the
disk. Each process keeps a running total from one scan and rescans when it evicts, so other
processes' writes are counted by the next eviction.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from sira_seek.llm.client import LLMClient, generate_many_bounded
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.llm.settings import DEFAULT_CACHE_MAX_BYTES

logger = logging.getLogger(__name__)

CACHE_FORMAT_VERSION = 1

EVICT_TO = 0.9
"""An eviction goes down to this share of the cap, so it does not rerun on every write."""


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
    """A directory of ``<key[:2]>/<key>.json`` files, one per cached response, at most
    ``max_bytes`` in all (``None``: no cap); least recently used first out."""

    def __init__(
        self, directory: Path | str, max_bytes: int | None = DEFAULT_CACHE_MAX_BYTES
    ) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._total: int | None = None  # bytes on disk, scanned on the first write

    def path_for(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> LLMResponse | None:
        path = self.path_for(key)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            response = LLMResponse.model_validate_json(text)
        except ValueError:
            return None  # an unreadable entry is a miss; the next put replaces it
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: the last to be evicted
        return response

    def put(self, key: str, response: LLMResponse) -> None:
        target = self.path_for(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        stored = response.model_copy(update={"cache_hit": False})
        data = stored.model_dump_json().encode("utf-8")
        fd, tmp_name = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp_name, target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        self._added(len(data))

    def _added(self, size: int) -> None:
        """Count a write; past the cap, evict."""
        if self.max_bytes is None:
            return
        with self._lock:
            if self._total is None:
                self._total = sum(size for _path, _used, size in self._entries())
            else:
                self._total += size
            if self._total > self.max_bytes:
                self._total = self._evict(int(self.max_bytes * EVICT_TO))

    def _entries(self) -> list[tuple[Path, float, int]]:
        """Every entry: its path, when it was last used (written or read), its size."""
        found = []
        for path in self.directory.glob("??/*.json"):
            try:
                info = path.stat()
            except FileNotFoundError:
                continue  # removed meanwhile (another process evicting)
            found.append((path, info.st_mtime, info.st_size))
        return found

    def _evict(self, target: int) -> int:
        """Remove the least recently used entries until at most ``target`` bytes remain;
        the bytes left."""
        entries = sorted(self._entries(), key=lambda entry: entry[1])
        total = sum(size for _path, _used, size in entries)
        removed = 0
        for path, _used, size in entries:
            if total <= target:
                break
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            total -= size
            removed += 1
        logger.info(
            "LLM response cache %s: removed %d least recently used answers to stay under "
            "%d bytes (%d left)",
            self.directory,
            removed,
            self.max_bytes,
            total,
        )
        return total

    def size_bytes(self) -> int:
        """Bytes the entries take on disk now."""
        return sum(size for _path, _used, size in self._entries())

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

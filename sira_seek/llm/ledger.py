"""Per-call accounting (backend, model, tokens, latency, cache hits) for run reports."""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sira_seek.llm.client import LLMClient, generate_many_bounded
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse
from sira_seek.stats import percentile


@dataclass(frozen=True)
class LLMCallRecord:
    """One call as the ledger remembers it."""

    backend: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cache_hit: bool
    error_kind: str | None = None


class LLMUsageLedger:
    """Thread-safe tally of LLM calls; ``summary()`` is what a run report embeds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[LLMCallRecord] = []

    def record(self, outcome: LLMResponse | LLMError) -> None:
        if isinstance(outcome, LLMResponse):
            entry = LLMCallRecord(
                backend=outcome.backend,
                model=outcome.model,
                prompt_tokens=outcome.usage.prompt_tokens,
                completion_tokens=outcome.usage.completion_tokens,
                latency_s=outcome.latency_s,
                cache_hit=outcome.cache_hit,
            )
        else:
            entry = LLMCallRecord(
                backend=outcome.backend,
                model=outcome.model,
                prompt_tokens=0,
                completion_tokens=0,
                latency_s=outcome.latency_s,
                cache_hit=False,
                error_kind=outcome.kind,
            )
        with self._lock:
            self._records.append(entry)

    @property
    def records(self) -> list[LLMCallRecord]:
        with self._lock:
            return list(self._records)

    def summary(self) -> dict[str, Any]:
        """Totals overall and per backend/model; latency percentiles cover live calls only."""
        records = self.records
        by_model: dict[str, list[LLMCallRecord]] = defaultdict(list)
        for r in records:
            by_model[f"{r.backend}:{r.model}"].append(r)
        out = _totals(records)
        out["by_backend_model"] = {name: _totals(rs) for name, rs in sorted(by_model.items())}
        return out


def _totals(records: Sequence[LLMCallRecord]) -> dict[str, Any]:
    ok = [r for r in records if r.error_kind is None]
    live = [r.latency_s for r in ok if not r.cache_hit]
    hits = sum(r.cache_hit for r in ok)
    return {
        "calls": len(records),
        "succeeded": len(ok),
        "errors": len(records) - len(ok),
        "errors_by_kind": dict(Counter(r.error_kind for r in records if r.error_kind)),
        "cache_hits": hits,
        "cache_hit_rate": hits / len(ok) if ok else 0.0,
        "prompt_tokens": sum(r.prompt_tokens for r in ok),
        "completion_tokens": sum(r.completion_tokens for r in ok),
        "live_latency_s_total": sum(live),
        "live_latency_s_mean": statistics.fmean(live) if live else 0.0,
        "live_latency_s_p50": percentile(live, 50),
        "live_latency_s_p95": percentile(live, 95),
    }


class MeteredLLMClient:
    """Wraps any ``LLMClient`` and records every outcome, success or failure, in a ledger."""

    def __init__(self, inner: LLMClient, ledger: LLMUsageLedger) -> None:
        self.inner = inner
        self.ledger = ledger

    @property
    def backend(self) -> str:
        return self.inner.backend

    async def model_name(self) -> str:
        return await self.inner.model_name()

    async def generate(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        try:
            response = await self.inner.generate(request)
        except Exception as exc:
            try:
                model = await self.inner.model_name()
            except Exception:
                model = "unknown"
            self.ledger.record(
                LLMError.from_exception(
                    exc,
                    backend=self.backend,
                    model=model,
                    latency_s=time.perf_counter() - started,
                )
            )
            raise
        self.ledger.record(response)
        return response

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return await generate_many_bounded(
            self.generate, requests, concurrency or 64, backend=self.backend
        )

    async def aclose(self) -> None:
        await self.inner.aclose()

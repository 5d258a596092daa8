"""``--estimate``: what a run would cost, from a measured sample rather than a guess.

Counts the documents a run would enrich (a dry-run scan), asks the phrase source for a small
sample of them with the cache off, and extrapolates tokens and wall time from the measured rate
(sample documents per second). The sample is answered with ``min(sample, concurrency)``
requests in flight, so the rate is the run's own only when the sample fills the in-flight
slots: a batching server (vLLM) answers 8 documents in flight at several times the rate of one,
while llama.cpp in-process answers one at a time whatever the concurrency. ``sample_for`` picks
the sample size accordingly, and an estimate from a sample that left slots empty says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel

from sira_seek.backend import SearchBackend

from .phrase_sources import PhraseSource
from .records import PhraseProposal
from .runner import SyncRunner
from .settings import SyncSettings
from .slicing import SliceSpec


class RunEstimate(BaseModel):
    index: str
    slice: str
    model: str
    docs_read: int
    docs_to_enrich: int
    sample_docs: int
    sample_failures: int
    sample_seconds: float
    #: Requests in flight while the sample ran, and the run's concurrency.
    sample_in_flight: int = 1
    concurrency: int = 1
    #: The measured rate the time is extrapolated from (sample docs / sample seconds).
    docs_per_s: float = 0.0
    prompt_tokens_per_doc: float
    completion_tokens_per_doc: float
    expected_prompt_tokens: int
    expected_completion_tokens: int
    expected_seconds: float

    def describe(self) -> str:
        hours = self.expected_seconds / 3600
        return (
            f"{self.index} [slice {self.slice}] with {self.model}: {self.docs_to_enrich} of "
            f"{self.docs_read} docs to enrich; sample of {self.sample_docs} took "
            f"{self.sample_seconds:.1f}s ({self.sample_failures} failed) with "
            f"{self.sample_in_flight} in flight, {self.docs_per_s:.3f} docs/s, "
            f"{self.prompt_tokens_per_doc:.0f}+{self.completion_tokens_per_doc:.0f} tokens/doc; "
            f"expected {self.expected_prompt_tokens} prompt + {self.expected_completion_tokens} "
            f"completion tokens, about {self.expected_seconds:.0f}s ({hours:.2f} h)"
            + (
                f"; the sample filled {self.sample_in_flight} of {self.concurrency} in-flight "
                f"slots, so on a batching server (vLLM) the run is faster than this: "
                f"--sample {self.concurrency} measures the run's own rate"
                if self.sample_in_flight < self.concurrency
                and self.docs_to_enrich > 0
                and self.sample_docs < self.docs_to_enrich
                else ""
            )
        )


def sample_for(llm_spec: str | None, concurrency: int, default: int = 5) -> int:
    """The ``--estimate`` sample size when none is given: enough documents to fill every
    in-flight slot for a server (an ``openai:`` spec, which may batch), ``default`` for
    in-process llama.cpp and precomputed files, whose rate does not depend on it."""
    if llm_spec is not None and llm_spec.strip().lower().startswith("openai:"):
        return max(default, concurrency)
    return default


def estimate_run(
    backend: SearchBackend,
    index: str,
    source: PhraseSource,
    settings: SyncSettings,
    slice_spec: SliceSpec,
    *,
    sample: int = 5,
    clock: Callable[[], float] = time.perf_counter,
) -> RunEstimate:
    """Plan the run (a dry run), then time ``sample`` documents' proposals with ``clock``
    and extrapolate from that wall-clock rate."""
    planner = SyncRunner(backend, index, source, settings, slice_spec=slice_spec, dry_run=True)
    plan = planner.run().counts
    todo = plan.new + plan.changed + plan.outdated + plan.failed_before
    items = planner.pending_items(sample) if todo else []
    started = clock()
    outcomes = source.propose(items) if items else []
    seconds = clock() - started
    answered = [o for o in outcomes if isinstance(o, PhraseProposal)]
    n = max(len(answered), 1)
    prompt_per_doc = sum(o.prompt_tokens for o in answered) / n
    completion_per_doc = sum(o.completion_tokens for o in answered) / n
    docs_per_s = len(items) / seconds if items and seconds > 0 else 0.0
    return RunEstimate(
        index=index,
        slice=str(slice_spec),
        model=source.model,
        docs_read=plan.seen,
        docs_to_enrich=todo,
        sample_docs=len(items),
        sample_failures=len(items) - len(answered),
        sample_seconds=round(seconds, 3),
        sample_in_flight=max(1, min(len(items), settings.llm_concurrency)),
        concurrency=settings.llm_concurrency,
        docs_per_s=round(docs_per_s, 4),
        prompt_tokens_per_doc=prompt_per_doc,
        completion_tokens_per_doc=completion_per_doc,
        expected_prompt_tokens=round(prompt_per_doc * todo),
        expected_completion_tokens=round(completion_per_doc * todo),
        expected_seconds=round(todo / docs_per_s, 1) if docs_per_s > 0 else 0.0,
    )

"""``--estimate``: what a run would cost, from a measured sample rather than a guess.

Counts the documents a run would enrich (a dry-run scan), asks the phrase source for a small
sample of them with the cache off, and extrapolates tokens and wall time linearly. The sample is
answered with ``min(sample, concurrency)`` requests in flight, so the time is only as good as
that sample is representative of the whole run's parallelism.
"""

from __future__ import annotations

import time

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
            f"{self.sample_seconds:.1f}s ({self.sample_failures} failed), "
            f"{self.prompt_tokens_per_doc:.0f}+{self.completion_tokens_per_doc:.0f} tokens/doc; "
            f"expected {self.expected_prompt_tokens} prompt + {self.expected_completion_tokens} "
            f"completion tokens, about {self.expected_seconds:.0f}s ({hours:.2f} h)"
        )


def estimate_run(
    backend: SearchBackend,
    index: str,
    source: PhraseSource,
    settings: SyncSettings,
    slice_spec: SliceSpec,
    *,
    sample: int = 5,
) -> RunEstimate:
    planner = SyncRunner(backend, index, source, settings, slice_spec=slice_spec, dry_run=True)
    plan = planner.run().counts
    todo = plan.new + plan.changed + plan.outdated + plan.failed_before
    items = planner.pending_items(sample) if todo else []
    started = time.perf_counter()
    outcomes = source.propose(items) if items else []
    seconds = time.perf_counter() - started
    answered = [o for o in outcomes if isinstance(o, PhraseProposal)]
    n = max(len(answered), 1)
    prompt_per_doc = sum(o.prompt_tokens for o in answered) / n
    completion_per_doc = sum(o.completion_tokens for o in answered) / n
    per_doc_s = seconds / len(items) if items else 0.0
    return RunEstimate(
        index=index,
        slice=str(slice_spec),
        model=source.model,
        docs_read=plan.seen,
        docs_to_enrich=todo,
        sample_docs=len(items),
        sample_failures=len(items) - len(answered),
        sample_seconds=round(seconds, 3),
        prompt_tokens_per_doc=prompt_per_doc,
        completion_tokens_per_doc=completion_per_doc,
        expected_prompt_tokens=round(prompt_per_doc * todo),
        expected_completion_tokens=round(completion_per_doc * todo),
        expected_seconds=round(per_doc_s * todo, 1),
    )

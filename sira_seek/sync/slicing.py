"""``--slice i/N``: which documents belong to worker i of N.

The split is a stable hash of ``_id``, computed client-side, not the engine's sliced
point-in-time: Elasticsearch slices a point in time by Lucene doc-id ranges, and independent
workers open their points in time at different moments while other workers' writes add
documents, so engine slices opened apart can miss a document or share one. A hash of ``_id``
gives every worker, on any machine and at any time, the same answer. Each worker still reads
every document's source fields once (cheap next to an LLM call per document).
"""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sira_seek.input_errors import InputError

_SLICE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class SliceSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int = Field(default=0, ge=0)
    count: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _in_range(self) -> SliceSpec:
        if self.index >= self.count:
            raise ValueError(f"slice {self.index}/{self.count}: i must be below N")
        return self

    @classmethod
    def parse(cls, text: str | None) -> SliceSpec:
        """``"i/N"`` (e.g. ``0/2``); ``None`` means the whole index."""
        if not text:
            return cls()
        match = _SLICE.match(text)
        if not match:
            raise InputError(f"--slice {text!r} is not of the form i/N (e.g. 0/2)")
        return cls(index=int(match.group(1)), count=int(match.group(2)))

    def owns(self, doc_id: str) -> bool:
        if self.count == 1:
            return True
        digest = hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

"""Per-question checkpoints: one JSON line per finished question, appended and fsynced.

A killed run loses at most the questions in flight; on restart, questions already answered are
read back instead of asked again. A torn last line (the kill landed mid-write) is ignored and
its question redone. Failed questions are recorded too, so a report shows them, but they are
retried on resume: the failure may have been a server that has since come back.
"""

from __future__ import annotations

import os
from pathlib import Path

from sira_seek.input_errors import InputError
from sira_seek.redaction import output_redactor

from .results import SeekResult


class CheckpointMismatchError(InputError):
    """The checkpoint was written by a different method or variant."""


class SeekCheckpoint:
    """A JSONL file of `SeekResult` records keyed by question id (the last record wins)."""

    def __init__(self, path: Path | str, *, method: str, variant: str | None) -> None:
        self.path = Path(path)
        self.method = method
        self.variant = variant
        self.torn_lines = 0

    def load(self) -> dict[str, SeekResult]:
        """Records already written, by question id; raises if another configuration wrote them."""
        found: dict[str, SeekResult] = {}
        if not self.path.exists():
            return found
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    record = SeekResult.model_validate_json(line)
                except ValueError:
                    self.torn_lines += 1
                    continue
                if (record.method, record.variant) != (self.method, self.variant):
                    raise CheckpointMismatchError(
                        f"{self.path} holds results of method={record.method} "
                        f"variant={record.variant}, not method={self.method} "
                        f"variant={self.variant}: use another --checkpoint file"
                    )
                found[record.id] = record
        return found

    def finished(self) -> dict[str, SeekResult]:
        """Successful records only: these are not asked again."""
        # A question whose searches failed (cluster down) answered without its evidence: it
        # is redone on resume rather than kept as finished.
        return {
            qid: r
            for qid, r in self.load().items()
            if r.ok and not any(step.error for step in r.steps)
        }

    def append(self, result: SeekResult) -> None:
        """Append one record durably (flush + fsync) before the next question is counted."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A step's error may name the cluster's URL: masked as every output file is.
        line = output_redactor()(result.model_dump_json()) + "\n"
        with self.path.open("ab") as handle:
            if handle.tell() > 0 and not self._ends_with_newline():
                line = "\n" + line  # a torn last line must not swallow this record
            handle.write(line.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"

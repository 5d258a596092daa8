"""Run state on disk: a checkpoint per (index, slice) and an append-only failures file.

Correctness never depends on the checkpoint: hash-guarded writes make re-doing a document a
no-op. The checkpoint makes ``--resume`` cheap: it keeps the run's start time and fingerprint,
so the resumed scan can leave out every document this run already wrote, and it keeps the
running counts. It is replaced atomically (write, fsync, rename), so a kill at any moment
leaves either the previous or the next checkpoint, never a torn one.
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from sira_seek.input_errors import InputError
from sira_seek.redaction import output_redactor

from .records import EnrichmentFingerprint, FailureRecord, utc_now_ms
from .slicing import SliceSpec


class Checkpoint(BaseModel):
    """Where a run stands; enough to resume it and to refuse resuming a different run."""

    run_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    index: str
    slice: SliceSpec
    fields: list[str]
    fingerprint: EnrichmentFingerprint
    started_at: str = Field(default_factory=utc_now_ms)
    updated_at: str = Field(default_factory=utc_now_ms)
    finished: bool = False
    pages: int = 0
    counts: dict[str, int] = Field(default_factory=dict)
    resumes: int = 0


class ResumeMismatchError(InputError):
    """``--resume`` was asked for a checkpoint written by a differently configured run."""


def resume_or_start(
    store: RunStateStore,
    fresh: Checkpoint,
    *,
    resume: bool,
    run: str,
    describe: Callable[[EnrichmentFingerprint], object],
) -> tuple[Checkpoint, bool]:
    """The checkpoint a run goes on with, and whether it is a resumed one.

    ``fresh`` unless ``resume`` finds an unfinished checkpoint; one written with another
    fingerprint or other fields is refused (resuming it would mix two configurations in one
    index) with ``ResumeMismatchError``, naming the ``run`` ("a run", "an --embed run") and
    both configurations as ``describe`` shows a fingerprint.
    """
    saved = store.load() if resume else None
    if saved is None or saved.finished:
        return fresh, False
    if saved.fingerprint != fresh.fingerprint or saved.fields != fresh.fields:
        raise ResumeMismatchError(
            f"the checkpoint at {store.checkpoint_path} belongs to {run} with "
            f"{describe(saved.fingerprint)} over fields {saved.fields}; this run has "
            f"{describe(fresh.fingerprint)} over {fresh.fields}. Run without --resume."
        )
    saved.resumes += 1
    return saved, True


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class RunStateStore:
    """Checkpoint and failures paths for one (index, slice) under ``state_dir``."""

    def __init__(self, state_dir: Path, index: str, slice_spec: SliceSpec) -> None:
        self.state_dir = Path(state_dir)
        stem = f"{_safe(index)}.slice{slice_spec.index}of{slice_spec.count}"
        self.checkpoint_path = self.state_dir / f"{stem}.checkpoint.json"
        self.failures_path = self.state_dir / f"{stem}.failures.jsonl"

    def load(self) -> Checkpoint | None:
        try:
            return Checkpoint.model_validate_json(self.checkpoint_path.read_text("utf-8"))
        except FileNotFoundError:
            return None

    def save(self, checkpoint: Checkpoint) -> None:
        checkpoint.updated_at = utc_now_ms()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".ckpt.", dir=self.state_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(checkpoint.model_dump_json(indent=1))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.checkpoint_path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def record_failures(self, failures: list[FailureRecord]) -> None:
        """Append failures (doc id, raw text); flushed so a kill loses at most a torn last line."""
        if not failures:
            return
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with self.failures_path.open("a", encoding="utf-8") as handle:
            redact = output_redactor()  # a raw answer may be an LLM server's error text
            for failure in failures:
                handle.write(redact(failure.model_dump_json()) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def read_failures(self) -> list[FailureRecord]:
        """Every complete line of the failures file (a torn last line is ignored)."""
        if not self.failures_path.exists():
            return []
        out = []
        for line in self.failures_path.read_text("utf-8").splitlines():
            try:
                out.append(FailureRecord.model_validate_json(line))
            except ValueError:
                continue
        return out

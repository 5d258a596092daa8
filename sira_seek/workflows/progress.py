"""The one way a workflow reports how far it got: a ``Progress`` its caller passes, or None.

Every long workflow (an evaluation, an enrichment, an ingest) used to take its own set of
callbacks (``on_start(total, one_by_one)``, ``on_start(questions)``, ``on_start(to_ask,
resumed)``, ``on_progress(n)``, ``on_result(result)``, ``on_skipped(lines)``, ``on_page(n,
counts)``, a ``notice``), so each front end needed a different adapter for each job. Now a
workflow takes ``progress: Progress | None`` and calls three methods; the command line
renders every one with the same display (``cli/progress.py``: bars on a terminal, a few
plain lines otherwise), the library and the HTTP service pass None. A workflow never prints:
without a ``Progress`` its notes go to the log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sira_seek.sync.run_report import RunCounts

if TYPE_CHECKING:
    from sira_seek.seek.results import SeekResult

logger = logging.getLogger(__name__)

Figure = int | float | str
"""A running figure shown beside the count (``enriched=12``, ``tok_s=340``)."""

SKIPPED_SHOWN = 50
"""Bad input lines shown one by one before the rest are only counted: a broken file should
not flood the screen, and the result lists them all anyway."""


class Progress(Protocol):
    """How far a workflow got. Called from the workflow's thread, in this order: ``note``
    at any time, ``start`` once the work is sized (before the first ``advance``), then
    ``advance`` as items finish."""

    def start(self, total: int | None, *, resumed: int = 0) -> None:
        """The work is sized: ``total`` items in all (None: not known), of which ``resumed``
        were done by an earlier run (a checkpoint) and will not be advanced again."""
        ...

    def advance(
        self,
        n: int = 1,
        *,
        failure: str | None = None,
        figures: Mapping[str, Figure] | None = None,
    ) -> None:
        """``n`` more items done. ``failure``: one line on why an item failed (the run goes
        on and reports it); ``figures``: running counts to show beside the count."""
        ...

    def note(self, message: str) -> None:
        """A line the user should see now, not a count: a bad input line skipped, a notice
        about the run (an old checkpoint, a fallback)."""
        ...


def note_skipped(progress: Progress | None, bad: Sequence[object]) -> None:
    """The bad lines a lenient read skipped, as notes (``skipped LINE``), the first
    ``SKIPPED_SHOWN`` one by one and the rest counted."""
    if progress is None or not bad:
        return
    for line in bad[:SKIPPED_SHOWN]:
        progress.note(f"skipped {line}")
    if len(bad) > SKIPPED_SHOWN:
        progress.note(f"... and {len(bad) - SKIPPED_SHOWN} more bad lines skipped")


def advancer(progress: Progress | None) -> Callable[[int], None] | None:
    """``progress.advance`` as the plain ``on_progress(n)`` callable the layers below the
    workflows (``sira.evaluation``, ``ingest``) take; None without a ``Progress``."""
    if progress is None:
        return None
    return lambda n: progress.advance(n)


def noticer(progress: Progress | None, *, level: int = logging.INFO) -> Callable[[str], None]:
    """Where a workflow's notices go: the ``Progress`` when there is one, else the log."""
    if progress is not None:
        return progress.note
    return lambda message: logger.log(level, "%s", message)


def count_lines(path: Path) -> int | None:
    """Lines in ``path`` (a corpus or query file), read as raw bytes in blocks: a quick pre-pass
    that gives an ingest bar its total, hence an ETA. ``None`` when the file cannot be read."""
    try:
        with path.open("rb") as handle:
            count, last = 0, b"\n"
            while block := handle.read(1 << 20):
                count += block.count(b"\n")
                last = block[-1:]
            return count + (last != b"\n")
    except OSError:
        return None


class PageProgress:
    """A sync runner's ``on_page(scanned, counts)`` as ``Progress.advance``: the documents
    scanned, with the enriched and failed counts and the LLM's tokens per second so far."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.started = time.perf_counter()

    def __call__(self, scanned: int, counts: RunCounts) -> None:
        elapsed = max(time.perf_counter() - self.started, 1e-6)
        tokens = counts.prompt_tokens + counts.completion_tokens
        figures: dict[str, Figure] = {
            "enriched": counts.enriched,
            "failed": counts.failed,
            "tok_s": f"{tokens / elapsed:.0f}",
        }
        self.progress.advance(scanned, figures=figures)


class QuestionProgress:
    """``seek.batch.run_questions``' ``on_start(to_ask, resumed)`` and ``on_result(result)``
    as ``Progress``: the questions in all with those a checkpoint holds as ``resumed``, and a
    failed question's ``[id] FAILED: error`` line."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def start(self, to_ask: int, resumed: int) -> None:
        self.progress.start(to_ask + resumed, resumed=resumed)

    def result(self, result: SeekResult) -> None:
        failure = f"[{result.id}] FAILED: {result.error}" if result.error else None
        self.progress.advance(failure=failure)

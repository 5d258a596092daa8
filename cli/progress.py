"""Progress on stderr for the commands: tqdm bars with rate and ETA, and one-line statuses.

The library never prints; it reports through callbacks (``on_progress``, ``on_done``,
``on_start``/``on_result``, ``on_status``) and these helpers draw them. Every bar is off under
``--no-progress`` / ``SIRA_SEEK_NO_PROGRESS=1`` and ``--json`` (see ``options.show_progress``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from tqdm import tqdm

from sira_seek.seek.results import SeekResult

SMOOTHING = 0.1
"""Less jumpy rates than tqdm's 0.3: LLM calls vary a lot in length (a long answer, a cache
hit), and the ETA a reader plans around should not swing with each."""


def progress_bar(*, desc: str, total: int | None, unit: str, enabled: bool, **kw: Any) -> Any:
    """A tqdm bar on stderr; with ``total`` known it shows ``n/total [elapsed<remaining,
    rate]``: the rate as ``unit/s`` or, when an item takes over a second (a CPU model's
    call), ``s/unit``."""
    return tqdm(desc=desc, total=total, unit=unit, disable=not enabled, smoothing=SMOOTHING, **kw)


class StatusLine:
    """One line on stderr, rewritten in place, for phases with no count to show (a Maven
    download, a node booting): the library's ``on_status`` messages, plus the time since the
    first one. Nothing is drawn until a message comes (a node already running sends none)."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None
        self.messages: list[str] = []

    def __call__(self, message: str) -> None:
        self.messages.append(message)
        if not self.enabled:
            return
        if self.bar is None:
            self.bar = tqdm(total=None, bar_format="{desc} [{elapsed}]", desc=message)
        else:
            self.bar.set_description_str(message)  # redraws the line

    def __enter__(self) -> StatusLine:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.close()


class QuestionBar:
    """A bar over questions answered (``eval qa``, the demo's SEEK step) that still reports
    every failure: a failed question prints its own line above the bar, and the bar counts
    them (``failed=N``)."""

    def __init__(self, *, desc: str, total: int | None, enabled: bool) -> None:
        self.bar = progress_bar(desc=desc, total=total, unit="question", enabled=enabled)
        self.failed = 0

    def start(self, to_ask: int, resumed: int) -> None:
        """``run_questions``' ``on_start``: size the bar to the questions still to ask, so
        the rate and ETA do not count the ones a checkpoint already holds."""
        self.bar.reset(total=to_ask)
        if resumed:
            self.bar.set_postfix(resumed=resumed, failed=self.failed)

    def result(self, result: SeekResult) -> None:
        """``run_questions``' ``on_result``: one step; a failure also gets its own line."""
        if result.error:
            self.failed += 1
            self.bar.write(
                f"[{result.id}] FAILED: {result.error}",
                file=sys.stderr,
            )
            self.bar.set_postfix(failed=self.failed, refresh=False)
        self.bar.update(1)

    def __enter__(self) -> QuestionBar:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.bar.close()


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

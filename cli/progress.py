"""Progress on stderr for the commands, one convention for all: bars on a terminal, a few
plain lines otherwise.

The library never prints: a workflow reports through the one ``Progress`` protocol
(``sira_seek.workflows.progress``), which ``WorkflowProgress`` draws for every command; the
node and installer waits report ``on_status`` messages, which ``StatusLine`` draws. Every
display is off under ``--no-progress`` / ``SIRA_SEEK_NO_PROGRESS=1`` and ``--json`` (see
``options.show_progress``). When stderr is a terminal they are tqdm bars (rate, ETA) and
status lines rewritten in place. When it is not (a log file, a pipe, CI), redraws would
fill it with one line per refresh (``node up`` wrote about 30 for a 7-second start), so
the same displays write plain lines instead: one when they start, at most one per
``PLAIN_STEP`` of the total or per ``PLAIN_EVERY_S`` seconds, and one when they end.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm

SMOOTHING = 0.1
"""Less jumpy rates than tqdm's 0.3: LLM calls vary a lot in length (a long answer, a cache
hit), and the ETA a reader plans around should not swing with each."""

PLAIN_STEP = 0.1
"""Without a terminal, a count with a known total writes a line each time it passes another
tenth of it."""
PLAIN_EVERY_S = 30.0
"""Without a terminal, a line at least this many seconds apart (an unknown total, a slow
tenth, a status that keeps changing)."""


def on_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (stderr by default) is a terminal, where redrawing in place works."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def progress_bar(
    *,
    desc: str,
    total: int | None,
    unit: str,
    enabled: bool,
    stream: TextIO | None = None,
    **kw: Any,
) -> Any:
    """A progress display on ``stream`` (stderr): on a terminal a tqdm bar, with ``total``
    known ``n/total [elapsed<remaining, rate]`` (the rate as ``unit/s`` or, when an item
    takes over a second, a CPU model's call, ``s/unit``); elsewhere a ``PlainProgress``
    with the same methods. Disabled, a tqdm that draws nothing."""
    if enabled and not on_terminal(stream):
        return PlainProgress(
            desc=desc, total=total, unit=unit, stream=stream, initial=kw.get("initial", 0)
        )
    return tqdm(
        desc=desc,
        total=total,
        unit=unit,
        disable=not enabled,
        smoothing=SMOOTHING,
        file=stream,
        **kw,
    )


class PlainProgress:
    """The bar's plain-line form (the tqdm methods the commands use): ``desc: started``, then
    ``desc: n/total unit (p%) [elapsed]`` each ``PLAIN_STEP`` of the total or
    ``PLAIN_EVERY_S`` seconds, and at ``close`` ``desc: done, n unit [elapsed, rate]``."""

    def __init__(
        self,
        *,
        desc: str,
        total: int | None,
        unit: str,
        stream: TextIO | None = None,
        initial: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.desc, self.total, self.unit = desc, total, unit
        self.stream = stream
        self.clock = clock
        self.n = self.initial = initial
        self.started = self.last_line = clock()
        self.next_step = self._step_after(initial)
        self.postfix = ""
        self.closed = False
        of = f" of {total} {unit}" if total else ""
        self._line(f"{desc}: started{of}" + (f", {initial} done before" if initial else ""))

    def _line(self, text: str) -> None:
        stream = sys.stderr if self.stream is None else self.stream
        stream.write(text + "\n")
        stream.flush()
        self.last_line = self.clock()

    def _step_after(self, n: int) -> float:
        """The count at which the next tenth of the total is reached (inf: no total)."""
        if not self.total:
            return float("inf")
        step = self.total * PLAIN_STEP
        return (int(n / step) + 1) * step

    def _elapsed(self) -> str:
        return tqdm.format_interval(self.clock() - self.started)

    def update(self, n: int | float = 1) -> None:
        self.n += int(n)
        now = self.clock()
        if self.n >= self.next_step or now - self.last_line >= PLAIN_EVERY_S:
            self.next_step = self._step_after(self.n)
            share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
            of = f"/{self.total}" if self.total else ""
            self._line(
                f"{self.desc}: {self.n}{of} {self.unit}{share} [{self._elapsed()}]{self.postfix}"
            )

    def reset(self, total: int | None = None) -> None:
        self.total, self.n, self.initial = total, 0, 0
        self.next_step = self._step_after(0)

    def set_postfix(self, refresh: bool = True, **values: Any) -> None:
        self.postfix = ", " + ", ".join(f"{k}={v}" for k, v in values.items()) if values else ""

    def set_description_str(self, desc: str, refresh: bool = True) -> None:
        self.desc = desc

    def write(self, text: str, file: TextIO | None = None) -> None:
        self._line(text)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        spent = self.clock() - self.started
        ran = self.n - self.initial  # the rate is this run's, as tqdm's: resumed items took no time
        rate = f", {ran / spent:.1f} {self.unit}/s" if spent > 0 and ran else ""
        self._line(
            f"{self.desc}: done, {self.n} {self.unit} [{self._elapsed()}{rate}]{self.postfix}"
        )

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class StatusLine:
    """One status for phases with no count to show (a Maven download, a node booting): the
    library's ``on_status`` messages, plus the time since the first one. On a terminal one
    line rewritten in place; elsewhere plain lines: the first message, then a message only
    when the phase changes (its words, not its numbers) or ``PLAIN_EVERY_S`` passed, and the
    last one at the end with the time taken. Nothing is written until a message comes (a
    node already running sends none)."""

    def __init__(
        self,
        *,
        enabled: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled = enabled
        self.stream = stream
        self.clock = clock
        self.plain = not on_terminal(stream)
        self.bar: Any = None
        self.messages: list[str] = []
        self.started = self.last_line = 0.0
        self.shown = ""

    def __call__(self, message: str) -> None:
        self.messages.append(message)
        if not self.enabled:
            return
        if self.plain:
            self._plain(message)
        elif self.bar is None:
            self.bar = tqdm(
                total=None, bar_format="{desc} [{elapsed}]", desc=message, file=self.stream
            )
        else:
            self.bar.set_description_str(message)  # redraws the line

    def _plain(self, message: str) -> None:
        now = self.clock()
        if not self.shown:
            self.started = now
        elif _phase(message) == _phase(self.shown) and now - self.last_line < PLAIN_EVERY_S:
            return
        self._line(message, now)

    def _line(self, message: str, now: float, suffix: str = "") -> None:
        stream = sys.stderr if self.stream is None else self.stream
        stream.write(message + suffix + "\n")
        stream.flush()
        self.shown, self.last_line = message, now

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
        if self.enabled and self.plain and self.shown:
            now = self.clock()
            self._line(self.messages[-1], now, f" [{tqdm.format_interval(now - self.started)}]")


def _phase(message: str) -> str:
    """A status message without its numbers: ``waited 3s`` and ``waited 4s`` are one phase."""
    return re.sub(r"\d+(\.\d+)?", "#", message)


class WorkflowProgress:
    """The one display of a workflow's ``Progress`` (``sira_seek.workflows.progress``), for
    every command: a ``progress_bar`` made at ``start`` (``total`` items, ``resumed`` of them
    done before, so the rate and ETA count only this run's), moved by ``advance``. A failed
    item prints its own line above the bar, which counts them (``failed=N``); ``figures``
    show beside the count. Notes (bad lines skipped, notices) are written even when the bar
    is off (``--no-progress``, ``--json``): they are about the input, not the progress.

    ``total`` given here sizes the bar before the workflow does (the demo's question limit);
    the workflow's ``start`` resizes it."""

    def __init__(
        self,
        *,
        desc: str,
        unit: str,
        enabled: bool,
        total: int | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.desc, self.unit, self.enabled, self.stream = desc, unit, enabled, stream
        self.bar: Any = None
        self.failed = self.resumed = 0
        self.figures: dict[str, Any] = {}
        if total is not None:
            self.start(total)

    def start(self, total: int | None, *, resumed: int = 0) -> None:
        self.resumed = resumed
        if self.bar is not None and not self.bar.n and not resumed:
            self.bar.reset(total=total)  # the provisional total, corrected: still one display
            return
        if self.bar is not None:
            self.bar.close()
        self.bar = progress_bar(
            desc=self.desc,
            total=total,
            unit=self.unit,
            enabled=self.enabled,
            stream=self.stream,
            initial=resumed,
        )
        self._postfix()

    def advance(
        self,
        n: int = 1,
        *,
        failure: str | None = None,
        figures: Mapping[str, Any] | None = None,
    ) -> None:
        if self.bar is None:
            self.start(None)
        if figures:
            self.figures.update(figures)
        if failure is not None:
            self.failed += 1
            if self.enabled:
                self.bar.write(failure, file=self._out())
        if failure is not None or figures:
            self._postfix()
        self.bar.update(n)

    def note(self, message: str) -> None:
        if self.enabled and self.bar is not None:
            self.bar.write(message, file=self._out())
        else:
            out = self._out()
            out.write(message + "\n")
            out.flush()

    def _out(self) -> TextIO:
        return sys.stderr if self.stream is None else self.stream

    def _postfix(self) -> None:
        shown = {"resumed": self.resumed} if self.resumed else {}
        shown |= {"failed": self.failed} if self.failed else {}
        if shown or self.figures:
            self.bar.set_postfix(refresh=False, **shown, **self.figures)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> WorkflowProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

"""Waiting for a background install of the CPU model (`make demo` starts one).

Why: compiling llama-cpp-python takes 6-9 minutes on 2 cores. `make demo` starts that install
in the background and runs the demo at once, so BM25 and SIRA with the strong-LLM expansions
are on screen long before the compile ends; only the CPU-model parts wait for it. The two
processes share one plain-text log: the install writes its output there, and the Makefile
appends ``install_cpu_llm: exit N`` when it ends. A log, not a pid, because the waiting
process is not the install's parent (a finished child of the make shell can linger as a
zombie that still answers ``kill -0``), and because a person can ``tail -f`` the same file.
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

EXIT_LINE = re.compile(r"^install_cpu_llm: exit (\d+)\s*$", re.MULTILINE)
"""The line the Makefile appends to the log when the background install ends."""


class CpuInstallOutcome(BaseModel):
    """How a background install ended: ``exit_code`` 0 is success; ``tail`` is the log's end,
    for the message a failed install prints."""

    exit_code: int
    tail: list[str]

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def _last_line(text: str, width: int = 90) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "starting"
    last = lines[-1]
    return last if len(last) <= width else last[: width - 3] + "..."


def wait_for_cpu_install(
    log: Path,
    *,
    on_status: Callable[[str], None] | None = None,
    poll_s: float = 2.0,
    timeout_s: float | None = None,
) -> CpuInstallOutcome | None:
    """Block until the install writing ``log`` ends; ``None`` when no install writes it.

    ``on_status`` hears the log's latest line at every poll (``StatusLine`` adds the time
    waited and redraws it on each call). On the way out the import caches are invalidated,
    so packages the install just put into this interpreter's site-packages (llama_cpp, the
    Gemma package) are importable.
    """
    if not log.exists():
        return None
    started = time.monotonic()
    while True:
        text = log.read_text(errors="replace")
        found = EXIT_LINE.findall(text)
        if found:
            importlib.invalidate_caches()
            body = EXIT_LINE.sub("", text)
            tail = [line for line in body.splitlines() if line.strip()][-15:]
            return CpuInstallOutcome(exit_code=int(found[-1]), tail=tail)
        status = f"waiting for the CPU model install ({log}): {_last_line(text)}"
        if on_status is not None:
            on_status(status)  # every poll, so the status line's clock keeps moving
        if timeout_s is not None and time.monotonic() - started > timeout_s:
            raise TimeoutError(f"the CPU model install writing {log} did not end in {timeout_s}s")
        time.sleep(poll_s)

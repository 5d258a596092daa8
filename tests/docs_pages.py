"""Read the documentation site's pages (docs/, built by MkDocs) the way the tests need them.

Tests that check what the docs promise (JSON keys, runnable examples) read the Markdown source
of a page, or one section of it found by its heading. Lines inside fenced code blocks are never
taken for headings (a ``# comment`` in a Python example is not one).
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"

_HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*(?:\{[^}]*\})?\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def page(relative: str) -> str:
    """The Markdown source of ``docs/<relative>`` (e.g. ``"reference/json-output.md"``)."""
    path = DOCS / relative
    assert path.is_file(), f"docs page {relative} is missing"
    return path.read_text(encoding="utf-8")


def section(relative: str, heading: str) -> str:
    """The text under ``heading`` (any level) in ``docs/<relative>``, up to the next heading
    of the same or a higher level; the heading line itself is left out."""
    lines = page(relative).splitlines(keepends=True)
    start: int | None = None
    level = 0
    in_fence = False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        found = None if in_fence else _HEADING.fullmatch(line.rstrip("\n"))
        if not found:
            continue
        depth, text = len(found.group(1)), found.group(2)
        if start is None:
            if text == heading:
                start, level = number + 1, depth
        elif depth <= level:
            return "".join(lines[start:number])
    assert start is not None, f"docs page {relative} has no heading {heading!r}"
    return "".join(lines[start:])

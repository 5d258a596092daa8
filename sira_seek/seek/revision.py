"""The Update variant's sketch revision (SEEK paper, Appendix A.3), matched by heading.

A.3: after the evidence is filled into its slot, "the LLM is prompted to adjust the current
sketch ... removing redundant or unnecessary slots, inserting new slots where appropriate,
deleting irrelevant content from filled slots, and resolving conflicting information". The
LLM writes the whole sketch again (`parse_revised_sections` reads it) and `revise_sketch`
applies it by heading, never by position:

* a filled heading it writes again stays filled, with the text it wrote under it (an edit:
  content deleted, a conflict resolved), or with its old text when it wrote none;
* a filled heading it leaves out is dropped with its evidence (a redundant slot);
* an open heading it writes again stays open, one it leaves out is dropped, a new one is a new
  open gist (a reworded open heading is both): evidence comes only from retrieval, so text
  written under an open or new heading is not taken (reported in ``ignored_text``);
* the order is the LLM's, so a new gist can go between filled ones; new gists beyond
  ``max_gists`` in all are not added (``over_cap``).

Output with no section at all, or a revision that would leave no gist, is not applied: the
caller keeps the sketch and records why (`revision_problem`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from .output_parsing import clean_evidence, heading_key, strip_reasoning
from .sketch import NO_EVIDENCE, Gist, SteeringSketch, try_parse_sketch


class RevisedSection(NamedTuple):
    """One section of a revised sketch: its heading and the text under it (None: none)."""

    heading: str
    body: str | None


_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_LIST_SECTION = re.compile(r"^\s*[-*•]\s+(.+)$")
_NUMBERING = re.compile(r"^(?:\d{1,2}[.)]\s+)")
_OPEN_MARK = re.compile(r"^\s*<\s*to\s+be\s+filled\s*>\s*$", re.IGNORECASE)


def _heading(text: str) -> str:
    text = text.replace("*", "").replace("`", "").strip(" \t:_")
    return " ".join(_NUMBERING.sub("", text).split())


def _body(lines: Sequence[str]) -> str | None:
    text = " ".join(" ".join(lines).split())
    return text or None


def _markdown_sections(lines: Sequence[str]) -> list[RevisedSection]:
    """``## heading`` lines and the text under each (a ``#`` title line is not a section)."""
    marks = [(i, _MD_HEADING.match(line)) for i, line in enumerate(lines)]
    levels = [len(m.group(1)) for _, m in marks if m is not None and len(m.group(1)) > 1]
    if not levels:
        return []
    level = min(levels)
    sections: list[RevisedSection] = []
    heading: str | None = None
    body: list[str] = []
    for line, mark in zip(lines, (m for _, m in marks), strict=True):
        if mark is not None and len(mark.group(1)) <= level:
            if heading is not None:
                sections.append(RevisedSection(heading, _body(body)))
            heading = _heading(mark.group(2)) if len(mark.group(1)) == level else None
            body = []
        elif heading is not None:
            body.append(line)
    if heading is not None:
        sections.append(RevisedSection(heading, _body(body)))
    return [s for s in sections if s.heading]


def _list_sections(lines: Sequence[str]) -> list[RevisedSection]:
    """``- heading: text`` lines (the few-shot notes' shape), continuation lines appended."""
    sections: list[tuple[str, list[str]]] = []
    for line in lines:
        item = _LIST_SECTION.match(line)
        if item is not None:
            head, sep, rest = item.group(1).partition(":")
            sections.append((_heading(head), [rest] if sep else []))
        elif sections and line.strip():
            sections[-1][1].append(line)
    return [RevisedSection(h, _body(b)) for h, b in sections if h]


def parse_revised_sections(raw: str | None) -> list[RevisedSection]:
    """The sections of a revised sketch in the order written: markdown ``## heading`` blocks,
    else ``- heading: text`` lines, else whatever headings `sketch.try_parse_sketch` finds
    (then without text). Empty when the output holds no section."""
    text = strip_reasoning(raw)
    lines = text.splitlines()
    found = _markdown_sections(lines) or _list_sections(lines)
    if found:
        return found
    if "|" in text and "\n" not in text.strip():
        return [RevisedSection(_heading(h), None) for h in text.split("|") if _heading(h)]
    parsed = try_parse_sketch(text, max_gists=64)
    return [] if parsed is None else [RevisedSection(h, None) for h in parsed.headings]


class SketchRevision(BaseModel):
    """The revised sketch and what changed, for the run's record and notes."""

    model_config = ConfigDict(frozen=True)

    sketch: SteeringSketch
    added: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    dropped_filled: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()
    over_cap: tuple[str, ...] = ()
    ignored_text: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.dropped or self.dropped_filled or self.edited)


def _edited_slot(old: str, body: str | None, slot_chars: int) -> str:
    """The filled slot's text after the revision: the text written under its heading, or the
    old text when none was written (or the open-slot marker, which cannot empty a slot)."""
    if body is None or _OPEN_MARK.match(body):
        return old
    if body.strip() == NO_EVIDENCE:
        return ""
    return clean_evidence(body, max_chars=slot_chars)


def revise_sketch(
    sketch: SteeringSketch,
    sections: Sequence[RevisedSection],
    *,
    max_gists: int,
    slot_chars: int = 700,
) -> SketchRevision | None:
    """Apply a revised sketch to ``sketch`` by heading (see the module); None when nothing
    would be left (no section, or none with a heading)."""
    by_key = {heading_key(g.heading): g for g in sketch.gists}
    unique: list[RevisedSection] = []
    seen: set[str] = set()
    for section in sections:
        key = heading_key(section.heading)
        if key and key not in seen:
            seen.add(key)
            unique.append(section)
    room = max_gists - sum(1 for k in seen if k in by_key)
    listed: list[Gist] = []
    edited: list[str] = []
    over_cap: list[str] = []
    ignored: list[str] = []
    for section in unique:
        old = by_key.get(heading_key(section.heading))
        if old is not None and old.slot is not None:
            slot = _edited_slot(old.slot, section.body, slot_chars)
            if " ".join(slot.split()) != " ".join(old.slot.split()):
                edited.append(old.heading)
            listed.append(old.model_copy(update={"slot": slot}))
            continue
        if section.body is not None and not _OPEN_MARK.match(section.body):
            ignored.append(section.heading)
        if old is not None:
            listed.append(old)
        elif room > 0:
            room -= 1
            listed.append(Gist(heading=section.heading))
        else:
            over_cap.append(section.heading)
    if not listed:
        return None
    kept = {heading_key(g.heading) for g in listed}
    gone = [g for k, g in by_key.items() if k not in kept]
    return SketchRevision(
        sketch=SteeringSketch(title=sketch.title, gists=tuple(listed)),
        added=tuple(g.heading for g in listed if heading_key(g.heading) not in by_key),
        dropped=tuple(g.heading for g in gone if not g.is_filled),
        dropped_filled=tuple(g.heading for g in gone if g.is_filled),
        edited=tuple(edited),
        over_cap=tuple(over_cap),
        ignored_text=tuple(ignored),
    )

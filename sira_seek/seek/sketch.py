"""The SEEK steering sketch as structured data, and a tolerant parser for an LLM's first draft.

The reference implementation keeps the sketch as one markdown page and lets the LLM rewrite all
of it at every step, which lets sections multiply and output grow quadratically. Here the sketch
is a title plus ordered gists whose slots are filled in code, one evidence paragraph at a time;
markdown exists only in `SteeringSketch.render`, for prompts.

`parse_sketch` turns the raw initial-sketch output into that structure. Models wrap the sketch in
reasoning, ``<think>`` blocks, ``<OUTLINE>`` markers, emphasis, numbered lists and end-of-turn
tags; the parser accepts all of these and never raises, because one odd answer must not stop a
batch of questions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

EMPTY_SLOT = "<TO BE FILLED>"
"""How an unfilled slot is shown to the LLM (the reference code's marker)."""

NO_EVIDENCE = "(no evidence found)"
"""How a slot filled with empty text is shown, so it cannot be mistaken for an unfilled one."""

FALLBACK_HEADING = "Evidence"
"""Title and gist of the fallback sketch when no question text is available."""

MAX_HEADING_CHARS = 200
"""Headings longer than this are cut: a runaway line is not a section heading."""

MAX_LINE_CHARS = 1_000
"""Lines are cut to this length before any pattern reads them (a heading is cut to
``MAX_HEADING_CHARS`` anyway), so the work per line is bounded whatever the model wrote and
a degenerate answer parses in time linear in its length."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


class Gist(BaseModel):
    """One section of the sketch: a heading that must not reveal the answer, and its slot.

    ``slot`` is ``None`` until the evidence for this gist has been written.
    """

    model_config = ConfigDict(frozen=True)

    heading: str = Field(min_length=1)
    slot: str | None = None

    @field_validator("heading", mode="before")
    @classmethod
    def _single_line_heading(cls, value: object) -> object:
        # A newline inside a heading would split it into a heading and a slot when rendered.
        return _one_line(value) if isinstance(value, str) else value

    @property
    def is_filled(self) -> bool:
        return self.slot is not None


class SteeringSketch(BaseModel):
    """Title and ordered gists; immutable, so each fill yields a new sketch (easy to checkpoint)."""

    model_config = ConfigDict(frozen=True)

    title: str = Field(min_length=1)
    gists: tuple[Gist, ...] = Field(min_length=1)

    @field_validator("title", mode="before")
    @classmethod
    def _single_line_title(cls, value: object) -> object:
        return _one_line(value) if isinstance(value, str) else value

    @classmethod
    def from_headings(cls, title: str, headings: Sequence[str]) -> SteeringSketch:
        """An unfilled sketch from a title and gist headings."""
        return cls(title=title, gists=tuple(Gist(heading=h) for h in headings))

    @property
    def headings(self) -> tuple[str, ...]:
        return tuple(gist.heading for gist in self.gists)

    @property
    def is_complete(self) -> bool:
        return all(gist.is_filled for gist in self.gists)

    def next_unfilled(self) -> int | None:
        """Index of the first empty slot (the next gist to work on), or ``None`` when complete."""
        return next((i for i, gist in enumerate(self.gists) if not gist.is_filled), None)

    def fill(self, index: int, text: str) -> SteeringSketch:
        """A copy with slot ``index`` (0-based) set to ``text``; other slots are untouched.

        Negative indexes are refused: a caller counting from the end is almost certainly off by
        one, and silently filling the wrong gist would corrupt the sketch.
        """
        if not 0 <= index < len(self.gists):
            raise IndexError(f"gist index {index} out of range 0..{len(self.gists) - 1}")
        gists = list(self.gists)
        gists[index] = gists[index].model_copy(update={"slot": text.strip()})
        return self.model_copy(update={"gists": tuple(gists)})

    def render(self) -> str:
        """Markdown for prompts: ``# title``, then ``## heading`` with the slot text or
        ``<TO BE FILLED>``, in the reference code's layout so its prompts carry over."""
        parts = [f"# {self.title}"]
        for gist in self.gists:
            body = EMPTY_SLOT if gist.slot is None else gist.slot or NO_EVIDENCE
            parts.append(f"## {gist.heading}\n{body}")
        return "\n\n".join(parts)


# --------------------------------------------------------------------------------------------
# Parsing the LLM's initial sketch
# --------------------------------------------------------------------------------------------

_THINK_TAG = re.compile(r"<(/?)think>", re.IGNORECASE)
_OPEN_MARKER = re.compile(r"<\s*(?:outline|sketch|page)\s*>|\[(?:outline|sketch)\]", re.IGNORECASE)
_CLOSE_MARKER = re.compile(r"<\s*/\s*(?:outline|sketch|page)\s*>|\[/(?:outline|sketch)\]", re.I)
# Tag-like tokens: </OUTLINE>, <TO BE FILLED>, </s>, <|im_end|>, <answer> ... (never "a < b").
_TAG = re.compile(r"</?[A-Za-z][\w\- ]*>|<\|[^|<>]*\|>")

_HEADING_LINE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
_LIST_ITEM = re.compile(r"^([ \t]*)(?:\d{1,2}[.)]|[-*+•])[ \t]+(.+)$")
_BOLD_LEAD = re.compile(r"^\*\*(.+?)\*\*(?!\*)(.*)$")
# Written so that no two adjacent quantifiers overlap: long model lines must parse in linear time.
_BOLD_ONLY = re.compile(r"^(?:\*\*|__)(.+?)(?:\*\*|__)[ \t]*(?::[ \t]*)?$")
_TITLE_LINE = re.compile(r"^(?:sketch |page |outline )?title[ \t]*[:：\-–—][ \t]*(.+)$", re.I)
_LABELLED_GIST = re.compile(
    r"^(?:gist|section|step|part|slot|topic)[ \t]*\d{1,2}[ \t]*[:.\-–—)][ \t]*(.*)$", re.I
)
# "1. Intro", "IV. Outcomes"; but not "I. M. Pei" (a roman numeral must precede a word).
_LEADING_NUMBER = re.compile(r"^(?:\d{1,2}[.)]|[IVX]{1,4}\.(?=[ \t]+[^\W\d_]{2}))[ \t]+")
_DESCRIPTION_SPLIT = re.compile(r" [–—-] |: ")  # applied to whitespace-collapsed text
_UNDERSCORES = re.compile(r"_+")

# Headings that label the model's output rather than name a section of the answer page.
_GENERIC_LABELS = frozenset(
    {
        "analysis",
        "final outline",
        "final sketch",
        "outline",
        "page outline",
        "reasoning",
        "reasoning analysis",
        "reasoning process",
        "sketch",
        "steering sketch",
        "thinking",
        "thought process",
    }
)

_MAX_MARKERS = 3
"""Only the last few ``<OUTLINE>`` markers are tried, bounding work on degenerate output."""

_Candidate = tuple[str | None, list[str]]


def _strip_reasoning(raw: str) -> str:
    """Drop ``<think>`` blocks in one linear pass (model output can be long and repetitive).

    A stray ``</think>`` drops everything before it, since a chat template may have opened the
    block before the output began; an unclosed ``<think>`` loses only its tag, because a cut-off
    answer may still hold a usable draft.
    """
    pieces: list[str] = []
    position = 0
    open_end: int | None = None
    for tag in _THINK_TAG.finditer(raw):
        closing = tag.group(1) == "/"
        if not closing and open_end is None:
            pieces.append(raw[position : tag.start()])
            open_end = tag.end()
        elif closing and open_end is not None:
            position, open_end = tag.end(), None
        elif closing:
            pieces, position = [], tag.end()
    pieces.append(raw[open_end if open_end is not None else position :])
    return "\n".join(pieces)


def _segments(text: str) -> list[str]:
    """Regions to try, most specific first: after each ``<OUTLINE>`` marker (last first, as
    reasoning may mention the marker before using it), then the whole text."""
    segments = []
    for marker in reversed(list(_OPEN_MARKER.finditer(text))[-_MAX_MARKERS:]):
        after = text[marker.end() :]
        close = _CLOSE_MARKER.search(after)
        segments.append(after[: close.start()] if close else after)
    segments.append(text)
    return segments


def _drop_emphasis_underscores(run: re.Match[str]) -> str:
    """``__bold__`` and ``_em_`` lose their underscores; ``snake_case`` keeps its own."""
    text, start, end = run.string, run.start(), run.end()
    inside_word = (
        start > 0 and end < len(text) and text[start - 1].isalnum() and text[end].isalnum()
    )
    return run.group() if inside_word else ""


def _clean_heading(text: str) -> str:
    """Plain heading text: no tags, emphasis, numbering or ``Gist 1:`` labels."""
    text = _TAG.sub(" ", text)
    text = text.replace("*", "").replace("`", "")
    text = _UNDERSCORES.sub(_drop_emphasis_underscores, text)
    text = _one_line(text).strip(" \t:：-–—|")
    stripped = _LEADING_NUMBER.sub("", text)
    labelled = _LABELLED_GIST.match(stripped)
    if labelled:
        stripped = labelled.group(1).strip(" \t:：-–—|")
    # "## Gist 1" alone carries no content, but it is still a section: keep the label.
    text = stripped or text
    if len(text) > MAX_HEADING_CHARS:
        text = text[:MAX_HEADING_CHARS].rsplit(" ", 1)[0] or text[:MAX_HEADING_CHARS]
    return text


def _is_generic(heading: str) -> bool:
    return heading.lower().rstrip(".:") in _GENERIC_LABELS


def _lines(segment: str) -> list[str]:
    return [line[:MAX_LINE_CHARS].rstrip() for line in segment.splitlines()]


def _heading_text(match: re.Match[str]) -> str:
    """Heading text without an ATX closing sequence (``## A ##``); ``C#`` keeps its hash."""
    text = match.group(2).rstrip(" \t")
    unclosed = text.rstrip("#")
    return unclosed if unclosed != text and (not unclosed or unclosed[-1] in " \t") else text


def _title_candidate(line: str) -> str | None:
    """The title text if ``line`` looks like one: a heading, ``Title: ..`` or a bold-only line."""
    heading = _HEADING_LINE.match(line)
    if heading:
        return _heading_text(heading)
    stripped = line.strip()
    labelled = _TITLE_LINE.match(stripped.replace("*", ""))
    if labelled:
        return labelled.group(1)
    bold = _BOLD_ONLY.match(stripped)
    return bold.group(1) if bold else None


def _title_before(lines: list[str], stop: int) -> str | None:
    """A title written before the first gist; the nearest candidate wins."""
    for line in reversed(lines[:stop]):
        candidate = _title_candidate(line)
        if candidate is not None:
            title = _clean_heading(candidate)
            if title and not _is_generic(title):
                return title
    return None


def _from_headings(lines: list[str]) -> _Candidate:
    """Markdown headings: a lone top-level heading is the title, the next level down the gists.

    Headings before the title (``### Reasoning Analysis``) and deeper sub-headings are ignored.
    """
    found: list[tuple[int, int, str]] = []
    for number, line in enumerate(lines):
        match = _HEADING_LINE.match(line)
        if match:
            heading = _clean_heading(_heading_text(match))
            if heading and not _is_generic(heading):
                found.append((number, len(match.group(1)), heading))
    if not found:
        return None, []
    top = min(level for _, level, _ in found)
    top_headings = [h for h in found if h[1] == top]
    if len(top_headings) > 1:
        return _title_before(lines, top_headings[0][0]), [h for _, _, h in top_headings]
    title_line, _, title = top_headings[0]
    below = [h for h in found if h[0] > title_line]
    if not below:
        return title, []
    gist_level = min(level for _, level, _ in below)
    return title, [h for _, level, h in below if level == gist_level]


def _from_labels(lines: list[str]) -> _Candidate:
    """Explicitly labelled lines: ``Gist 1: ..``, ``**Section 2:** ..``."""
    gists: list[str] = []
    first = None
    for number, line in enumerate(lines):
        plain = _LEADING_NUMBER.sub("", line.strip().replace("*", "").lstrip("-+• \t"))
        match = _LABELLED_GIST.match(plain)
        if match and match.group(1).strip():
            first = number if first is None else first
            gists.append(_clean_heading(match.group(1)))
    if first is None:
        return None, []
    return _title_before(lines, first), gists


def _list_item_heading(item: str) -> str:
    """The section name in a list item: its bold lead if any, else the text before a dash or
    colon that starts a description ("1. **Anatomy** – particularly ..." gives "Anatomy")."""
    bold = _BOLD_LEAD.match(item.strip())
    if bold:
        return _clean_heading(bold.group(1))
    return _clean_heading(_DESCRIPTION_SPLIT.split(_one_line(item), maxsplit=1)[0].rstrip("."))


def _from_list(lines: list[str]) -> _Candidate:
    """Top-level numbered or bulleted items (nested items are details of their parent)."""
    items: list[tuple[int, int, str]] = []
    for number, line in enumerate(lines):
        match = _LIST_ITEM.match(line.expandtabs(4)[:MAX_LINE_CHARS])
        if match:
            heading = _list_item_heading(match.group(2))
            if heading and not _is_generic(heading):
                items.append((number, len(match.group(1)), heading))
    if not items:
        return None, []
    indent = min(level for _, level, _ in items)
    top = [(n, h) for n, level, h in items if level == indent]
    return _title_before(lines, top[0][0]), [h for _, h in top]


def _from_bold_lines(lines: list[str]) -> _Candidate:
    """Lines that are wholly bold, the first taken as the title when more follow."""
    found = []
    for line in lines:
        match = _BOLD_ONLY.match(line.strip())
        if match:
            heading = _clean_heading(match.group(1))
            if heading and not _is_generic(heading):
                found.append(heading)
    if len(found) > 1:
        return found[0], found[1:]
    return None, found


_STRATEGIES: tuple[Callable[[list[str]], _Candidate], ...] = (
    _from_headings,
    _from_labels,
    _from_list,
    _from_bold_lines,
)


def _dedupe(headings: list[str]) -> list[str]:
    """Drop repeats (case-insensitive), which come from a model looping, keeping the first."""
    seen: set[str] = set()
    unique = []
    for heading in headings:
        key = heading.casefold()
        if heading and key not in seen:
            seen.add(key)
            unique.append(heading)
    return unique


def _fallback_text(question: str | None) -> str:
    cleaned = _one_line(question or "")
    if len(cleaned) > MAX_HEADING_CHARS * 2:
        cleaned = cleaned[: MAX_HEADING_CHARS * 2]
    return cleaned or FALLBACK_HEADING


def _check_bounds(max_gists: int, min_gists: int) -> None:
    if min_gists < 1 or max_gists < min_gists:
        raise ValueError(f"need 1 <= min_gists <= max_gists, got {min_gists}..{max_gists}")


def try_parse_sketch(
    raw: str | None, *, max_gists: int = 8, min_gists: int = 1, question: str | None = None
) -> SteeringSketch | None:
    """Like `parse_sketch`, but ``None`` when nothing parses, so a caller can retry the LLM.

    Raises ``ValueError`` only for impossible bounds (a programming error, not bad model output).
    """
    _check_bounds(max_gists, min_gists)
    # A failed generation may arrive as None; it is just another unparseable answer.
    text = _strip_reasoning(raw or "")
    for segment in _segments(text):
        lines = _lines(segment)
        for strategy in _STRATEGIES:
            title, headings = strategy(lines)
            headings = _dedupe(headings)
            if len(headings) >= min_gists:
                return SteeringSketch.from_headings(
                    title or _fallback_text(question), headings[:max_gists]
                )
    return None


def fallback_sketch(question: str | None = None) -> SteeringSketch:
    """One gist named after the question: SEEK degrades to one retrieval-and-summary step."""
    text = _fallback_text(question)
    return SteeringSketch.from_headings(text, [text])


def parse_sketch(
    raw: str | None, *, max_gists: int = 8, min_gists: int = 1, question: str | None = None
) -> SteeringSketch:
    """Parse an LLM's initial sketch tolerantly; never fails on model output.

    Tried in order, on the text after an ``<OUTLINE>``-style marker and then on all of it (with
    ``<think>`` blocks removed): markdown headings, ``Gist N:`` labels, list items, bold lines.
    The first reading with at least ``min_gists`` gists wins and is cut to ``max_gists``; if none
    does, the result is `fallback_sketch` (the question, or "Evidence", as the only gist).
    """
    sketch = try_parse_sketch(raw, max_gists=max_gists, min_gists=min_gists, question=question)
    return sketch if sketch is not None else fallback_sketch(question)

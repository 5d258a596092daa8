"""The steering sketch model and the tolerant initial-sketch parser.

The fixture check runs over hand-made sketches in the reference code's layout (prose before
``<OUTLINE>``, a heading after ``</OUTLINE>``, emphasis, ragged spacing): every raw sketch in
``fixtures/sketches/outline_*.jsonl`` must give the gists of its cleaned sketch in
``new_outline_*.jsonl``. The reference's own samples are checked in tests/integration.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sira_seek.seek import sketch as sketch_module
from sira_seek.seek.sketch import (
    EMPTY_SLOT,
    MAX_LINE_CHARS,
    NO_EVIDENCE,
    Gist,
    SteeringSketch,
    fallback_sketch,
    parse_sketch,
    try_parse_sketch,
)

# --------------------------------------------------------------------------------------------
# Fixture data: hand-made sketches beside the unit tests (tests/unit/fixtures/sketches). The
# reference code's own samples are checked by tests/integration/test_pager_reference_samples.py.
# --------------------------------------------------------------------------------------------

OUTLINE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "sketches"


@pytest.fixture(scope="module")
def outline_dir() -> Path:
    return OUTLINE_DIR


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _reference_headings(cleaned_page: str) -> tuple[str, list[str]]:
    """Title and gists of a reference cleaned sketch, read independently of the parser."""
    title = re.search(r"^# (.+)$", cleaned_page, re.MULTILINE)
    gists = re.findall(r"^## (.+)$", cleaned_page, re.MULTILINE)
    assert title is not None
    return title.group(1), gists


def _normalise(heading: str) -> str:
    """Compare headings modulo markdown emphasis and spacing, which the parser removes."""
    return " ".join(heading.replace("*", "").split()).casefold()


def test_every_raw_sketch_parses_to_the_reference_gists(outline_dir: Path) -> None:
    cleaned_files = sorted(outline_dir.glob("new_outline_*.jsonl"))
    raw_files = sorted(outline_dir.glob("outline_*.jsonl"))
    assert cleaned_files and raw_files, f"no outline fixtures in {outline_dir}"
    cleaned = {rec["id"]: rec for path in cleaned_files for rec in _read_jsonl(path)}
    raw_records = [rec for path in raw_files for rec in _read_jsonl(path)]
    assert len(raw_records) == 3
    for record in raw_records:
        sketch = parse_sketch(record["init_page"], question=record["question"])
        title, gists = _reference_headings(cleaned[record["id"]]["init_page"])
        assert [_normalise(h) for h in sketch.headings] == [_normalise(h) for h in gists], record[
            "id"
        ]
        assert _normalise(sketch.title) == _normalise(title), record["id"]
        assert not any(g.is_filled for g in sketch.gists)


def test_cleaned_reference_sketches_parse_to_themselves(outline_dir: Path) -> None:
    for path in sorted(outline_dir.glob("new_outline_*.jsonl")):
        for record in _read_jsonl(path):
            _, gists = _reference_headings(record["init_page"])
            parsed = parse_sketch(record["init_page"])
            assert [_normalise(h) for h in parsed.headings] == [_normalise(h) for h in gists]


def test_raw_fixture_with_closing_marker_is_cut_there(outline_dir: Path) -> None:
    """A sketch closed by ``</OUTLINE>``: nothing after it may become a gist, including the
    heading the fixture already has after the marker."""
    records = _read_jsonl(outline_dir / "outline_hand.jsonl")
    closed = [r for r in records if "</OUTLINE>" in r["init_page"]]
    assert closed
    for record in closed:
        extra = record["init_page"] + "\n\n## Appendix after the marker\n"
        headings = parse_sketch(extra).headings
        assert "Appendix after the marker" not in headings
        assert not any("After The Marker" in h for h in headings), headings


# --------------------------------------------------------------------------------------------
# The sketch model
# --------------------------------------------------------------------------------------------


def _sketch() -> SteeringSketch:
    return SteeringSketch.from_headings("Title", ["First gist", "Second gist", "Third gist"])


def test_render_marks_empty_slots_like_the_reference() -> None:
    assert _sketch().render() == (
        "# Title\n\n"
        f"## First gist\n{EMPTY_SLOT}\n\n"
        f"## Second gist\n{EMPTY_SLOT}\n\n"
        f"## Third gist\n{EMPTY_SLOT}"
    )


def test_fill_returns_a_new_sketch_and_leaves_the_original() -> None:
    original = _sketch()
    filled = original.fill(1, "  Evidence for the second gist.\n")
    assert original.gists[1].slot is None
    assert filled.gists[1].slot == "Evidence for the second gist."
    assert filled.headings == original.headings
    assert "## Second gist\nEvidence for the second gist." in filled.render()
    assert filled.render().count(EMPTY_SLOT) == 2


def test_fill_progress_and_completion() -> None:
    sketch = _sketch()
    assert sketch.next_unfilled() == 0
    for index in range(3):
        assert not sketch.is_complete
        sketch = sketch.fill(index, f"text {index}")
    assert sketch.is_complete
    assert sketch.next_unfilled() is None


def test_empty_evidence_is_distinguishable_from_an_unfilled_slot() -> None:
    filled = _sketch().fill(0, "   ")
    assert filled.gists[0].is_filled
    assert f"## First gist\n{NO_EVIDENCE}" in filled.render()


@pytest.mark.parametrize("index", [-1, 3, 10])
def test_fill_rejects_out_of_range_indexes(index: int) -> None:
    with pytest.raises(IndexError):
        _sketch().fill(index, "x")


def test_sketch_is_immutable_and_round_trips_through_json() -> None:
    sketch = _sketch().fill(0, "some evidence")
    with pytest.raises(ValueError):
        sketch.title = "changed"  # type: ignore[misc]
    assert SteeringSketch.model_validate_json(sketch.model_dump_json()) == sketch


def test_headings_are_kept_on_one_line() -> None:
    gist = Gist(heading="two\nlines")
    assert gist.heading == "two lines"
    with pytest.raises(ValueError):
        Gist(heading="  \n ")
    with pytest.raises(ValueError):
        SteeringSketch(title="T", gists=())


# --------------------------------------------------------------------------------------------
# Tolerant parsing of the formats models produce
# --------------------------------------------------------------------------------------------

PARSE_CASES = {
    "reasoning before the marker": (
        "### Reasoning Analysis\n1. **Anatomy** – why\n2. **Mechanism** – how\n---\n"
        "<OUTLINE>\n# Topic\n\n## Background  \n<TO BE FILLED>\n\n## Mechanism\n<TO BE FILLED>",
        "Topic",
        ["Background", "Mechanism"],
    ),
    "think block and end-of-turn tag": (
        "<think>\n# Draft\n## wrong\n</think>\n# Topic\n## A\n<TO BE FILLED>\n## B<|im_end|>",
        "Topic",
        ["A", "B"],
    ),
    "stray closing think tag": (
        "plan: ## not a gist\n</think>\n\n# Topic\n## A\n## B",
        "Topic",
        ["A", "B"],
    ),
    "unclosed think keeps the draft": ("<think>\n# Topic\n## A\n## B", "Topic", ["A", "B"]),
    "emphasis and numbering in headings": (
        "# **The *Scandal* Show**\n## 1. Overview of *Scandal*\n## 2) __Release__ history\n"
        "## IV. Current Status ##",
        "The Scandal Show",
        ["Overview of Scandal", "Release history", "Current Status"],
    ),
    "gist labels in headings": (
        "# Topic\n## Gist 1: Alpha\n## Section 2 - Beta\n## Gist 3",
        "Topic",
        ["Alpha", "Beta", "Gist 3"],
    ),
    "third-level gists under a second-level title": (
        "## Topic\n### First\n#### detail, ignored\n### Second",
        "Topic",
        ["First", "Second"],
    ),
    "headings only, no title": ("### One\n### Two\n### Three</s>", "Q?", ["One", "Two", "Three"]),
    "labelled lines": (
        "**Title:** Topic\n**Gist 1:** The show\n**Gist 2:** The date\n",
        "Topic",
        ["The show", "The date"],
    ),
    "numbered bold list": (
        "**Topic**\n1. **Background of *Scandal***: context\n2. **Release** – dates\n"
        "   - nested detail\n3. Official announcement.",
        "Topic",
        ["Background of Scandal", "Release", "Official announcement"],
    ),
    "bullets": (
        "Here is the sketch:\n- Background of the song\n* Songwriter identity\n+ Release",
        "Q?",
        ["Background of the song", "Songwriter identity", "Release"],
    ),
    "bold lines": (
        "**Topic**\n\n**Section A**\n<TO BE FILLED>\n\n**Section B**\n<TO BE FILLED>",
        "Topic",
        ["Section A", "Section B"],
    ),
    "duplicate headings from a looping model": (
        "# Topic\n## A\n## B\n## A\n## a",
        "Topic",
        ["A", "B"],
    ),
    "marker mentioned in reasoning": (
        "I will answer inside <OUTLINE> tags.\n- reason one\n- reason two\n"
        "<OUTLINE>\n# Real\n## R1\n## R2\n</OUTLINE>\n## after the marker",
        "Real",
        ["R1", "R2"],
    ),
    "C# keeps its hash": ("# Languages\n## Why C#\n## Why Go", "Languages", ["Why C#", "Why Go"]),
    "a name that looks like a numeral": (
        "# Architects\n## I. M. Pei\n## Frank Gehry",
        "Architects",
        ["I. M. Pei", "Frank Gehry"],
    ),
}


@pytest.mark.parametrize("case", list(PARSE_CASES), ids=list(PARSE_CASES))
def test_parse_formats(case: str) -> None:
    raw, title, headings = PARSE_CASES[case]
    sketch = parse_sketch(raw, question="Q?")
    assert sketch.title == title
    assert list(sketch.headings) == headings


def test_gist_count_is_capped() -> None:
    raw = "# Topic\n" + "\n".join(f"## Gist heading {i}\n<TO BE FILLED>" for i in range(20))
    assert parse_sketch(raw).headings == tuple(f"Gist heading {i}" for i in range(8))
    assert len(parse_sketch(raw, max_gists=3).gists) == 3


@pytest.mark.parametrize("raw", ["", "   \n\n", "I cannot help with that.", "<|im_end|>", None])
def test_fallback_uses_the_question(raw: str | None) -> None:
    question = "  who wrote\nthe song?  "
    assert try_parse_sketch(raw) is None
    sketch = parse_sketch(raw, question=question)
    assert sketch == fallback_sketch(question)
    assert sketch.title == "who wrote the song?"
    assert sketch.headings == ("who wrote the song?",)


def test_fallback_without_a_question_is_evidence() -> None:
    sketch = parse_sketch("nothing structured here")
    assert sketch.title == "Evidence"
    assert sketch.headings == ("Evidence",)


def test_min_gists_rejects_thin_sketches() -> None:
    raw = "# Topic\n## Only one"
    assert parse_sketch(raw).headings == ("Only one",)
    assert try_parse_sketch(raw, min_gists=2) is None
    assert parse_sketch(raw, min_gists=2, question="Q?").headings == ("Q?",)


def test_missing_title_falls_back_to_the_question() -> None:
    assert parse_sketch("## A\n## B", question="Q?").title == "Q?"


@pytest.mark.parametrize(("max_gists", "min_gists"), [(0, 1), (3, 0), (2, 3)])
def test_impossible_bounds_are_a_programming_error(max_gists: int, min_gists: int) -> None:
    with pytest.raises(ValueError):
        parse_sketch("# T\n## A", max_gists=max_gists, min_gists=min_gists)


class _CountingPattern:
    """A compiled pattern that records, for every call, how many characters it was handed."""

    def __init__(self, name: str, pattern: re.Pattern[str], log: list[tuple[str, int]]) -> None:
        self._name, self._pattern, self._log = name, pattern, log

    def __getattr__(self, attr: str) -> object:
        method = getattr(self._pattern, attr)
        if attr not in ("match", "fullmatch", "search", "finditer", "findall", "sub", "split"):
            return method

        def call(*args: object, **kwargs: object) -> object:
            text = args[1] if attr == "sub" else args[0]
            self._log.append((self._name, len(str(text))))
            return method(*args, **kwargs)

        return call


WHOLE_TEXT_SCANS = {"_THINK_TAG": 1, "_OPEN_MARKER": 1, "_CLOSE_MARKER": sketch_module._MAX_MARKERS}
"""The patterns that read the whole answer (plain alternations, no adjacent quantifiers), and
how many times each may: everything else reads one line, cut to ``MAX_LINE_CHARS``."""


@pytest.mark.parametrize(
    "raw",
    [
        "<think>" * 20_000 + "#" * 50_000 + " " * 50_000 + "<OUTLINE>" * 5_000,
        "**a**" + " " * 100_000 + "x",  # once quadratic: backtracking between two blank runs
        "1. a" + " " * 100_000 + "b",
        "# a" + "_" * 100_000 + "b",
        "1." + "\t" * 900 + "b",  # a short line whose tabs expand fourfold for the list pattern
        ("**a**" + " " * 2_000 + "x\n") * 50,
        "# T\n" + "## gist\n" * 20_000,
        "<OUTLINE>\n" * 1_000 + "- item\n" * 10_000,
    ],
    ids=[
        "repetition",
        "bold-then-blanks",
        "list-then-blanks",
        "underscores",
        "tabs",
        "many-long-lines",
        "many-headings",
        "many-markers",
    ],
)
def test_degenerate_output_is_parsed_with_work_linear_in_its_length(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounded work, counted: no pattern ever reads more than one (cut) line, except the few
    whole-text scans, each a bounded number of times; and the characters all patterns read
    together grow linearly with the answer. A regex that backtracks on a runaway line, or a
    loop that re-reads earlier lines, breaks one of the three counts."""
    calls: list[tuple[str, int]] = []
    for name, value in list(vars(sketch_module).items()):
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(sketch_module, name, _CountingPattern(name, value, calls))
    sketch = parse_sketch(raw, question="Q?")
    assert 1 <= len(sketch.gists) <= 8
    per_line = [size for name, size in calls if name not in WHOLE_TEXT_SCANS]
    assert per_line and max(per_line) <= MAX_LINE_CHARS
    for name, most in WHOLE_TEXT_SCANS.items():
        assert sum(1 for called, _ in calls if called == name) <= most, name
    assert sum(per_line) <= 20 * len(raw)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

# Arbitrary Unicode mixed with the fragments the parser reacts to, so that the interesting
# branches (markers, think tags, headings, lists, labels) are actually reached.
_MARKDOWNISH = st.lists(
    st.one_of(
        st.text(max_size=20),
        st.sampled_from(["#", "*", "_", "-", "\n", " ", "1.", "<", ">", ":", "`", "\t"]),
        st.sampled_from(["<think>", "</think>", "<OUTLINE>", "</OUTLINE>", "## ", "**", "- "]),
        st.sampled_from(["<TO BE FILLED>", "Gist 1:", "Title:", "IV. ", "\u2028", "\x85", "\xa0"]),
    ),
    max_size=60,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(raw=_MARKDOWNISH, max_gists=st.integers(1, 10), question=st.none() | st.text(max_size=50))
def test_parse_never_raises_and_respects_the_cap(
    raw: str, max_gists: int, question: str | None
) -> None:
    sketch = parse_sketch(raw, max_gists=max_gists, question=question)
    assert 1 <= len(sketch.gists) <= max_gists
    assert sketch.title.strip()
    assert all(g.heading.strip() and "\n" not in g.heading for g in sketch.gists)
    assert all(g.slot is None for g in sketch.gists)


@settings(max_examples=300, deadline=None)
@given(raw=st.text(), min_gists=st.integers(1, 3))
def test_parse_never_raises_on_arbitrary_text(raw: str, min_gists: int) -> None:
    sketch = parse_sketch(raw, min_gists=min_gists, max_gists=8)
    assert 1 <= len(sketch.gists) <= 8


_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 ", min_size=1)


@settings(max_examples=200, deadline=None)
@given(title=_WORDS, words=st.lists(_WORDS, min_size=1, max_size=8, unique_by=str.casefold))
def test_rendered_sketch_parses_back_to_itself(title: str, words: list[str]) -> None:
    headings = [f"About {w}" for w in words]
    if len({" ".join(h.split()).casefold() for h in headings}) < len(headings):
        return
    sketch = SteeringSketch.from_headings(f"Topic {title}", headings)
    assert parse_sketch(sketch.render()) == sketch

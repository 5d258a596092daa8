"""Turning free model text into a sub-query, a slot paragraph or a final answer.

Models wrap short answers in reasoning, labels, quotes, think blocks and end-of-turn tags; each
function here keeps the useful part and never raises, so one odd answer cannot stop a batch.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_UNCLOSED_THINK_END = re.compile(r"^.*</think>", re.IGNORECASE | re.DOTALL)
_SPECIAL_TAG = re.compile(r"<\|[^|<>]*\|>|</?s>|<end_of_turn>|<eos>", re.IGNORECASE)
_QUERY_TAG = re.compile(
    r"<(?:query|sub-?query|search)>(.*?)(?:</(?:query|sub-?query|search)>|$)",
    re.IGNORECASE | re.DOTALL,
)
_LABEL = re.compile(
    r"^(?:[-*#>\d.)\s]*)(?:\*\*)?(?:final\s+)?(?:sub-?query|search\s+query|query|search|"
    r"evidence|answer|final\s+answer)\s*(?:\d+\s*)?(?:\*\*)?\s*[:：\-–—]\s*(?:\*\*)?",
    re.IGNORECASE,
)
_ANSWER_TAG = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.IGNORECASE | re.DOTALL)
_QUOTES = "\"'`“”‘’"


class CleanedSubQuery(BaseModel):
    """The one-line sub-query kept, and whether the raw text needed more than trimming."""

    model_config = ConfigDict(frozen=True)

    text: str
    malformed: bool


def strip_reasoning(raw: str | None) -> str:
    """Text without ``<think>`` blocks or chat-template special tokens."""
    text = _THINK_BLOCK.sub(" ", raw or "")
    text = _UNCLOSED_THINK_END.sub(" ", text)
    return _SPECIAL_TAG.sub(" ", text).strip()


def _unlabel(line: str) -> str:
    line = _LABEL.sub("", line.strip(), count=1)
    return line.replace("**", "").strip().strip(_QUOTES).strip()


def clean_subquery(raw: str | None, *, max_words: int = 24) -> CleanedSubQuery:
    """ONE search line from a model's sub-query output.

    Preference: a ``<query>`` tag, then a line labelled ``Query:``, then the last non-empty
    line (models put reasoning first). Undelimited text of several lines, or a query longer
    than ``max_words`` words (cut), is marked malformed: the caller may retry.
    """
    text = strip_reasoning(raw)
    tagged = [t for t in _QUERY_TAG.findall(text) if t.strip()]
    lines = [line for line in text.splitlines() if line.strip()]
    labelled = [line for line in lines if _LABEL.match(line.strip())]
    if tagged:
        # Reasoning before a delimited query is the asked-for format, not a fault.
        malformed = len(tagged[-1].strip().splitlines()) > 1
        candidate = " ".join(tagged[-1].split())
    elif labelled:
        malformed = False
        candidate = labelled[-1]
    else:
        malformed = len(lines) > 1
        candidate = lines[-1] if lines else ""
    words = _unlabel(candidate).split()
    if len(words) > max_words:
        words, malformed = words[:max_words], True
    cleaned = " ".join(words).rstrip(".")
    return CleanedSubQuery(text=cleaned, malformed=malformed or not cleaned)


def clean_evidence(raw: str | None, *, max_chars: int = 700) -> str:
    """A slot paragraph: no reasoning tags, no ``Evidence:`` label, no markdown headings (a
    heading inside a slot would read as a new gist), cut at a sentence or word boundary."""
    text = strip_reasoning(raw)
    lines = [line.strip() for line in text.splitlines()]
    kept = [line.lstrip("#").strip() for line in lines if line]
    if kept:
        kept[0] = _unlabel(kept[0]) if _LABEL.match(kept[0]) else kept[0]
    text = " ".join(" ".join(kept).split())
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    sentence_end = cut.rfind(". ")
    if sentence_end > max_chars // 2:
        return cut[: sentence_end + 1]
    return cut.rsplit(" ", 1)[0] or cut


def extract_answer(raw: str | None) -> str:
    """The final answer: the last ``<answer>`` block (closed or cut off), else a labelled
    ``Answer:`` line, else the last non-empty line."""
    text = strip_reasoning(raw)
    tagged = [t.strip() for t in _ANSWER_TAG.findall(text) if t.strip()]
    if tagged:
        return " ".join(_unlabel(tagged[-1]).split())
    lines = [line for line in text.splitlines() if line.strip()]
    labelled = [line for line in lines if _LABEL.match(line.strip())]
    chosen = labelled[-1] if labelled else (lines[-1] if lines else "")
    return " ".join(_unlabel(chosen).split()).rstrip(".")


_SEPARATED = re.compile(r"\s*[|;]\s*")


def sketch_markdown(raw: str | None, title: str, *, one_line: bool = False) -> str:
    """A one-line ``A | B | C`` list of headings (what few-shot prompts ask a base model for)
    as the markdown `sketch.parse_sketch` reads; other text is returned unchanged unless
    ``one_line`` says the first line is the whole answer (then it is one heading)."""
    text = strip_reasoning(raw)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or lines[0].lstrip().startswith(("#", "|")):
        return text
    if "|" not in lines[0] and not one_line:
        return text
    headings = [h for h in _SEPARATED.split(lines[0].strip()) if h.strip()]
    return "\n".join([f"# {title}", *(f"## {h}" for h in headings)])


ENOUGH = "ENOUGH"
"""What the plan and no-init variants ask the model to write instead of a sub-query when the
evidence already answers the question."""

_ENOUGH_TEXT = re.compile(r"^[\W_]*enough[\W_]*$", re.IGNORECASE)


def says_enough(sub_query: str) -> bool:
    """Whether a cleaned sub-query is the stop signal (``ENOUGH``, ``[enough].``, ``**Enough**``)
    rather than something to search for."""
    return bool(_ENOUGH_TEXT.match(sub_query.strip()))


_NON_WORD = re.compile(r"[\W_]+")
_NUMBERING = re.compile(r"^\s*(?:(?:section|gist|step)\s*)?(\d{1,2})\s*[.):\-–—]\s*", re.I)


def heading_key(heading: str) -> str:
    """A heading reduced to its words, for matching a heading a model wrote again: case,
    emphasis, punctuation, numbering and spacing do not make it another heading."""
    text = _NUMBERING.sub("", heading.replace("*", "").strip())
    return " ".join(_NON_WORD.sub(" ", text).casefold().split())


_SECTION_MARK = re.compile(r"^\s*(#{1,6}|[-*•])\s+(.*)$")
_SECTION_NUMBER = re.compile(r"^(?:(?:section|gist|step)\s*)?(\d{1,2})(?!\d)", re.IGNORECASE)


def split_sections(raw: str | None, headings: tuple[str, ...]) -> list[str | None]:
    """One text per heading from a reply that fills several sections in one context.

    A section starts at a line ``## heading`` / ``## 2. heading`` (text on the lines after it)
    or ``- heading: text``. It is matched to a gist by its heading (`heading_key`), else by an
    explicit section number; never by where it stands in the reply, so a skipped or reordered
    section cannot push evidence into the wrong slot. Gists with no section get ``None``.
    """
    text = strip_reasoning(raw)
    keys = [heading_key(h) for h in headings]
    found: list[list[str] | None] = [None] * len(headings)
    current: list[str] | None = None
    for line in text.splitlines():
        mark = _SECTION_MARK.match(line)
        start = _section_start(mark.group(1), mark.group(2), keys) if mark else None
        if start is not None:
            index, rest = start
            current = [rest]
            if found[index] is None:
                found[index] = current
            continue
        if mark is not None and mark.group(1).startswith("#"):
            current = None  # an unknown section: its text belongs to no gist
            continue
        if current is not None:
            current.append(line)
    return [None if parts is None else " ".join(" ".join(parts).split()) for parts in found]


def _section_start(mark: str, body: str, keys: list[str]) -> tuple[int, str] | None:
    """(gist index, text after the heading) if ``body`` opens a known section."""
    candidates = [(body, "")] if mark.startswith("#") else []
    if ":" in body:
        label, rest = body.split(":", 1)
        candidates.append((label, rest))
    for label, rest in candidates:
        key = heading_key(label)
        if key and key in keys:
            return keys.index(key), rest
    for label, rest in candidates:
        number = _SECTION_NUMBER.match(label.replace("*", "").strip())
        if number is not None and 0 < int(number.group(1)) <= len(keys):
            return int(number.group(1)) - 1, rest
    return None

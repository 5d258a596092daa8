"""Reading QA files (FlashRAG ``golden_answers`` or PAGER ``answer`` JSONL) into questions."""

from __future__ import annotations

from pathlib import Path

from sira_seek.corpus import BadInputLineError, BadLines, ReadReport, json_object_lines
from sira_seek.metrics.qa import GOLD_KEYS

from .results import QuestionInput

QAFileError = BadInputLineError
"""A QA file line that cannot be used; the one bad-line error every input reader raises
(kept under this name for callers that catch it)."""


def _gold(value: object) -> list[str] | None:
    """Gold answers as strings, or None when the value is not a string, number or list of them."""
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, str | int | float | bool) for v in values):
        return None
    return [str(v) for v in values]


def read_questions(
    path: Path | str,
    *,
    limit: int | None = None,
    strict: bool = True,
    report: ReadReport | None = None,
) -> list[QuestionInput]:
    """Questions in file order; ids default to the line number.

    A line that is not a JSON object, has no question text, has gold answers that are not
    strings, or repeats an id (checkpoints and reports are keyed by id) is bad: strict
    reading raises ``BadInputLineError`` naming every bad line read (up to ``limit``
    questions), ``strict=False`` records them in ``report`` and skips them. A missing gold
    answer is not bad: such questions are reported as no_gold.
    """
    path = Path(path)
    out: list[QuestionInput] = []
    seen: set[str] = set()
    bad = BadLines(path, strict=strict, report=report)
    for number, obj in json_object_lines(path, bad):
        if limit is not None and len(out) >= limit:
            break
        qid = str(obj.get("id", obj.get("_id", number)))
        text = obj.get("question") or obj.get("text")
        gold = _gold(next((obj[k] for k in GOLD_KEYS if k in obj), []))
        problem = None
        if not isinstance(text, str) or not text.strip():
            problem = "missing `question` (or `text`), a non-empty string"
        elif gold is None:
            problem = f"`{'`/`'.join(GOLD_KEYS)}` must be a string or a list of strings"
        elif qid in seen:
            problem = f"duplicate question id {qid!r}"
        if problem is not None:
            bad.reject(number, problem)
            continue
        seen.add(qid)
        out.append(QuestionInput(id=qid, question=str(text), golden_answers=gold or []))
    bad.finish()
    return out

"""Reading QA files (FlashRAG ``golden_answers`` or PAGER ``answer`` JSONL) into questions."""

from __future__ import annotations

import json
from pathlib import Path

from sira_seek.evaluation.qa_metrics import GOLD_KEYS

from .results import QuestionInput


class QAFileError(ValueError):
    """A QA file line that cannot be used; names the file and line."""


def read_questions(path: Path | str, *, limit: int | None = None) -> list[QuestionInput]:
    """Questions in file order; ids default to the line number; duplicate ids are refused
    because checkpoints and reports are keyed by id."""
    path = Path(path)
    out: list[QuestionInput] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            if limit is not None and len(out) >= limit:
                break
            try:
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise ValueError("expected a JSON object")
                raw_gold: object = next((obj[k] for k in GOLD_KEYS if k in obj), [])
                gold = raw_gold if isinstance(raw_gold, list) else [raw_gold]
                qid = str(obj.get("id", obj.get("_id", number)))
                question = QuestionInput(
                    id=qid,
                    question=str(obj.get("question") or obj.get("text") or ""),
                    golden_answers=[str(g) for g in gold],
                )
            except ValueError as exc:
                raise QAFileError(f"{path}, line {number}: {exc}") from None
            if qid in seen:
                raise QAFileError(f"{path}, line {number}: duplicate question id {qid!r}")
            seen.add(qid)
            out.append(question)
    return out

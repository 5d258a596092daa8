"""Read BEIR-layout files (corpus.jsonl, queries.jsonl, qrels TSV), naming every bad line.

Every reader of an input file (corpus, queries, qrels, QA questions, precomputed
expansions) reports a line it cannot use the same way: ``BadRecord`` (file, line, problem).
Evaluation inputs are read strictly by default: a file with a bad line raises
``BadInputLineError`` (after reading it all, naming every bad line), because a silently
skipped query or judgement changes the numbers. With ``strict=False`` bad lines are
collected in a ``ReadReport`` and skipped, which is what ingest does: one broken line never
aborts loading millions of good ones.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from sira_seek.input_errors import InputError, MissingInputFile

logger = logging.getLogger(__name__)


class Document(BaseModel):
    id: str
    title: str = ""
    text: str = ""


class Query(BaseModel):
    id: str
    text: str


class BadRecord(BaseModel):
    """One input line that could not be used: which file, which line (from 1), and why."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}, line {self.line}: {self.reason}"


MAX_LINES_SHOWN = 20
"""How many bad lines an error message lists (all of them are in ``records``)."""


class BadInputLineError(InputError):
    """Lines of an input file that cannot be used, raised by a strict reader once it has read
    the whole file, so one run names every bad line instead of one per attempt.

    An ``InputError``, so the commands map it to exit 2 (bad input); the message has one
    ``FILE, line N: problem`` line per bad line, and ``records`` carries them for programs.
    """

    def __init__(self, records: Sequence[BadRecord]) -> None:
        if not records:
            raise ValueError("BadInputLineError needs at least one bad record")
        self.records = list(records)
        if len(self.records) == 1:
            super().__init__(str(self.records[0]))
            return
        shown = [f"  {r}" for r in self.records[:MAX_LINES_SHOWN]]
        if len(self.records) > MAX_LINES_SHOWN:
            shown.append(f"  ... and {len(self.records) - MAX_LINES_SHOWN} more")
        super().__init__("\n".join([f"{len(self.records)} bad input lines:", *shown]))

    @property
    def record(self) -> BadRecord:
        """The first bad line."""
        return self.records[0]

    @property
    def path(self) -> str:
        return self.record.path

    @property
    def line(self) -> int:
        return self.record.line

    @property
    def problem(self) -> str:
        return self.record.reason


class ReadReport(BaseModel):
    """Bad records seen while reading; filled as the reader is consumed."""

    bad: list[BadRecord] = Field(default_factory=list)


class BadLines:
    """What every reader does with its bad lines, so they all behave alike.

    Each bad line is recorded in the caller's ``ReadReport`` (or a private one). Lenient
    readers log it and go on; strict ones also go on reading, and ``finish`` then raises
    ``BadInputLineError`` listing every bad line of the file.
    """

    def __init__(self, path: Path | str, *, strict: bool, report: ReadReport | None) -> None:
        self.path = str(path)
        self.strict = strict
        self.report = report if report is not None else ReadReport()
        self._first = len(self.report.bad)

    def reject(self, line: int, problem: str) -> None:
        record = BadRecord(path=self.path, line=line, reason=problem)
        self.report.bad.append(record)
        if not self.strict:
            logger.info("skipped %s", record)

    def finish(self) -> None:
        """Raise for this file's bad lines when reading strictly."""
        mine = self.report.bad[self._first :]
        if self.strict and mine:
            raise BadInputLineError(mine)


def json_object_lines(path: Path | str, bad: BadLines) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL file; a line that is not
    UTF-8, not JSON or not a JSON object goes to ``bad``. A byte-order mark on the first
    line is accepted (editors on Windows write one)."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            problem: str
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                problem = "not valid UTF-8"
            except json.JSONDecodeError as exc:
                problem = f"not JSON ({exc.msg})"
            else:
                if isinstance(record, dict):
                    yield lineno, record
                    continue
                problem = "not a JSON object"
            bad.reject(lineno, problem)


def corpus_file(path: Path) -> Path:
    """Accept a BEIR folder or the corpus file itself."""
    path = Path(path)
    if path.is_dir():
        path = path / "corpus.jsonl"
    if not path.exists():
        raise MissingInputFile(f"No corpus at {path} (expected a BEIR folder or corpus.jsonl)")
    return path


def read_corpus(
    path: Path, report: ReadReport | None = None, *, strict: bool = False
) -> Iterator[Document]:
    """Yield documents; records without ``_id`` or with neither title nor text are bad.

    Lenient by default (ingest writes the good records and lists the bad ones).
    """
    file = corpus_file(path)
    bad = BadLines(file, strict=strict, report=report)
    for lineno, rec in json_object_lines(file, bad):
        doc_id = rec.get("_id", rec.get("id"))
        title, text = rec.get("title") or "", rec.get("text") or ""
        problem = None
        if doc_id is None or str(doc_id).strip() == "":
            problem = "missing _id"
        elif not isinstance(title, str) or not isinstance(text, str):
            problem = "title/text must be strings"
        elif not title.strip() and not text.strip():
            problem = "empty text"
        if problem is not None:
            bad.reject(lineno, problem)
            continue
        yield Document(id=str(doc_id), title=title, text=text)
    bad.finish()


def read_queries(
    path: Path, report: ReadReport | None = None, *, strict: bool = True
) -> list[Query]:
    """BEIR queries (``{"_id", "text"}`` per line); a duplicate id is a bad line, since runs
    and qrels are keyed by id."""
    queries: list[Query] = []
    seen: set[str] = set()
    bad = BadLines(path, strict=strict, report=report)
    for lineno, rec in json_object_lines(path, bad):
        qid, text = rec.get("_id", rec.get("id")), rec.get("text")
        problem = None
        if qid is None or str(qid).strip() == "":
            problem = "missing _id"
        elif not isinstance(text, str) or not text.strip():
            problem = "missing `text` (a non-empty string)"
        elif str(qid) in seen:
            problem = f"duplicate query id {str(qid)!r}"
        if problem is not None:
            bad.reject(lineno, problem)
            continue
        seen.add(str(qid))
        queries.append(Query(id=str(qid), text=text))  # type: ignore[arg-type]
    bad.finish()
    return queries


def _qrels_problem(parts: list[str]) -> str | None:
    if len(parts) not in (3, 4):
        return f"expected 3 columns (query-id corpus-id score) or 4 (TREC), got {len(parts)}"
    try:
        int(parts[-1])
    except ValueError:
        return f"relevance {parts[-1]!r} is not an integer"
    return None


def _is_header(parts: list[str]) -> bool:
    """BEIR's header line (``query-id corpus-id score``): a score column that is not a
    number under a first column that names the query id (``query-id``, ``qid``, ``topic``).

    Both are required, so a first data line with a bad relevance value (``q1 d1 yes``) is
    reported as bad rather than silently taken for a header.
    """
    first = parts[0].lower()
    named = any(word in first for word in ("query", "qid", "topic"))
    return len(parts) in (3, 4) and named and _qrels_problem(parts) is not None


def read_qrels(
    path: Path, report: ReadReport | None = None, *, strict: bool = True
) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV (``query-id corpus-id score`` with a header) or TREC 4-column qrels."""
    qrels: dict[str, dict[str, int]] = {}
    bad = BadLines(path, strict=strict, report=report)
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError:
                bad.reject(lineno, "not valid UTF-8")
                continue
            parts = line.split()
            if not parts or (lineno == 1 and _is_header(parts)):
                continue
            problem = _qrels_problem(parts)
            if problem is not None:
                bad.reject(lineno, problem)
                continue
            qid, did, rel = (
                (parts[0], parts[1], parts[2])
                if len(parts) == 3
                else (parts[0], parts[2], parts[3])
            )
            qrels.setdefault(qid, {})[did] = int(rel)
    bad.finish()
    return qrels

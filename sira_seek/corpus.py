"""Read BEIR-layout files (corpus.jsonl, queries.jsonl, qrels TSV) without losing bad lines.

A bad record is reported with its line number and skipped: one broken line never aborts
loading millions of good ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


class Document(BaseModel):
    id: str
    title: str = ""
    text: str = ""


class Query(BaseModel):
    id: str
    text: str


class BadRecord(BaseModel):
    path: str
    line: int
    reason: str


class ReadReport(BaseModel):
    """Bad records seen while reading; filled as the reader is consumed."""

    bad: list[BadRecord] = Field(default_factory=list)


def corpus_file(path: Path) -> Path:
    """Accept a BEIR folder or the corpus file itself."""
    path = Path(path)
    if path.is_dir():
        path = path / "corpus.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"No corpus at {path} (expected a BEIR folder or corpus.jsonl)")
    return path


def _json_lines(path: Path, report: ReadReport) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                report.bad.append(BadRecord(path=str(path), line=lineno, reason="not valid UTF-8"))
                continue
            except json.JSONDecodeError as exc:
                report.bad.append(
                    BadRecord(path=str(path), line=lineno, reason=f"not JSON ({exc.msg})")
                )
                continue
            if not isinstance(record, dict):
                report.bad.append(
                    BadRecord(path=str(path), line=lineno, reason="not a JSON object")
                )
                continue
            yield lineno, record


def read_corpus(path: Path, report: ReadReport | None = None) -> Iterator[Document]:
    """Yield documents; records without ``_id`` or with neither title nor text are skipped."""
    report = report if report is not None else ReadReport()
    file = corpus_file(path)
    for lineno, rec in _json_lines(file, report):
        doc_id = rec.get("_id", rec.get("id"))
        if doc_id is None or str(doc_id).strip() == "":
            report.bad.append(BadRecord(path=str(file), line=lineno, reason="missing _id"))
            continue
        title, text = rec.get("title") or "", rec.get("text") or ""
        if not isinstance(title, str) or not isinstance(text, str):
            report.bad.append(
                BadRecord(path=str(file), line=lineno, reason="title/text must be strings")
            )
            continue
        if not title.strip() and not text.strip():
            report.bad.append(BadRecord(path=str(file), line=lineno, reason="empty text"))
            continue
        yield Document(id=str(doc_id), title=title, text=text)


def read_queries(path: Path, report: ReadReport | None = None) -> list[Query]:
    report = report if report is not None else ReadReport()
    queries: list[Query] = []
    for lineno, rec in _json_lines(Path(path), report):
        qid, text = rec.get("_id", rec.get("id")), rec.get("text")
        if qid is None or not isinstance(text, str) or not text.strip():
            report.bad.append(BadRecord(path=str(path), line=lineno, reason="needs _id and text"))
            continue
        queries.append(Query(id=str(qid), text=text))
    return queries


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV (``query-id corpus-id score`` with a header) or TREC 4-column qrels."""
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if lineno == 1 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            if len(parts) == 3:
                qid, did, rel = parts
            elif len(parts) == 4:
                qid, _, did, rel = parts
            else:
                raise ValueError(f"{path}:{lineno}: expected 3 or 4 columns, got {len(parts)}")
            qrels.setdefault(qid, {})[did] = int(rel)
    return qrels

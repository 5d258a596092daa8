"""Precomputed LLM outputs as first-class input.

Users often run enrichment as a separate GPU batch job; its JSONL output (one
``{"_id": ..., "keywords": [...]}`` or ``{"text": ..., "keywords": [...]}`` per line) then stands
in for a live model, so sync, search and evaluation run the same code downstream of the model.

A line may instead carry ``"completion": "..."``: the text a model wrote for a request without a
JSON schema (the ``hyde`` / ``cot`` baselines' passage or reasoning chain, recorded once, e.g.
``tests/regression/generations-*.jsonl``). ``--llm jsonl:FILE`` then replays it through the
same expander and query construction as the live model's answer, so a run of those baselines is
deterministic and needs no model.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sira_seek.corpus import BadLines, ReadReport, json_object_lines
from sira_seek.input_errors import InputError, MissingInputFile
from sira_seek.llm.client import generate_many_bounded
from sira_seek.llm.errors import PrecomputedMissingError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse


class PrecomputedKeywords:
    """Keyword lists looked up by document/query id or by the exact text they were made from;
    and recorded completions (``completion``), looked up the same way."""

    def __init__(
        self,
        by_id: Mapping[str, Sequence[str]] | None = None,
        by_text: Mapping[str, Sequence[str]] | None = None,
        *,
        source: str = "<memory>",
        completions_by_id: Mapping[str, str] | None = None,
        completions_by_text: Mapping[str, str] | None = None,
    ) -> None:
        self._by_id = {k: tuple(v) for k, v in (by_id or {}).items()}
        self._by_text = {text_key(k): tuple(v) for k, v in (by_text or {}).items()}
        self._completions_by_id = dict(completions_by_id or {})
        self._completions_by_text = {text_key(k): v for k, v in (completions_by_text or {}).items()}
        self.source = source

    @classmethod
    def from_jsonl(
        cls, path: Path | str, *, strict: bool = True, report: ReadReport | None = None
    ) -> PrecomputedKeywords:
        """Load a JSONL file. A line without ``keywords`` (a list of strings) or without
        ``_id``/``text`` is bad: strict loading raises ``BadInputLineError`` naming the file
        and every bad line, because silently skipping them would quietly change results;
        ``strict=False`` records them in ``report`` and skips them. A ``completion`` (a
        string) stands in for ``keywords``."""
        path = Path(path)
        if not path.exists():
            raise MissingInputFile(f"precomputed outputs file {path} does not exist")
        tables = _Tables()
        bad = BadLines(path, strict=strict, report=report)
        for number, record in json_object_lines(path, bad):
            problem = _entry_problem(record)
            if problem is not None:
                bad.reject(number, problem)
                continue
            tables.add(record)
        bad.finish()
        return tables.build(cls, str(path))

    @classmethod
    def from_records(
        cls, records: Iterable[Mapping[str, Any]], *, source: str = "<memory>"
    ) -> PrecomputedKeywords:
        """Entries from records already in memory; a bad one is an ``InputError`` naming it."""
        tables = _Tables()
        for number, record in enumerate(records, start=1):
            problem = _entry_problem(record)
            if problem is not None:
                raise InputError(f"{source}: record {number}: {problem}")
            tables.add(record)
        return tables.build(cls, source)

    def for_id(self, doc_id: str | int) -> tuple[str, ...] | None:
        return self._by_id.get(str(doc_id))

    def for_text(self, text: str) -> tuple[str, ...] | None:
        """By the text the keywords were made from, whitespace runs counted as one space: SIRA
        searches with the query's whitespace collapsed, and a file written from the raw query
        (a newline, a double space) must still match it."""
        return self._by_text.get(text_key(text))

    def lookup(self, key: str) -> tuple[str, ...] | None:
        """By id first, then by text."""
        found = self.for_id(key)
        return found if found is not None else self.for_text(key)

    def completion(self, key: str) -> str | None:
        """The recorded completion for a request's key: by id first, then by text (whitespace
        runs as one space, as ``for_text``)."""
        found = self._completions_by_id.get(str(key))
        return found if found is not None else self._completions_by_text.get(text_key(key))

    def __len__(self) -> int:
        return len(self._by_id) + len(self._by_text.keys() - self._by_id.keys())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.lookup(key) is not None


def text_key(text: str) -> str:
    """How a text is keyed: stripped, every whitespace run one space."""
    return " ".join(text.split())


def _entry_problem(record: Mapping[str, Any]) -> str | None:
    """Why ``record`` cannot be an entry, or None when it can."""
    keywords = record.get("keywords")
    completion = record.get("completion")
    if completion is not None and not isinstance(completion, str):
        return "needs `completion` as a string"
    if completion is None and (
        not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords)
    ):
        return "needs `keywords` as a list of strings (or `completion` as a string)"
    if record.get("_id", record.get("id")) is None and not isinstance(record.get("text"), str):
        return "has neither `_id` nor `text`"
    return None


class _Tables:
    """The four lookups a file's good entries fill (keywords and completions, by id and text)."""

    def __init__(self) -> None:
        self.by_id: dict[str, list[str]] = {}
        self.by_text: dict[str, list[str]] = {}
        self.completions_by_id: dict[str, str] = {}
        self.completions_by_text: dict[str, str] = {}

    def add(self, record: Mapping[str, Any]) -> None:
        doc_id = record.get("_id", record.get("id"))
        text = record.get("text")
        keys = [(str(doc_id), "id")] if doc_id is not None else []
        keys += [(text, "text")] if isinstance(text, str) else []
        for key, kind in keys:
            if isinstance(record.get("keywords"), list):
                (self.by_id if kind == "id" else self.by_text)[key] = list(record["keywords"])
            if isinstance(record.get("completion"), str):
                target = self.completions_by_id if kind == "id" else self.completions_by_text
                target[key] = record["completion"]

    def build(self, cls: type[PrecomputedKeywords], source: str) -> PrecomputedKeywords:
        return cls(
            self.by_id,
            self.by_text,
            source=source,
            completions_by_id=self.completions_by_id,
            completions_by_text=self.completions_by_text,
        )


class PrecomputedLLMClient:
    """``LLMClient`` answering from a ``PrecomputedKeywords`` table (the ``jsonl:`` backend).

    The request's ``lookup_key`` (a document or query id) selects the entry; without one, the
    raw ``prompt`` is looked up as text. Answers are ``{"keywords": [...]}`` like a live model's;
    a request without a JSON schema (a free text: ``hyde``, ``cot``) whose entry has a recorded
    ``completion`` gets that text, as the model wrote it.
    """

    backend = "jsonl"

    def __init__(self, table: PrecomputedKeywords) -> None:
        self.table = table

    async def model_name(self) -> str:
        return Path(self.table.source).name

    async def generate(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        key = request.lookup_key if request.lookup_key is not None else request.prompt
        completion = self.table.completion(key) if key is not None else None
        if completion is not None and request.json_schema is None:
            return LLMResponse(
                text=completion,
                latency_s=time.perf_counter() - started,
                backend=self.backend,
                model=await self.model_name(),
            )
        keywords = self.table.lookup(key) if key is not None else None
        if keywords is None:
            raise PrecomputedMissingError(
                f"{self.table.source} has no precomputed entry for {str(key)[:80]!r}"
            )
        parsed = {"keywords": list(keywords)}
        return LLMResponse(
            text=json.dumps(parsed, ensure_ascii=False),
            parsed=parsed,
            latency_s=time.perf_counter() - started,
            backend=self.backend,
            model=await self.model_name(),
        )

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return await generate_many_bounded(
            self.generate, requests, concurrency or 64, backend=self.backend
        )

    async def aclose(self) -> None:
        return None

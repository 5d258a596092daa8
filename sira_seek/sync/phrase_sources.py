"""Where proposed phrases come from: a live LLM, or a JSONL file from a separate batch job.

Both answer the same question for a batch of documents (phrases and categories, or a failure
with the raw text), so validation, the DF filter and the write path downstream are shared.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from sira_seek.input_errors import MissingInputFile
from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.ledger import LLMUsageLedger
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse, TokenUsage
from sira_seek.llm.structured import parse_json_output
from sira_seek.sira.keyword_parsing import clean_phrases

from .document_prompt import CorpusTask, PromptStyle, document_request, document_schema
from .records import InputSkipped, JsonlEnrichment, PhraseProposal, ProposalFailure
from .work_items import WorkItem

# LLM failures that mean the model cannot answer at all: stop the run (it resumes later) rather
# than mark every remaining document as failed.
FATAL_LLM_ERRORS = frozenset({"unreachable", "unavailable", "model_not_found"})

# None: no input for this document; InputSkipped: input that must not be written. Both skip it.
Outcome = PhraseProposal | ProposalFailure | InputSkipped | None


class LLMUnavailableError(RuntimeError):
    """The LLM cannot answer; the run stops and can be resumed with ``--resume``."""


class PhraseSource(Protocol):
    """Proposes phrases for documents; ``model`` and ``prompt_id`` go into sync metadata."""

    model: str
    prompt_id: str

    def propose(self, items: Sequence[WorkItem]) -> list[Outcome]:
        """One outcome per item, in order."""
        ...

    def close(self) -> None: ...


class JsonlPhraseSource:
    """Phrases precomputed per ``_id`` (``{"_id", "keywords", "categories"?, "source_hash"?}``).

    Only byte offsets are kept in memory (one per id), so a file for millions of documents does
    not have to fit in RAM. A line that does not validate is a failure for its document, with
    the raw line recorded; a record whose ``source_hash`` names other text is stale input.
    """

    def __init__(
        self,
        path: Path,
        *,
        model: str | None = None,
        prompt_id: str = "jsonl",
        max_phrases: int = 10,
        max_categories: int = 5,
    ) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise MissingInputFile(f"enrichment file {self.path} does not exist")
        self.model = model or f"jsonl:{self.path.name}"
        self.prompt_id = prompt_id
        self.max_phrases = max_phrases
        self.max_categories = max_categories
        self.bad_lines: list[int] = []
        self._offsets = self._index_offsets()
        self._handle = self.path.open("rb")

    def _index_offsets(self) -> dict[str, int]:
        offsets: dict[str, int] = {}
        with self.path.open("rb") as handle:
            offset = 0
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    doc_id = _line_id(line)
                    if doc_id is None:
                        self.bad_lines.append(number)
                    else:
                        offsets[doc_id] = offset
                offset += len(line)
        return offsets

    def __len__(self) -> int:
        return len(self._offsets)

    def _line(self, doc_id: str) -> bytes | None:
        offset = self._offsets.get(doc_id)
        if offset is None:
            return None
        self._handle.seek(offset)
        return self._handle.readline()

    def propose(self, items: Sequence[WorkItem]) -> list[Outcome]:
        return [self._one(item) for item in items]

    def _one(self, item: WorkItem) -> Outcome:
        line = self._line(item.doc_id)
        if line is None:
            return None
        raw = line.decode("utf-8", errors="replace").strip()
        try:
            record = JsonlEnrichment.model_validate_json(raw)
        except ValidationError as exc:
            return ProposalFailure(
                doc_id=item.doc_id,
                kind="malformed_output",
                message=f"invalid enrichment record: {exc.errors()[0]['msg']}",
                raw_text=raw,
            )
        if record.source_hash is not None and record.source_hash != item.source_hash:
            return ProposalFailure(
                doc_id=item.doc_id,
                kind="stale_input",
                message="the record was made from other text (source_hash differs)",
                raw_text=raw,
            )
        return PhraseProposal(
            doc_id=item.doc_id,
            phrases=clean_phrases(record.keywords, self.max_phrases),
            categories=clean_phrases(record.categories, self.max_categories),
        )

    def close(self) -> None:
        self._handle.close()


def _line_id(line: bytes) -> str | None:
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    doc_id = record.get("_id", record.get("id"))
    return None if doc_id is None else str(doc_id)


def enrichment_request(
    item: WorkItem,
    *,
    style: PromptStyle,
    max_phrases: int,
    max_categories: int,
    task: CorpusTask,
) -> LLMRequest:
    """The request a live run sends for one document; an offline batch file
    (``batch_requests``) is built from this too, so both ask exactly the same thing."""
    return document_request(
        item.text,
        style=style,
        doc_id=item.doc_id,
        max_phrases=max_phrases,
        max_categories=max_categories,
        task=task,
    )


def proposal_from_answer(
    doc_id: str,
    text: str,
    parsed: Any,
    *,
    schema: dict[str, Any],
    max_phrases: int,
    max_categories: int,
    usage: TokenUsage,
) -> PhraseProposal | ProposalFailure:
    """An LLM's answer as phrases, or a failure carrying the raw text: used only when it is a
    JSON object with a ``keywords`` list of strings. Live runs and batch imports share this, so
    an answer is accepted or refused the same way whichever way it arrived."""
    try:
        value: Any = parsed
        if value is None:
            value = parse_json_output(text, schema)
        keywords = value.get("keywords") if isinstance(value, dict) else None
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            raise ValueError("`keywords` is not a list of strings")
        cats = value.get("categories", [])
        if not isinstance(cats, list):
            raise ValueError("`categories` is not a list")
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        return ProposalFailure(
            doc_id=doc_id, kind="malformed_output", message=str(exc), raw_text=text
        )
    return PhraseProposal(
        doc_id=doc_id,
        phrases=clean_phrases(keywords, max_phrases),
        categories=clean_phrases(cats, max_categories),
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )


class LLMPhraseSource:
    """Asks an ``LLMClient`` for each document, many requests in flight.

    An answer is used only when it is a JSON object with a ``keywords`` list of strings;
    anything else is a failure carrying the raw text, never written to the index.
    """

    def __init__(
        self,
        client: BlockingLLMClient,
        *,
        style: PromptStyle,
        prompt_id: str,
        max_phrases: int = 10,
        max_categories: int = 0,
        concurrency: int = 16,
        ledger: LLMUsageLedger | None = None,
        task: CorpusTask = "generic",
    ) -> None:
        self.client = client
        self.style = style
        self.task: CorpusTask = task
        self.prompt_id = prompt_id
        self.max_phrases = max_phrases
        self.max_categories = max_categories
        self.concurrency = concurrency
        self.ledger = ledger
        self.model = f"{client.client.backend}:{client.model_name()}"
        self._schema = document_schema(max_phrases=max_phrases, max_categories=max_categories)

    def propose(self, items: Sequence[WorkItem]) -> list[Outcome]:
        requests = [
            enrichment_request(
                item,
                style=self.style,
                max_phrases=self.max_phrases,
                max_categories=self.max_categories,
                task=self.task,
            )
            for item in items
        ]
        answers = self.client.generate_many(requests, concurrency=self.concurrency)
        return [self._outcome(item, a) for item, a in zip(items, answers, strict=True)]

    def _outcome(self, item: WorkItem, answer: LLMResponse | LLMError) -> Outcome:
        if isinstance(answer, LLMError):
            if answer.kind in FATAL_LLM_ERRORS:
                raise LLMUnavailableError(
                    f"the LLM cannot answer ({answer.kind}): {answer.message}"
                )
            return ProposalFailure(
                doc_id=item.doc_id,
                kind=answer.kind,
                message=answer.message,
                raw_text=answer.raw_text,
            )
        return proposal_from_answer(
            item.doc_id,
            answer.text,
            answer.parsed,
            schema=self._schema,
            max_phrases=self.max_phrases,
            max_categories=self.max_categories,
            usage=answer.usage,
        )

    def close(self) -> None:
        self.client.close()

"""``sira-sync --from-batch-output FILE``: the answers of an offline batch job as a phrase source.

Reads an OpenAI Batch output file (``python -m vllm.entrypoints.openai.run_batch``, OpenAI's
Batch API, ...) whose requests ``sira-sync export-requests`` wrote. Everything downstream is a
live run's: the DF filter, the ``if_seq_no`` guarded writes, the failures file, the checkpoint.
What this source adds are the batch-specific guards:

- an answer whose ``custom_id`` names another source hash than the document has now was made
  from text the document no longer has: it is skipped (counted as ``changed_since_export``),
  never written; the next export asks again for the new text;
- a line with an error, a non-200 status or an answer that is not the requested JSON is a
  failure for its document, with the raw line recorded, exactly like a live run's bad answer;
- a line whose ``custom_id`` cannot be read is counted in ``bad_lines`` (it names no document).

The model recorded per document is ``openai:`` + the ``model`` the batch answers name, and the
prompt id is the one in the ``custom_id``s, the same pair a live ``--llm openai:URL#MODEL`` run
with the same prompt records: documents imported here are current for such a run, and back.
Only byte offsets are kept in memory (one per line), so the output of a large batch need not fit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sira_seek.input_errors import InputError, MissingInputFile
from sira_seek.llm.batch_files import BatchOutputLine
from sira_seek.llm.errors import ServerError
from sira_seek.llm.openai_http import extract_completion

from .batch_requests import BatchRequestKey, fingerprint_model
from .document_prompt import document_schema
from .phrase_sources import Outcome, proposal_from_answer
from .records import InputSkipped, ProposalFailure
from .work_items import WorkItem

logger = logging.getLogger(__name__)

# prompt_id() marks a prompt that asked for categories with this part.
_CATEGORIES_ASKED = "+categories"


class BatchOutputError(InputError):
    """The file cannot be imported as one run (no usable line, several models or prompts)."""


class BatchOutputPhraseSource:
    """Phrases from a batch output file, looked up by document id and checked against the
    document's current source hash (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        *,
        model: str | None = None,
        prompt_id: str | None = None,
        max_phrases: int = 10,
        max_categories: int = 5,
    ) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise MissingInputFile(f"batch output file {self.path} does not exist")
        self.bad_lines: list[int] = []
        self.lines = 0
        models: set[str] = set()
        prompts: set[str] = set()
        self._offsets: dict[str, list[tuple[int, str]]] = {}
        self._index(models, prompts)
        if not self._offsets:
            raise BatchOutputError(f"{self.path} holds no line written for a sira-sync request")
        if prompt_id is None and len(prompts) > 1:
            raise BatchOutputError(
                f"{self.path} mixes answers to several prompts ({', '.join(sorted(prompts))}); "
                "import one export's answers at a time"
            )
        if model is None and len(models) != 1:
            found = ", ".join(sorted(models)) if models else "none"
            raise BatchOutputError(
                f"the answers in {self.path} name {len(models)} models ({found}); pass "
                "--model-id NAME to say which model to record"
            )
        self.model = model or fingerprint_model(next(iter(models)))
        self.prompt_id = prompt_id or next(iter(prompts))
        self.max_phrases = max_phrases
        # As a live run: categories are kept only when the prompt asked for them.
        self.max_categories = max_categories if _CATEGORIES_ASKED in self.prompt_id else 0
        self._schema = document_schema(max_phrases=max_phrases, max_categories=self.max_categories)
        self._handle = self.path.open("rb")

    def _index(self, models: set[str], prompts: set[str]) -> None:
        with self.path.open("rb") as handle:
            offset = 0
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    self.lines += 1
                    parsed = _read_line(raw)
                    if parsed is None:
                        self.bad_lines.append(number)
                    else:
                        line, key = parsed
                        self._offsets.setdefault(key.doc_id, []).append((offset, key.source_hash))
                        prompts.add(key.prompt_id)
                        body = line.response.body if line.response else None
                        if body and isinstance(body.get("model"), str):
                            models.add(body["model"])
                offset += len(raw)
        if self.bad_lines:
            logger.warning(
                "%d lines of %s name no sira-sync request (line %s...); they are ignored",
                len(self.bad_lines),
                self.path,
                ", ".join(map(str, self.bad_lines[:5])),
            )

    def __len__(self) -> int:
        return len(self._offsets)

    def propose(self, items: Sequence[WorkItem]) -> list[Outcome]:
        return [self._one(item) for item in items]

    def _one(self, item: WorkItem) -> Outcome:
        entries = self._offsets.get(item.doc_id)
        if not entries:
            return None
        offset = next((o for o, digest in entries if digest == item.source_hash), None)
        if offset is None:
            return InputSkipped(doc_id=item.doc_id, reason="changed_since_export")
        self._handle.seek(offset)
        raw = self._handle.readline().decode("utf-8", errors="replace").strip()
        parsed = _read_line(raw.encode("utf-8"))
        assert parsed is not None  # it was read the same way when indexed
        line = parsed[0]
        failure = _failed_request(item.doc_id, line, raw)
        if failure is not None:
            return failure
        assert line.response is not None and line.response.body is not None
        body = line.response.body
        try:
            chat = _is_chat(body)
            text, usage, _finish = extract_completion(body, chat=chat)
        except ServerError as exc:
            return ProposalFailure(
                doc_id=item.doc_id, kind="malformed_output", message=str(exc), raw_text=raw
            )
        return proposal_from_answer(
            item.doc_id,
            text,
            None,
            schema=self._schema,
            max_phrases=self.max_phrases,
            max_categories=self.max_categories,
            usage=usage,
        )

    def close(self) -> None:
        self._handle.close()


def _read_line(raw: bytes) -> tuple[BatchOutputLine, BatchRequestKey] | None:
    try:
        line = BatchOutputLine.model_validate_json(raw)
        return line, BatchRequestKey.parse(line.custom_id)
    except (ValidationError, ValueError):
        return None


def _failed_request(doc_id: str, line: BatchOutputLine, raw: str) -> ProposalFailure | None:
    """The batch job's own verdict on the request: an error object, or a non-200 response."""
    if line.error is not None:
        message = line.error if isinstance(line.error, str) else json.dumps(line.error)
        return ProposalFailure(
            doc_id=doc_id, kind="batch_error", message=message[:500], raw_text=raw
        )
    response = line.response
    if response is None or response.body is None:
        return ProposalFailure(
            doc_id=doc_id, kind="batch_error", message="no response in the line", raw_text=raw
        )
    if response.status_code != 200:
        detail = response.body.get("error", response.body)
        return ProposalFailure(
            doc_id=doc_id,
            kind="batch_error",
            message=f"HTTP {response.status_code}: {json.dumps(detail)[:500]}",
            raw_text=raw,
        )
    return None


def _is_chat(body: dict[str, Any]) -> bool:
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return "message" in choices[0]
    return True  # extract_completion reports the missing choices

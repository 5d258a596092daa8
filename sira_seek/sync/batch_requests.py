"""``sira-sync export-requests``: the enrichment requests of a slice as an OpenAI Batch file.

For machines where the LLM runs offline, as a batch job (``python -m
vllm.entrypoints.openai.run_batch``, OpenAI's or another provider's Batch API), instead of
behind a server a live run calls. The same decision as a live run picks the documents (new,
changed, enriched under another model or prompt, failed before; this worker's slice only), and
the same prompt builder and body builder make each request, so a line's ``body`` is exactly the
JSON a live ``--llm openai:URL#MODEL`` run would POST for that document.

Each line's ``custom_id`` is ``<_id>::<source hash>::<prompt id>``: stable (the same document
text and prompt give the same id on any run, any machine, either engine), and enough for the
import (``batch_output``) to tell an answer made from text the document no longer has, and to
record the prompt id a live run would, without any side file.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sira_seek.backend import SearchBackend
from sira_seek.input_errors import InputError
from sira_seek.llm.batch_files import BATCH_URL_PREFIX, BatchRequestLine
from sira_seek.llm.openai_body import OPENAI_BACKEND, openai_request_body
from sira_seek.llm.structured import StructuredOutputDialect

from .document_prompt import PromptStyle, prompt_id
from .phrase_sources import Outcome, enrichment_request
from .runner import SyncRunner
from .settings import SyncSettings
from .slicing import SliceSpec
from .work_items import WorkItem

logger = logging.getLogger(__name__)

CUSTOM_ID_SEPARATOR = "::"


class BatchRequestKey(BaseModel):
    """What a ``custom_id`` says: which document, from which text, under which prompt."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    source_hash: str
    prompt_id: str

    @property
    def custom_id(self) -> str:
        return CUSTOM_ID_SEPARATOR.join((self.doc_id, self.source_hash, self.prompt_id))

    @classmethod
    def parse(cls, custom_id: str) -> BatchRequestKey:
        """Split from the right: a document id may itself contain the separator, the hash and
        the prompt id never do. ``InputError`` for an id this module did not write."""
        parts = custom_id.rsplit(CUSTOM_ID_SEPARATOR, 2)
        if len(parts) != 3 or not all(parts) or not parts[1].startswith("sha256:"):
            raise InputError(
                f"custom_id {custom_id!r} is not <_id>::<source hash>::<prompt id> "
                "(written by sira-sync export-requests)"
            )
        return cls(doc_id=parts[0], source_hash=parts[1], prompt_id=parts[2])


class ExportReport(BaseModel):
    """What ``export-requests`` wrote, and the fingerprint an import of its answers records."""

    index: str
    slice: str
    out: str
    model: str = Field(description="The model name in every request body.")
    fingerprint_model: str = Field(
        description="The model recorded per document on import (as a live openai: run does)."
    )
    prompt_id: str
    prompt_style: PromptStyle
    url: str = Field(description="The endpoint every line names.")
    requests: int = 0
    new: int = 0
    changed: int = 0
    outdated: int = 0
    failed_before: int = 0
    seconds: float = 0.0


def fingerprint_model(model: str) -> str:
    """The model a live ``--llm openai:URL#MODEL`` run records; a batch import records the same,
    so documents enriched either way are current for the other."""
    return f"{OPENAI_BACKEND}:{model}"


def batch_line(
    item: WorkItem,
    *,
    model: str,
    style: PromptStyle,
    prompt: str,
    max_phrases: int,
    max_categories: int,
    settings: SyncSettings,
    dialect: StructuredOutputDialect = "openai",
) -> BatchRequestLine:
    """The batch line for one work item: the live run's request, as the live client encodes it."""
    request = enrichment_request(
        item,
        style=style,
        max_phrases=max_phrases,
        max_categories=max_categories,
        task=settings.task,
    )
    path, body = openai_request_body(request, model=model, dialect=dialect)
    key = BatchRequestKey(doc_id=item.doc_id, source_hash=item.source_hash, prompt_id=prompt)
    return BatchRequestLine(custom_id=key.custom_id, url=BATCH_URL_PREFIX + path, body=body)


class _DecisionOnly:
    """The fingerprint a run would have, for ``SyncRunner``'s decision; it proposes nothing."""

    def __init__(self, model: str, prompt_id: str) -> None:
        self.model = model
        self.prompt_id = prompt_id

    def propose(self, items: Sequence[WorkItem]) -> list[Outcome]:
        raise RuntimeError("an export decides which documents need enrichment; it asks nothing")

    def close(self) -> None:
        return None


def export_requests(
    backend: SearchBackend,
    index: str,
    out: Path,
    settings: SyncSettings,
    *,
    model: str,
    style: PromptStyle = "chat",
    categories: bool = False,
    slice_spec: SliceSpec | None = None,
    dialect: StructuredOutputDialect = "openai",
) -> ExportReport:
    """Write one batch line per document of the slice that is not current under
    (``openai:<model>``, the prompt id of ``style``/``categories``/task/text budget).

    Written to a temporary name and renamed, so a killed export never leaves a half file that
    a batch job would take for complete. Reads the index only.
    """
    started = time.perf_counter()
    slice_spec = slice_spec or SliceSpec()
    prompt = prompt_id(
        style, categories=categories, text_budget=settings.text_budget_chars, task=settings.task
    )
    max_categories = settings.max_categories if categories else 0
    runner = SyncRunner(
        backend,
        index,
        _DecisionOnly(fingerprint_model(model), prompt),
        settings,
        slice_spec=slice_spec,
        dry_run=True,
    )
    report = ExportReport(
        index=index,
        slice=str(slice_spec),
        out=str(out),
        model=model,
        fingerprint_model=fingerprint_model(model),
        prompt_id=prompt,
        prompt_style=style,
        url=BATCH_URL_PREFIX + ("/chat/completions" if style == "chat" else "/completions"),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for item in runner.iter_pending():
            line = batch_line(
                item,
                model=model,
                style=style,
                prompt=prompt,
                max_phrases=settings.max_phrases,
                max_categories=max_categories,
                settings=settings,
                dialect=dialect,
            )
            handle.write(line.model_dump_json() + "\n")
            report.requests += 1
            state = "failed_before" if item.state == "failed" else item.state
            setattr(report, state, getattr(report, state) + 1)
    partial.replace(out)
    report.seconds = round(time.perf_counter() - started, 3)
    logger.info(
        "sira-sync export: %d requests for %s [slice %s] in %s",
        report.requests,
        index,
        slice_spec,
        out,
    )
    return report

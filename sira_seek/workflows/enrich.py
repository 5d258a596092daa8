"""The enrich workflow: one sira-sync run, validated and wired once.

``sira-sync run`` and ``SiraSeek.enrich`` both build an ``EnrichRequest`` and call ``enrich``
(or ``estimate``): the ``cpu`` LLM shortcut, the page size of an LLM run, the settings and the
phrase source are decided here, so both give the same run for the same options.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sira_seek.backend import SearchBackend
from sira_seek.sync.document_prompt import CorpusTask
from sira_seek.sync.phrase_sources import PhraseSource
from sira_seek.sync.run_report import RunReport
from sira_seek.sync.settings import SyncSettings
from sira_seek.sync.slicing import SliceSpec

from . import validation
from .errors import InvalidInput, classified, validation_message
from .fields import Tau
from .progress import PageProgress, Progress, noticer
from .request_base import WorkflowRequest
from .sira_setup import BackendSource, backend_of

if TYPE_CHECKING:
    from sira_seek.sync.checkpoint import Checkpoint

logger = logging.getLogger(__name__)


class EnrichRequest(WorkflowRequest):
    """One enrichment run: the index, exactly one phrase source, and how to run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: str
    llm: str | None = None
    from_jsonl: Path | None = None
    from_batch_output: Path | None = None
    fields: tuple[str, ...] | str | None = None
    tau: Tau | None = None
    categories: bool = False
    task: CorpusTask | None = None
    prompt_style: Literal["auto", "chat", "fewshot", "completion"] = "auto"
    model_id: str | None = None
    prompt_id: str | None = None
    text_budget: int | None = Field(default=None, ge=1)
    page_size: int | None = Field(default=None, ge=1, le=10_000)
    concurrency: int | None = Field(default=None, ge=1)
    state_dir: Path | None = None
    use_cache: bool = True
    slice: str | None = None
    resume: bool = False
    dry_run: bool = False
    expunge_deletes: bool = False

    @field_validator("index")
    @classmethod
    def _index(cls, value: str) -> str:
        return validation.index_name(value)

    def checked(self) -> EnrichRequest:
        """Exactly one source of phrases, and a slice that parses (before anything runs)."""
        given = [self.from_jsonl, self.from_batch_output, self.llm]
        if sum(x is not None for x in given) != 1:
            raise InvalidInput(
                "give exactly one source of phrases: from_jsonl (a file), llm (a spec) or "
                "from_batch_output (a batch job's answers)",
                field="llm",
            )
        SliceSpec.parse(self.slice)
        return self


class Prepared(BaseModel):
    """What ``prepare`` resolved for a run: its settings, slice and LLM spec."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: SyncSettings
    slice_spec: SliceSpec
    llm: str | None
    source: Any  # PhraseSource (a Protocol, not a pydantic type)
    ledger: Any  # LLMUsageLedger


@contextmanager
def prepare(
    request: EnrichRequest, *, generates: bool, progress: Progress | None = None
) -> Iterator[Prepared]:
    """The run's settings and phrase source, open for the block.

    ``cpu`` as the LLM picks the CPU backend measured faster here; a vLLM server started for
    it serves inside the block and stops after. An LLM run pages by 4x its concurrency, so
    progress and checkpoints move. Its notices go to ``progress`` (else the log).
    """
    from sira_seek.llm.ledger import LLMUsageLedger
    from sira_seek.sync.cpu_default import choose_cpu_llm, cpu_llm, is_cpu_alias

    say = noticer(progress)
    llm, style, concurrency = request.llm, request.prompt_style, request.concurrency
    with ExitStack() as stack:
        if is_cpu_alias(llm):
            choice = choose_cpu_llm(generates=generates)
            say(f"--llm cpu: {choice.reason}")
            llm, _ = stack.enter_context(cpu_llm(choice))
            if choice.start_server:
                say(f"--llm cpu: vLLM serving at {llm}")
            # Both CPU backends serve the base Gemma model, which continues a few-shot prompt.
            style = "fewshot" if style == "auto" else style
            concurrency = concurrency if concurrency is not None else choice.concurrency
        settings = _settings(request, llm=llm, concurrency=concurrency)
        ledger = LLMUsageLedger()
        source = _phrase_source(request, settings, llm=llm, style=style, ledger=ledger, say=say)
        stack.callback(source.close)
        yield Prepared(
            settings=settings,
            slice_spec=SliceSpec.parse(request.slice),
            llm=llm,
            source=source,
            ledger=ledger,
        )


def _settings(request: EnrichRequest, *, llm: str | None, concurrency: int | None) -> SyncSettings:
    page_size = request.page_size
    if page_size is None and llm is not None:
        page_size = 4 * (concurrency or SyncSettings().llm_concurrency)
    values = {
        "fields": request.fields,
        "tau": request.tau,
        "task": request.task,
        "text_budget_chars": request.text_budget,
        "page_size": page_size,
        "llm_concurrency": concurrency,
        "state_dir": request.state_dir,
    }
    try:
        return SyncSettings.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        raise InvalidInput(validation_message(exc)) from None


def _phrase_source(
    request: EnrichRequest,
    settings: SyncSettings,
    *,
    llm: str | None,
    style: str,
    ledger: Any,
    say: Callable[[str], None],
) -> PhraseSource:
    from sira_seek.sync.batch_output import BatchOutputError, BatchOutputPhraseSource
    from sira_seek.sync.source_factory import build_phrase_source

    if request.from_batch_output is not None:
        try:
            batch = BatchOutputPhraseSource(
                request.from_batch_output,
                model=request.model_id,
                prompt_id=request.prompt_id,
                max_phrases=settings.max_phrases,
                max_categories=settings.max_categories,
            )
        except (BatchOutputError, FileNotFoundError) as exc:
            raise InvalidInput(str(exc), field="from_batch_output") from None
        if batch.bad_lines:
            say(
                f"warning: {len(batch.bad_lines)} of {batch.lines} lines of "
                f"{request.from_batch_output} name no sira-sync request (lines "
                f"{', '.join(map(str, batch.bad_lines[:10]))}); ignored"
            )
        return batch
    return build_phrase_source(
        settings,
        from_jsonl=request.from_jsonl,
        llm=llm,
        model_id=request.model_id,
        prompt_id_override=request.prompt_id,
        # One spelling on every front end (`fewshot`); the sync library calls it completion.
        prompt_style="completion" if style == "fewshot" else style,  # type: ignore[arg-type]
        categories=request.categories,
        use_cache=request.use_cache,
        ledger=ledger,
    )


def enrich(
    source: BackendSource,
    request: EnrichRequest,
    *,
    progress: Progress | None = None,
) -> RunReport:
    """Enrich the documents of ``request.index`` that are new or changed; safe to re-run and
    to kill. ``progress`` hears the run's notices, the documents to scan (those a resumed
    run's killed predecessor already wrote as resumed), and each page's scanned documents
    with the enriched and failed counts so far.

    The report says what was written; writes the cluster refused are counted in
    ``report.counts.write_errors`` (the documents keep their previous state).
    """
    from sira_seek.sync.checkpoint import RunStateStore
    from sira_seek.sync.expunge import expunge_deletes, expunge_target
    from sira_seek.sync.runner import SyncRunner

    say = noticer(progress, level=logging.WARNING)
    with classified():
        if request.expunge_deletes and not request.dry_run:
            # A merge takes one concrete index: refuse an alias of several before any LLM work.
            expunge_target(backend_of(source), request.index)
        with prepare(request, generates=not request.dry_run, progress=progress) as run:
            backend = backend_of(source)
            store = RunStateStore(run.settings.state_dir, request.index, run.slice_spec)
            previous = store.load()
            if not (request.resume or request.dry_run) and previous and not previous.finished:
                say(
                    f"note: the run {previous.run_id} on slice {run.slice_spec} did not finish; "
                    "starting a new one (resume it to continue; either way no document is "
                    "done twice)"
                )
            on_page = None
            if progress is not None:
                total, resumed = _scan_size(backend, request, previous)
                progress.start(total, resumed=resumed)
                on_page = PageProgress(progress)
            report = SyncRunner(
                backend,
                request.index,
                run.source,
                run.settings,
                slice_spec=run.slice_spec,
                dry_run=request.dry_run,
                resume=request.resume,
                on_page=on_page,
            ).run()
            if run.ledger.records:
                report.llm_usage = run.ledger.summary()
        if request.expunge_deletes and not report.dry_run:
            say(f"merging away the deleted copies in {request.index} ...")
            report.expunge = expunge_deletes(backend, request.index)
    logger.info(
        "sira-sync %s: %d seen, %d enriched, %d failed",
        request.index,
        report.counts.seen,
        report.counts.enriched,
        report.counts.failed,
    )
    return report


def _scan_size(
    backend: SearchBackend, request: EnrichRequest, previous: Checkpoint | None
) -> tuple[int, int]:
    """The documents in the index, and those a resumed scan leaves out because the killed
    run it continues wrote them (refreshed first: its last writes may not be visible yet)."""
    from sira_seek.sync.resumable_scan import processed_by_run_query

    index = request.index
    total = backend.count(index) if backend.index_exists(index) else 0
    if not (request.resume and previous is not None and not previous.finished and total):
        return total, 0
    backend.refresh(index)
    return total, total - backend.count(index, processed_by_run_query(previous))


def estimate(
    source: BackendSource,
    request: EnrichRequest,
    *,
    sample: int | None = None,
    progress: Progress | None = None,
) -> Any:
    """Measure a sample of the run ``request`` describes: docs, tokens, time (nothing
    written). ``progress`` hears the notices only (a CPU LLM chosen, a server started)."""
    from sira_seek.sync.estimate import estimate_run, sample_for

    with prepare(
        request.model_copy(update={"use_cache": False}), generates=True, progress=progress
    ) as run:
        if sample is None:
            sample = sample_for(run.llm, run.settings.llm_concurrency)
        return estimate_run(
            backend_of(source), request.index, run.source, run.settings, run.slice_spec,
            sample=sample,
        )  # fmt: skip

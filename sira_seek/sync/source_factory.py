"""Where a sira-sync run gets its phrases: a precomputed JSONL file or an LLM spec.

Lives in the library, not in the command line, so ``sira-sync`` and the Python facade
(``sira_seek.connect(...).enrich(...)``) build the very same phrase source from the same inputs.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from sira_seek.input_errors import InputError
from sira_seek.llm.ledger import LLMUsageLedger
from sira_seek.llm.spec import JsonlBackendSpec, LlamaCppBackendSpec, parse_backend_spec

from .document_prompt import PromptStyle, prompt_id
from .phrase_sources import JsonlPhraseSource, LLMPhraseSource, PhraseSource
from .settings import SyncSettings

logger = logging.getLogger(__name__)

PromptStyleChoice = Literal["auto", "chat", "completion"]


def build_phrase_source(
    settings: SyncSettings,
    *,
    from_jsonl: Path | None = None,
    llm: str | None = None,
    model_id: str | None = None,
    prompt_id_override: str | None = None,
    prompt_style: PromptStyleChoice = "auto",
    categories: bool = False,
    use_cache: bool = True,
    ledger: LLMUsageLedger | None = None,
) -> PhraseSource:
    """The phrase source for exactly one of ``from_jsonl`` and ``llm``.

    A ``jsonl:FILE`` LLM spec is the same thing as ``from_jsonl=FILE``. For a live LLM the
    prompt style follows the backend unless chosen: base models served in process continue a
    completion prompt, servers get chat messages.
    """
    if (from_jsonl is None) == (llm is None):
        raise InputError("give exactly one of from_jsonl (a JSONL file) and llm (an LLM spec)")
    spec = parse_backend_spec(llm) if llm is not None else None
    if isinstance(spec, JsonlBackendSpec):
        from_jsonl = spec.path
    if from_jsonl is not None:
        logger.info("sira-sync phrases from %s", from_jsonl)
        return JsonlPhraseSource(
            from_jsonl,
            model=model_id,
            prompt_id=prompt_id_override or "jsonl",
            max_phrases=settings.max_phrases,
            max_categories=settings.max_categories,
        )
    assert spec is not None  # exactly one of the two was given
    from sira_seek.llm.blocking import BlockingLLMClient
    from sira_seek.llm.factory import create_llm_client
    from sira_seek.llm.settings import LLMSettings

    style: PromptStyle
    if prompt_style == "auto":
        style = "completion" if isinstance(spec, LlamaCppBackendSpec) else "chat"
    else:
        style = prompt_style
    ledger = ledger if ledger is not None else LLMUsageLedger()
    logger.info("sira-sync phrases from LLM %s (%s prompt)", llm, style)
    llm_settings = LLMSettings()
    capped = llm_settings.in_flight_cap(settings.llm_concurrency)
    if capped is not None:
        logger.warning(capped)
    client = BlockingLLMClient(
        create_llm_client(spec, settings=llm_settings, ledger=ledger, use_cache=use_cache)
    )
    return LLMPhraseSource(
        client,
        style=style,
        prompt_id=prompt_id_override
        or prompt_id(
            style,
            categories=categories,
            text_budget=settings.text_budget_chars,
            task=settings.task,
        ),
        max_phrases=settings.max_phrases,
        max_categories=settings.max_categories if categories else 0,
        concurrency=settings.llm_concurrency,
        ledger=ledger,
        task=settings.task,
    )

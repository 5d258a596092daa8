"""Proposals from a live LLM (a scripted double): parsing, failures, fatal errors."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import DOCS
from in_memory_backend import InMemoryBackend
from scripted_llm import ScriptedLLMDouble
from sync_doubles import layout_properties

from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.errors import ServerUnreachableError
from sira_seek.llm.ledger import LLMUsageLedger, MeteredLLMClient
from sira_seek.sync.estimate import estimate_run
from sira_seek.sync.phrase_sources import LLMPhraseSource, LLMUnavailableError
from sira_seek.sync.runner import SyncRunner
from sira_seek.sync.settings import SyncSettings
from sira_seek.sync.work_items import WorkItem


def _source(double: ScriptedLLMDouble, **kw) -> LLMPhraseSource:
    ledger = LLMUsageLedger()
    client = BlockingLLMClient(MeteredLLMClient(double, ledger))
    return LLMPhraseSource(client, style="chat", prompt_id="sira-doc-v1-chat", ledger=ledger, **kw)


def _item(doc_id: str) -> WorkItem:
    return WorkItem(doc_id=doc_id, text="some text", source_hash="h", state="new")


def test_answers_become_clean_proposals() -> None:
    double = ScriptedLLMDouble(
        by_prompt={
            "a": json.dumps({"keywords": [" Foo  Bar ", "foo bar", "baz"], "categories": ["X"]})
        }
    )
    source = _source(double, max_categories=2)
    try:
        (proposal,) = source.propose([_item("a")])
    finally:
        source.close()
    assert proposal.phrases == ["Foo Bar", "baz"]
    assert proposal.categories == ["X"]
    assert proposal.prompt_tokens > 0 and source.model == "scripted:scripted-model"
    assert double.calls[0].lookup_key == "a"


def test_malformed_answers_are_failures_with_raw_text() -> None:
    double = ScriptedLLMDouble(
        by_prompt={
            "a": json.dumps({"keywords": "one string"}),
            "b": json.dumps({"words": ["x"]}),
            "c": json.dumps({"keywords": ["fine"]}),
        }
    )
    source = _source(double)
    try:
        a, b, c = source.propose([_item("a"), _item("b"), _item("c")])
    finally:
        source.close()
    assert a.kind == "malformed_output" and "one string" in a.raw_text
    assert b.kind == "malformed_output"
    assert c.phrases == ["fine"]


def test_an_unreachable_server_stops_the_run() -> None:
    double = ScriptedLLMDouble(default=ServerUnreachableError("connection refused"))
    source = _source(double)
    try:
        with pytest.raises(LLMUnavailableError):
            source.propose([_item("a")])
    finally:
        source.close()


def test_llm_run_writes_good_answers_only(tmp_path: Path) -> None:
    index = InMemoryBackend(DOCS, properties=layout_properties())
    answers = {i: json.dumps({"keywords": [f"nick {i}"]}) for i in DOCS}
    answers["d05"] = json.dumps({"keywords": 42})
    source = _source(ScriptedLLMDouble(by_prompt=answers))
    settings = SyncSettings(state_dir=tmp_path)
    try:
        report = SyncRunner(index, "idx", source, settings).run()
    finally:
        source.close()
    assert report.counts.enriched == 19 and report.counts.failed == 1
    assert report.counts.prompt_tokens > 0
    assert "sira_enrichment" not in index.docs["d05"].source
    assert index.docs["d06"].source["sira_enrichment"]["phrases"] == ["nick d06"]
    assert index.docs["d06"].source["sira_sync"]["model"] == "scripted:scripted-model"


def test_estimate_measures_a_sample_and_extrapolates(tmp_path: Path) -> None:
    index = InMemoryBackend(DOCS, properties=layout_properties())
    double = ScriptedLLMDouble(default=json.dumps({"keywords": ["one two three"]}))
    source = _source(double)
    try:
        estimate = estimate_run(
            index, "idx", source, SyncSettings(state_dir=tmp_path), _slice(), sample=4
        )
    finally:
        source.close()
    assert estimate.docs_to_enrich == 20 and estimate.sample_docs == 4
    assert len(double.calls) == 4 and index.bulk_calls == 0
    assert estimate.expected_completion_tokens == round(estimate.completion_tokens_per_doc * 20)
    assert estimate.completion_tokens_per_doc > 0


def _slice():
    from sira_seek.sync.slicing import SliceSpec

    return SliceSpec()


def test_concurrency_above_the_clients_in_flight_cap_is_said_not_silent(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from sira_seek.llm.settings import LLMSettings
    from sira_seek.sync.source_factory import build_phrase_source

    monkeypatch.setenv("SIRA_SEEK_LLM_MAX_IN_FLIGHT", "8")
    note = LLMSettings().in_flight_cap(16)
    assert note is not None and "16" in note and "SIRA_SEEK_LLM_MAX_IN_FLIGHT=8" in note
    assert LLMSettings().in_flight_cap(8) is None
    spec = "openai:http://127.0.0.1:9/v1#m"  # built lazily: nothing is contacted
    with caplog.at_level(logging.WARNING, logger="sira_seek.sync.source_factory"):
        build_phrase_source(SyncSettings(llm_concurrency=8), llm=spec, use_cache=False)
        assert not caplog.records
        build_phrase_source(SyncSettings(llm_concurrency=16), llm=spec, use_cache=False)
    assert [r.getMessage() for r in caplog.records] == [note]

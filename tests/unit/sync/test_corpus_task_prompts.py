"""Task-aware corpus prompts (`sira-sync --task`): the paper's claim / argument / duplicate
variants beside the generic one."""

from __future__ import annotations

import pytest
from scripted_llm import ScriptedLLMDouble

from sira_seek.llm.blocking import BlockingLLMClient
from sira_seek.llm.ledger import LLMUsageLedger, MeteredLLMClient
from sira_seek.sync.document_prompt import (
    CORPUS_TASKS,
    chat_messages,
    completion_prompt,
    document_request,
    prompt_id,
)
from sira_seek.sync.phrase_sources import LLMPhraseSource
from sira_seek.sync.settings import SyncSettings
from sira_seek.sync.work_items import WorkItem

TEXT = "Aspirin\nAcetylsalicylic acid lowers the risk of a second heart attack."


def test_generic_prompt_ids_are_unchanged_so_old_enrichment_stays_current() -> None:
    assert prompt_id("chat") == "sira-doc-v1-chat-4000c"
    assert prompt_id("completion", categories=True) == "sira-doc-v1-completion+categories-4000c"
    assert prompt_id("chat", task="generic") == prompt_id("chat")


def test_every_task_has_its_own_prompt_id() -> None:
    ids = {prompt_id("chat", task=t) for t in CORPUS_TASKS}
    assert len(ids) == len(CORPUS_TASKS)
    assert prompt_id("completion", task="claim") == "sira-doc-v1-claim-completion-4000c"


@pytest.mark.parametrize(
    ("task", "marker"),
    [
        ("claim", "verifies claims"),
        ("argument", "counterargument"),
        ("duplicate", "duplicate questions"),
    ],
)
def test_each_task_changes_rules_and_example_in_both_forms(task: str, marker: str) -> None:
    generic = completion_prompt(TEXT, max_phrases=10, max_categories=0)
    prompt = completion_prompt(TEXT, max_phrases=10, max_categories=0, task=task)  # type: ignore[arg-type]
    assert marker in prompt and marker not in generic
    assert "Eiffel" in generic and "Eiffel" not in prompt  # the task's own worked example
    assert prompt.endswith(
        "Document: Aspirin Acetylsalicylic acid lowers the risk of a second heart attack.\nJSON: "
    )
    system, example, answer, user = chat_messages(
        TEXT,
        max_phrases=7,
        max_categories=2,
        task=task,  # type: ignore[arg-type]
    )
    assert marker in system.content and "At most 7 phrases" in system.content
    assert "categories" in system.content
    assert "Eiffel" not in example.content and user.content == TEXT
    assert '"keywords"' in answer.content


def test_claim_rules_forbid_verdict_words() -> None:
    (system, *_) = chat_messages(TEXT, max_phrases=10, max_categories=0, task="claim")
    assert "Never give verdict words" in system.content


def test_the_task_reaches_every_request_of_a_sync_source() -> None:
    double = ScriptedLLMDouble(default='{"keywords": ["heart attack prevention"]}')
    ledger = LLMUsageLedger()
    source = LLMPhraseSource(
        BlockingLLMClient(MeteredLLMClient(double, ledger)),
        style="completion",
        prompt_id=prompt_id("completion", task="duplicate"),
        task="duplicate",
    )
    try:
        (proposal,) = source.propose(
            [WorkItem(doc_id="q1", text=TEXT, source_hash="h", state="new")]
        )
    finally:
        source.close()
    assert proposal.phrases == ["heart attack prevention"]
    assert "duplicate questions" in (double.calls[0].prompt or "")
    expected = document_request(TEXT, style="completion", doc_id="q1", task="duplicate")
    assert double.calls[0].prompt == expected.prompt


def test_settings_read_the_task_and_refuse_unknown_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIRA_SEEK_SYNC_TASK", "argument")
    assert SyncSettings().task == "argument"
    with pytest.raises(ValueError, match="task"):
        SyncSettings(task="poetry")  # type: ignore[arg-type]

"""Pure pieces of sira-sync: source hashing, document text, slicing, freshness, prompts."""

from __future__ import annotations

import pytest

from sira_seek.sync.document_prompt import document_request, prompt_id
from sira_seek.sync.freshness import doc_state
from sira_seek.sync.records import EnrichmentFingerprint, SyncMetadata
from sira_seek.sync.slicing import SliceSpec
from sira_seek.sync.source_text import document_text, source_hash

FP = EnrichmentFingerprint(model="m", prompt_id="p", enrichment_version=1)


def test_source_hash_covers_source_fields_only() -> None:
    base = {"title": "T", "text": "body", "sira_sync": {"status": "enriched"}}
    h = source_hash(base, ["title", "text"])
    assert h.startswith("sha256:")
    assert source_hash({**base, "sira_enrichment": {"phrases": ["x"]}}, ["title", "text"]) == h
    assert source_hash({**base, "text": "body "}, ["title", "text"]) != h
    assert source_hash(base, ["text", "title"]) == h  # canonical: field order does not matter
    assert source_hash(base, ["title"]) != h


def test_source_hash_reads_dotted_fields() -> None:
    nested = {"meta": {"body": "x"}}
    assert source_hash(nested, ["meta.body"]) == source_hash({"meta.body": "x"}, ["meta.body"])


def test_document_text_is_cut_to_budget_at_a_word() -> None:
    text = document_text({"title": "Title", "text": "word " * 2000}, ["title", "text"], 300)
    assert text.startswith("Title\nword")
    assert len(text) <= 300 and text.endswith("word")


def test_slices_partition_ids_exactly() -> None:
    ids = [f"doc-{i}" for i in range(2000)]
    slices = [SliceSpec.parse(f"{i}/3") for i in range(3)]
    owners = [[s for s in slices if s.owns(i)] for i in ids]
    assert all(len(o) == 1 for o in owners)
    sizes = [sum(s.owns(i) for i in ids) for s in slices]
    assert min(sizes) > 550  # roughly even
    assert SliceSpec.parse(None).owns("anything")


@pytest.mark.parametrize("bad", ["2/2", "1-2", "a/b", "0/0"])
def test_bad_slice_specs_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        SliceSpec.parse(bad)


def test_doc_state() -> None:
    meta = SyncMetadata(
        source_hash="h", model="m", prompt_id="p", enrichment_version=1, status="enriched"
    )
    assert doc_state(None, "h", FP) == "new"
    assert doc_state(meta, "h", FP) == "current"
    assert doc_state(meta, "other", FP) == "changed"
    assert doc_state(meta.model_copy(update={"prompt_id": "p2"}), "h", FP) == "outdated"
    assert doc_state(meta.model_copy(update={"enrichment_version": 2}), "h", FP) == "outdated"
    assert doc_state(meta.model_copy(update={"status": "failed"}), "h", FP) == "failed"
    assert doc_state(meta.model_copy(update={"status": "failed"}), "x", FP) == "changed"


def test_document_request_forms() -> None:
    chat = document_request("Some text", style="chat", doc_id="d1", max_categories=3)
    assert chat.messages and chat.messages[-1].content == "Some text"
    assert chat.lookup_key == "d1"
    assert chat.json_schema and "categories" in chat.json_schema["properties"]
    completion = document_request("Some  text", style="completion", doc_id="d1")
    assert completion.prompt and completion.prompt.endswith("Document: Some text\nJSON: ")
    assert completion.json_schema["properties"]["keywords"]["maxItems"] == 10
    assert prompt_id("chat") != prompt_id("completion") != prompt_id("completion", categories=True)
    assert prompt_id("chat", text_budget=1500) == "sira-doc-v1-chat-1500c"

"""Which enrichment layout sira-sync gives an index, and where its raw-corpus DF comes from."""

from __future__ import annotations

from in_memory_backend import InMemoryBackend, default_properties

from sira_seek.sync.mapping import enrichment_properties, ensure_enrichment_mapping

DOCS = {"1": {"title": "Danube", "text": "A river."}}


def test_fresh_index_gets_the_default_layout_and_raw_df_from_source_fields() -> None:
    backend = InMemoryBackend(DOCS, properties=default_properties())
    layout = ensure_enrichment_mapping(backend, "idx", ["title", "text"])
    assert layout.enrichment_layout == "in_contents_categories"
    phrases = backend.get_mapping("idx")["idx"]["mappings"]["properties"]["sira_enrichment"]
    assert phrases["properties"]["phrases"]["copy_to"] == ["contents"]
    # contents will hold enrichment: DF must not count it, so the source fields give DF
    assert layout.df_unigram_fields == ["title", "text"] and layout.df_shingle_fields == []


def test_index_enriched_with_the_separate_field_keeps_it() -> None:
    props = default_properties() | enrichment_properties("separate_field")
    backend = InMemoryBackend(DOCS, properties=props)
    layout = ensure_enrichment_mapping(backend, "idx", ["title", "text"])
    assert layout.enrichment_layout == "separate_field" and layout.added_fields == []
    assert layout.df_unigram_fields == ["contents"]
    live = backend.get_mapping("idx")["idx"]["mappings"]["properties"]["sira_enrichment"]
    assert "copy_to" not in live["properties"]["phrases"]


def test_index_without_contents_gets_the_separate_field() -> None:
    props = {"body": {"type": "text", "analyzer": "sira_text"}}
    backend = InMemoryBackend(DOCS, properties=props)
    layout = ensure_enrichment_mapping(backend, "idx", ["body"])
    assert layout.enrichment_layout == "separate_field"
    assert layout.df_unigram_fields == ["body"]

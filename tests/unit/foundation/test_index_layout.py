from __future__ import annotations

from sira_seek.backend import Capabilities
from sira_seek.index_layout import corpus_index_body


def test_english_layout_when_cluster_has_analysis_common() -> None:
    body = corpus_index_body(Capabilities(english_analyzer=True), shards=3, replicas=1)
    analysis = body["settings"]["analysis"]
    assert analysis["analyzer"]["sira_text"]["filter"][-1] == "sira_stem"
    assert body["settings"]["index"]["number_of_shards"] == 3
    assert body["settings"]["index"]["number_of_replicas"] == 1
    assert body["mappings"]["_meta"]["sira_seek"]["analysis"] == "english"


def test_basic_layout_uses_only_core_components() -> None:
    body = corpus_index_body(Capabilities(english_analyzer=False))
    filters = {f["type"] for f in body["settings"]["analysis"]["filter"].values()}
    assert filters <= {"stop", "shingle"}
    assert "sira_stem" not in body["settings"]["analysis"]["analyzer"]["sira_text"]["filter"]


def test_enrichment_fields_sit_beside_source_fields() -> None:
    props = corpus_index_body(Capabilities())["mappings"]["properties"]
    assert props["title"]["copy_to"] == "contents" and props["text"]["copy_to"] == "contents"
    phrases = props["sira_enrichment"]["properties"]["phrases"]
    assert phrases["position_increment_gap"] >= 50  # no window across two phrases
    assert props["sira_enrichment"]["properties"]["categories"]["type"] == "keyword"
    assert set(props["sira_sync"]["properties"]) >= {"source_hash", "model", "prompt_id"}
    assert "_comment" not in props

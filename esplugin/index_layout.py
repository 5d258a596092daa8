"""Build index bodies from the JSON in ``mappings/``, adapted to the cluster's abilities."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

from sira_seek.backend import Capabilities


def load_mapping_file(name: str) -> dict[str, Any]:
    text = resources.files("sira_seek.mappings").joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    data.pop("_comment", None)
    return data


def analysis_variant(caps: Capabilities) -> str:
    """``english`` (stemming) when analysis-common is there, else ``basic``."""
    return "english" if caps.english_analyzer else "basic"


def corpus_index_body(caps: Capabilities, *, shards: int = 1, replicas: int = 0) -> dict[str, Any]:
    """Settings and mappings for an index created by ``ingest``: source fields + enrichment."""
    body = copy.deepcopy(load_mapping_file("corpus_index.json"))
    index_settings = body["settings"]["index"]
    index_settings["number_of_shards"] = shards
    index_settings["number_of_replicas"] = replicas
    body["settings"]["analysis"] = load_mapping_file(f"analysis-{analysis_variant(caps)}.json")
    body["mappings"]["_meta"] = {"sira_seek": {"analysis": analysis_variant(caps), "layout": 1}}
    body["mappings"]["properties"].update(load_mapping_file("enrichment_fields.json"))
    return body

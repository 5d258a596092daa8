"""Build index bodies from the JSON in ``mappings/``, adapted to the cluster's abilities."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

from sira_seek.backend import Capabilities
from sira_seek.input_errors import InputError


def load_mapping_file(name: str) -> dict[str, Any]:
    text = resources.files("sira_seek.mappings").joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    data.pop("_comment", None)
    return data


def analysis_variant(caps: Capabilities) -> str:
    """``english`` (stemming) when analysis-common is there, else ``basic``."""
    return "english" if caps.english_analyzer else "basic"


def enrichment_layouts() -> dict[str, Any]:
    """``mappings/enrichment_layouts.json``: the default layout's name and every layout."""
    return load_mapping_file("enrichment_layouts.json")


def enrichment_field_properties(layout: str | None = None) -> dict[str, Any]:
    """``sira_enrichment`` and ``sira_sync`` properties for ``layout`` (default: the one
    mappings/enrichment_layouts.json names): enrichment_fields.json plus the layout's copy_to."""
    layouts = enrichment_layouts()
    name = layout or str(layouts["default"])
    if name not in layouts["layouts"]:
        raise InputError(f"unknown enrichment layout {name!r}: {sorted(layouts['layouts'])}")
    props = copy.deepcopy(load_mapping_file("enrichment_fields.json"))
    fields = props["sira_enrichment"]["properties"]
    for field, targets in layouts["layouts"][name]["copy_to"].items():
        fields[field]["copy_to"] = list(targets)
    return props


def corpus_index_body(
    caps: Capabilities, *, shards: int = 1, replicas: int = 0, enrichment_layout: str | None = None
) -> dict[str, Any]:
    """Settings and mappings for an index created by ``ingest``: source fields + enrichment."""
    body = copy.deepcopy(load_mapping_file("corpus_index.json"))
    index_settings = body["settings"]["index"]
    index_settings["number_of_shards"] = shards
    index_settings["number_of_replicas"] = replicas
    body["settings"]["analysis"] = load_mapping_file(f"analysis-{analysis_variant(caps)}.json")
    layouts = enrichment_layouts()
    name = enrichment_layout or str(layouts["default"])
    body["mappings"]["_meta"] = {
        "sira_seek": {
            "analysis": analysis_variant(caps),
            "layout": 1,
            "enrichment_layout": name,
            "enrichment_scoring": layouts["layouts"][name]["scoring"],
        }
    }
    body["mappings"]["properties"].update(enrichment_field_properties(name))
    return body

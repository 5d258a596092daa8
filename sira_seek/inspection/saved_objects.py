"""Saved objects (NDJSON) that put the query log on screen in Kibana or OpenSearch Dashboards.

Aggregation-based ("legacy") visualizations are used on purpose: both Kibana 8 and OpenSearch
Dashboards (a Kibana 7.10 fork) import them, so one generator serves both products. Import via
Stack Management / Dashboards Management > Saved objects > Import, or the
``_import`` API (``api/saved_objects/_import``).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from .query_log import DEFAULT_PREFIX

Product = Literal["kibana", "opensearch-dashboards"]
INDEX_REF = "kibanaSavedObjectMeta.searchSourceJSON.index"

# Every log field a visualization or search reads; tests check each exists in the log mapping.
REFERENCED_FIELDS = (
    "@timestamp",
    "latency_ms.total",
    "latency_ms.llm",
    "latency_ms.engine",
    "acceptance_rate",
    "dropped_terms",
    "kept_terms",
    "no_kept_expansion",
    "query.raw",
    "kind",
    "method",
    "llm.tokens_out",
)


def _search_source(query: str = "", with_index: bool = True) -> str:
    source: dict[str, Any] = {"query": {"query": query, "language": "kuery"}, "filter": []}
    if with_index:
        source["indexRefName"] = INDEX_REF
    return json.dumps(source)


def _versions(product: Product, kind: str) -> dict[str, Any]:
    if product == "kibana":
        return {"coreMigrationVersion": "8.8.0"}
    return {"migrationVersion": {kind: "7.10.0"}}


def _visualization(
    product: Product,
    obj_id: str,
    pattern_id: str,
    title: str,
    vis_type: str,
    aggs: list[dict[str, Any]],
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    vis_state = {"title": title, "type": vis_type, "params": params or {}, "aggs": aggs}
    return {
        "type": "visualization",
        "id": obj_id,
        "attributes": {
            "title": title,
            "visState": json.dumps(vis_state),
            "uiStateJSON": "{}",
            "description": "",
            "version": 1,
            "kibanaSavedObjectMeta": {"searchSourceJSON": _search_source()},
        },
        "references": [{"name": INDEX_REF, "type": "index-pattern", "id": pattern_id}],
        **_versions(product, "visualization"),
    }


def _agg(agg_id: str, agg_type: str, schema: str, **params: Any) -> dict[str, Any]:
    return {"id": agg_id, "enabled": True, "type": agg_type, "schema": schema, "params": params}


def saved_objects(product: Product, *, prefix: str = DEFAULT_PREFIX) -> list[dict[str, Any]]:
    """Index pattern, saved search and dashboard for the query log."""
    pid = f"sira-seek-log-pattern-{product}"
    no_kept = _no_kept_expansion_search(product, pid)
    visuals = _log_visualizations(product, pid)
    return [
        _index_pattern(product, pid, prefix),
        no_kept,
        *visuals,
        _dashboard(product, [*visuals, no_kept]),
    ]


def _index_pattern(product: Product, pid: str, prefix: str) -> dict[str, Any]:
    """The pattern over every log index under ``prefix``, so rolled-over indexes show too."""
    return {
        "type": "index-pattern",
        "id": pid,
        "attributes": {"title": f"{prefix}*", "timeFieldName": "@timestamp"},
        "references": [],
        **_versions(product, "index-pattern"),
    }


def _no_kept_expansion_search(product: Product, pid: str) -> dict[str, Any]:
    """A saved search for queries whose expansions were all dropped: the ones worth a look."""
    return {
        "type": "search",
        "id": f"sira-seek-no-kept-expansion-{product}",
        "attributes": {
            "title": "sira-seek: queries with no kept expansion",
            "columns": ["query.raw", "dropped_terms", "latency_ms.total"],
            "sort": [["@timestamp", "desc"]],
            "kibanaSavedObjectMeta": {"searchSourceJSON": _search_source("no_kept_expansion:true")},
        },
        "references": [{"name": INDEX_REF, "type": "index-pattern", "id": pid}],
        **_versions(product, "search"),
    }


def _log_visualizations(product: Product, pid: str) -> list[dict[str, Any]]:
    """The four charts (latency, acceptance, dropped terms, tokens), in dashboard order."""
    date_axis = _agg("2", "date_histogram", "segment", field="@timestamp", interval="auto")
    return [
        _visualization(
            product,
            f"sira-seek-latency-{product}",
            pid,
            "sira-seek: latency (ms), LLM vs engine",
            "line",
            [
                _agg("1", "avg", "metric", field="latency_ms.total"),
                _agg("3", "avg", "metric", field="latency_ms.llm"),
                _agg("4", "avg", "metric", field="latency_ms.engine"),
                date_axis,
            ],
        ),
        _visualization(
            product,
            f"sira-seek-acceptance-{product}",
            pid,
            "sira-seek: expansion-term acceptance rate",
            "metric",
            [_agg("1", "avg", "metric", field="acceptance_rate")],
        ),
        _visualization(
            product,
            f"sira-seek-dropped-terms-{product}",
            pid,
            "sira-seek: top dropped terms",
            "table",
            [
                _agg("1", "count", "metric"),
                _agg(
                    "2",
                    "terms",
                    "bucket",
                    field="dropped_terms",
                    size=20,
                    order="desc",
                    orderBy="1",
                ),
            ],
        ),
        _visualization(
            product,
            f"sira-seek-tokens-{product}",
            pid,
            "sira-seek: LLM tokens out per query",
            "histogram",
            [_agg("1", "avg", "metric", field="llm.tokens_out"), date_axis],
        ),
    ]


def _dashboard(product: Product, panel_objects: list[dict[str, Any]]) -> dict[str, Any]:
    """A two-column dashboard of ``panel_objects``; panels point at them by reference name,
    which is what both products' import resolves."""
    panels, refs = [], []
    for i, obj in enumerate(panel_objects):
        panels.append(
            {
                "panelIndex": str(i + 1),
                "gridData": {
                    "x": (i % 2) * 24,
                    "y": (i // 2) * 15,
                    "w": 24,
                    "h": 15,
                    "i": str(i + 1),
                },
                "embeddableConfig": {},
                "panelRefName": f"panel_{i}",
                "version": "8.8.0" if product == "kibana" else "7.10.0",
            }
        )
        refs.append({"name": f"panel_{i}", "type": obj["type"], "id": obj["id"]})
    return {
        "type": "dashboard",
        "id": f"sira-seek-dashboard-{product}",
        "attributes": {
            "title": "sira-seek query log",
            "description": "SIRA searches and SEEK questions logged by sira-seek",
            "panelsJSON": json.dumps(panels),
            "optionsJSON": json.dumps({"useMargins": True, "hidePanelTitles": False}),
            "timeRestore": False,
            "version": 1,
            "kibanaSavedObjectMeta": {"searchSourceJSON": _search_source(with_index=False)},
        },
        "references": refs,
        **_versions(product, "dashboard"),
    }


def to_ndjson(objects: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(obj, sort_keys=True) + "\n" for obj in objects)

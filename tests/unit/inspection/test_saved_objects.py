from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sira_seek.cli.main import cli
from sira_seek.inspection.saved_objects import REFERENCED_FIELDS, saved_objects, to_ndjson


@pytest.mark.parametrize("product", ["kibana", "opensearch-dashboards"])
def test_ndjson_is_self_consistent(product: str) -> None:
    lines = to_ndjson(saved_objects(product)).splitlines()  # type: ignore[arg-type]
    objects = [json.loads(line) for line in lines]
    ids = {(o["type"], o["id"]) for o in objects}
    assert len(ids) == len(objects)
    assert {o["type"] for o in objects} == {"index-pattern", "search", "visualization", "dashboard"}
    for obj in objects:
        assert set(obj) >= {"type", "id", "attributes", "references"}
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in ids, ref  # every reference resolves in the file
        meta = obj["attributes"].get("kibanaSavedObjectMeta")
        if meta:
            json.loads(meta["searchSourceJSON"])
    dashboard = next(o for o in objects if o["type"] == "dashboard")
    panels = json.loads(dashboard["attributes"]["panelsJSON"])
    assert {p["panelRefName"] for p in panels} == {r["name"] for r in dashboard["references"]}


def test_visualizations_read_only_known_fields() -> None:
    used: set[str] = set()
    for obj in saved_objects("kibana"):
        if obj["type"] == "visualization":
            for agg in json.loads(obj["attributes"]["visState"])["aggs"]:
                if "field" in agg["params"]:
                    used.add(agg["params"]["field"])
        if obj["type"] == "search":
            used.update(obj["attributes"]["columns"])
    assert used <= set(REFERENCED_FIELDS)


def test_cli_export_writes_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "objects.ndjson"
    res = CliRunner().invoke(
        cli, ["kibana", "export", "--product", "opensearch-dashboards", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    objects = [json.loads(line) for line in out.read_text().splitlines()]
    assert objects[0]["attributes"]["title"] == "sira-seek-log-*"
    assert all("migrationVersion" in o for o in objects)

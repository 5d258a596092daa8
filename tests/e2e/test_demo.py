"""The README's main job (`sira-seek demo`), minus the slow live CPU-model pass."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from cli_runner import run_cli
from readme_keys import check_keys, documented

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.registry import connect

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def test_demo_prints_bm25_and_sira_side_by_side(
    node_urls: dict[str, str], wikimh_dir: Path, tmp_path: Path
) -> None:
    index = f"e2e-demo-{uuid.uuid4().hex[:8]}"
    try:
        res = run_cli(
            [
                "demo",
                "--url",
                node_urls["opensearch"],
                "--data",
                str(wikimh_dir),
                "--index",
                index,
                "--no-cpu-llm",
                "--seek-questions",
                "0",
                "--out",
                str(tmp_path),
                "--json",
            ],
            timeout=600,
        )
        assert res.returncode == 0, res.stderr[-2000:]
        summary = json.loads(res.stdout)
        # exactly the keys the README's Scripting table lists for `demo`
        check_keys(summary, documented("demo"), "demo", nonempty={"runs"})
        rows = {run["name"]: run for run in summary["runs"]}
        assert set(rows) == {"bm25", "sira (strong-LLM expansions)"} and summary["seek"] == []
        assert rows["sira (strong-LLM expansions)"]["recall@10"] > rows["bm25"]["recall@10"]
        assert rows["sira (strong-LLM expansions)"]["ndcg@10"] > rows["bm25"]["ndcg@10"]
        assert (tmp_path / "report.html").exists() and len(list(tmp_path.glob("run-*.json"))) == 2
    finally:
        connect(ClusterSettings(url=node_urls["opensearch"])).delete_index(index)

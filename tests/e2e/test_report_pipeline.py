"""From evaluation to report as a user does it: saved runs, query log, HTML report."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from cli_runner import run_cli

from sira_seek.backend import SearchBackend
from sira_seek.esplugin.engines.base import RestBackend
from sira_seek.metrics.run_record import RunRecord

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

SIRA_PINNED = json.loads(
    (Path(__file__).parents[1] / "regression" / "sira_wikimh_hotpotqa.json").read_text()
)


def test_saved_runs_log_and_report(
    backends: dict[str, SearchBackend],
    node_urls: dict[str, str],
    wikimh_indexes: dict[str, str],
    wikimh_dir: Path,
    tmp_path: Path,
) -> None:
    url, index = node_urls["opensearch"], wikimh_indexes["opensearch"]
    prefix = f"test-qlog-{uuid.uuid4().hex[:8]}-"
    common = [
        "eval",
        "retrieval",
        "--index",
        index,
        "--url",
        url,
        "--json",
        "--queries",
        str(wikimh_dir / "queries-hotpotqa.jsonl"),
        "--qrels",
        str(wikimh_dir / "qrels-hotpotqa.tsv"),
    ]
    bm25 = run_cli([*common, "--method", "bm25", "--save-run", str(tmp_path / "bm25.json")])
    assert bm25.returncode == 0, bm25.stderr
    sira = run_cli(
        [
            *common,
            "--method",
            "sira",
            "--name",
            "sira-strong",
            "--expansions",
            str(wikimh_dir / "expansions-hotpotqa.strong-llm.jsonl"),
            "--save-run",
            str(tmp_path / "sira.json"),
            "--log-queries",
            "--log-prefix",
            prefix,
        ]
    )
    assert sira.returncode == 0, sira.stderr
    be = backends["opensearch"]
    assert isinstance(be, RestBackend)
    try:
        logs = be.request("GET", f"/{prefix}*", ignore=(404,))
        assert len(logs) == 1
        (log_index,) = logs
        be.refresh(log_index)
        assert be.count(log_index) == 100
    finally:
        for name in be.request("GET", f"/{prefix}*", ignore=(404,)) or {}:
            be.delete_index(name)
    record = RunRecord.load(tmp_path / "sira.json")
    assert record.name == "sira-strong" and len(record.per_query) == 100
    # The printed and saved numbers are the pinned ones (one scoring path: see
    # tests/integration/test_one_evaluation_path.py for the per-query vs batched proof).
    pinned = SIRA_PINNED["engines"]["opensearch"]["strong-llm"]["all"]
    for name in ("ndcg@10", "recall@10", "recall@100"):
        assert json.loads(sira.stdout)[name] == record.metrics[name]
        assert record.metrics[name] == pytest.approx(pinned[name], abs=SIRA_PINNED["tolerance"])
    assert len(record.latency_ms) == 100 and record.settings["expansion_weight"] is not None
    rep = run_cli(
        [
            "report",
            str(tmp_path / "bm25.json"),
            str(tmp_path / "sira.json"),
            "--out",
            str(tmp_path / "report.html"),
        ]
    )
    assert rep.returncode == 0, rep.stderr
    html = (tmp_path / "report.html").read_text()
    assert "sira-strong" in html and "Per-query wins and losses" in html
    # SIRA with strong expansions beats BM25 by ~0.09 nDCG@10 over 100 queries: significant.
    assert "<h2>Paired significance vs bm25</h2>" in html
    cell = re.search(r'<td class="sig" data-measure="ndcg@10" data-p="([^"]+)">\+0\.\d+', html)
    assert cell is not None and float(cell.group(1)) < 0.05

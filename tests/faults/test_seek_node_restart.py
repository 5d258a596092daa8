"""A SEEK evaluation while the search node goes down and comes back: questions whose searches
failed are redone on resume; finished ones are not asked again."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fault_kit import FaultLedger, FaultRow

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect
from sira_seek.esplugin.local.node import LocalNode
from sira_seek.ingest import ingest_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "llm"))
from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

pytestmark = pytest.mark.integration

REPLY = (
    "# Sketch\n## Evidence about the question\n<query>film director</query>\n"
    "The documents name a director.\n<answer>yes</answer>"
)
N_QUESTIONS = 24


def test_seek_eval_survives_a_node_restart(
    own_node: LocalNode, wikimh_dir: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    started = time.monotonic()
    state = own_node.state()
    assert state is not None
    backend = connect(ClusterSettings(url=state.url))
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(x for x in lines if '"_id": "hp' in x) + "\n", encoding="utf-8")
    ingest_corpus(backend, "seek-restart", corpus)
    checkpoint = tmp_path / "ckpt.jsonl"
    exe = str(Path(sys.executable).parent / "sira-seek")
    with StubOpenAIServer(default=StubReply(text=REPLY, delay_s=0.15)) as stub:
        cmd = [
            exe,
            "eval",
            "qa",
            "--index",
            "seek-restart",
            "--qa",
            str(wikimh_dir / "qa-hotpotqa.jsonl"),
            "--limit",
            str(N_QUESTIONS),
            "--method",
            "seek",
            "--llm",
            f"openai:{stub.base_url}#stub-model",
            "--checkpoint",
            str(checkpoint),
            "--concurrency",
            "2",
            "--url",
            state.url,
            "--json",
            "--quiet",
            "--no-cache",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not checkpoint.exists() or len(checkpoint.read_text().splitlines()) < 4:
            assert time.monotonic() < deadline and proc.poll() is None, "no question finished"
            time.sleep(0.05)
        own_node.down()  # the cluster goes away mid-evaluation
        time.sleep(1.0)
        own_node.up()
        out, err = proc.communicate(timeout=300)
        assert "Traceback" not in err, err[-1500:]
        rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        assert rerun.returncode == 0, rerun.stderr[-1500:]
    assert json.loads(rerun.stdout)["questions"] == N_QUESTIONS
    corrupted = 0
    finished: dict[str, int] = {}
    had_failed_search = 0
    for line in checkpoint.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            corrupted += 1
            continue
        failed_search = any(step.get("error") for step in rec.get("steps", []))
        had_failed_search += failed_search
        if rec.get("error") is None and not failed_search:
            finished[rec["id"]] = finished.get(rec["id"], 0) + 1
    lost = N_QUESTIONS - len(finished)
    duplicated = sum(n - 1 for n in finished.values())
    fault_ledger.record(
        FaultRow(
            "search node restarted during a SEEK evaluation",
            2,
            N_QUESTIONS,
            lost,
            duplicated,
            corrupted,
            time.monotonic() - started,
        )
    )
    assert had_failed_search >= 1, "the restart hit no search: the scenario proved nothing"
    assert (lost, duplicated, corrupted) == (0, 0, 0)

"""The main job of README.md (`sira-seek demo`), minus the slow live CPU-model pass."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from cli_runner import run_cli, sira_seek_exe
from readme_keys import check_keys, documented

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.engines.registry import connect

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
        # exactly the keys the docs' JSON output table lists for `demo`
        check_keys(summary, documented("demo"), "demo", nonempty={"runs"})
        rows = {run["name"]: run for run in summary["runs"]}
        assert set(rows) == {"bm25", "sira (strong-LLM expansions)"} and summary["seek"] == []
        assert rows["sira (strong-LLM expansions)"]["recall@10"] > rows["bm25"]["recall@10"]
        assert rows["sira (strong-LLM expansions)"]["ndcg@10"] > rows["bm25"]["ndcg@10"]
        assert (tmp_path / "report.html").exists() and len(list(tmp_path.glob("run-*.json"))) == 2
    finally:
        connect(ClusterSettings(url=node_urls["opensearch"])).delete_index(index)


def _demo_args(url: str, data: Path, index: str, out: Path, *extra: str) -> list[str]:
    return ["demo", "--url", url, "--data", str(data), "--index", index, "--out", str(out), *extra]


def test_demo_shows_the_first_table_before_waiting_for_the_cpu_install(
    node_urls: dict[str, str], wikimh_dir: Path, wikimh_indexes: dict[str, str], tmp_path: Path
) -> None:
    """`make demo`'s promise: BM25 vs SIRA (strong) and the report come while the CPU model
    still installs; the demo then waits for the install's log, and a failed install is
    reported (its log's tail, exit 3) instead of hanging or passing silently."""
    log = tmp_path / "cpu-llm-install.log"
    log.write_text("install_cpu_llm: compiling llama-cpp-python once ...\n")
    out = tmp_path / "out"
    args = _demo_args(
        node_urls["opensearch"], wikimh_dir, wikimh_indexes["opensearch"], out,
        "--cpu-install-log", str(log), "--seek-questions", "0", "--no-progress",
    )  # fmt: skip
    # stdout is a pipe here, as under `make demo | tee`: the table must not sit in a buffer.
    proc = subprocess.Popen(
        [sira_seek_exe(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SIRA_SEEK_NO_PROGRESS": "1"},
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        seen: list[str] = []
        deadline = time.monotonic() + 300
        while not any(line.startswith("Run files and an HTML report") for line in seen):
            assert time.monotonic() < deadline, f"no first table in 300 s: {seen}"
            line = proc.stdout.readline()
            assert line, f"stdout closed before the first table: {seen} {proc.stderr.read()}"
            seen.append(line.rstrip("\n"))
        assert any(line.startswith("bm25 ") for line in seen)
        assert any(line.startswith("sira (strong-LLM expansions) ") for line in seen)
        time.sleep(3)
        assert proc.poll() is None, "the demo ended instead of waiting for the install"
        assert (out / "report.html").exists() and len(list(out.glob("run-*.json"))) == 2
        with log.open("a") as handle:
            handle.write("error: compiler says boom\ninstall_cpu_llm: exit 1\n")
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-2000:]
    assert "the CPU model install failed (exit 1" in err and "compiler says boom" in err
    assert "install_cpu_llm: exit" not in err  # the marker line is not part of the tail shown
    assert "CPU gemma3-270m" not in rest and len(list(out.glob("run-*.json"))) == 2


def test_demo_cpu_model_runs_only_the_first_cpu_questions(
    node_urls: dict[str, str], wikimh_dir: Path, wikimh_indexes: dict[str, str], tmp_path: Path
) -> None:
    """The CPU-model pass is bounded by --cpu-questions (the baselines keep all questions), and
    an install log that ends with exit 0 lets it run."""
    log = tmp_path / "cpu-llm-install.log"
    log.write_text("install_cpu_llm: ... installed\ninstall_cpu_llm: exit 0\n")
    res = run_cli(
        _demo_args(
            node_urls["opensearch"],
            wikimh_dir,
            wikimh_indexes["opensearch"],
            tmp_path / "out",
            "--cpu-install-log",
            str(log),
            "--cpu-questions",
            "2",
            "--seek-questions",
            "0",
            "--json",
        ),  # fmt: skip
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads(res.stdout)
    check_keys(summary, documented("demo"), "demo", nonempty={"runs"})
    queries = {run["name"]: run["queries"] for run in summary["runs"]}
    assert queries == {
        "bm25": 100,
        "sira (strong-LLM expansions)": 100,
        "sira (CPU gemma3-270m)": 2,
    }
    assert len(list((tmp_path / "out").glob("run-*.json"))) == 3


@pytest.mark.parametrize("value", ["0", "-3", "some"])
def test_demo_refuses_a_bad_cpu_questions_value(value: str, tmp_path: Path) -> None:
    res = run_cli(["demo", "--cpu-questions", value, "--out", str(tmp_path)])
    assert res.returncode == 2 and "--cpu-questions" in res.stderr

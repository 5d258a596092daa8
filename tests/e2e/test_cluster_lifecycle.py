"""`sira-seek node up --nodes 3` as a user runs it: one cluster, one URL, one entry in status,
a sharded and replicated ingest spread over its members, and `node down` stopping them all.

The command is the same for both engines (it hands --engine to the cluster code), so it runs on
OpenSearch; each engine's cluster forming (named members, one manager, green) is checked on the
session clusters (tests/integration/test_cluster_client.py), which the shard-layout and
node-loss tests of both engines run on."""

from __future__ import annotations

import json
import os
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from sira_seek.config import NodeSettings

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def _get(url: str, path: str) -> Any:
    with urllib.request.urlopen(url + path, timeout=30) as resp:
        return json.loads(resp.read())


@pytest.fixture
def node_home(world_readable_tmp: Path) -> dict[str, str]:
    """A node home of its own (so `node down` cannot touch the session's nodes), sharing the
    cached archives; the environment for the CLI."""
    shared = NodeSettings().home
    home = world_readable_tmp / "home"
    home.mkdir()
    for sub in ("dist", "downloads"):
        (shared / sub).mkdir(parents=True, exist_ok=True)
        (home / sub).symlink_to(shared / sub)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIRA_SEEK_URL")}
    env["SIRA_SEEK_NODE_HOME"] = str(home)
    return env


def _pid_gone(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or ") Z " in stat.read_text()


def _up(engine: str, env: dict[str, str]) -> dict[str, Any]:
    started = time.monotonic()
    res = run_cli(["node", "up", "--engine", engine, "--nodes", "3", "--json"], env=env)
    seconds = time.monotonic() - started
    print(f"node up --engine {engine} --nodes 3 took {seconds:.1f}s")
    assert res.returncode == 0, res.stderr[-3000:]
    return dict(json.loads(res.stdout))


def _down(env: dict[str, str]) -> list[dict[str, Any]]:
    res = run_cli(["node", "down", "--json"], env=env, timeout=180)
    assert res.returncode == 0, res.stderr[-3000:]
    return list(json.loads(res.stdout))


N_DOCS = 500  # enough for 5 primaries and their replicas on three members; size is not tested


def test_three_node_opensearch_cluster_lifecycle(
    node_home: dict[str, str], wikimh_dir: Path, tmp_path: Path
) -> None:
    env = node_home
    lines = (wikimh_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:N_DOCS]
    (tmp_path / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        up = _up("opensearch", env)
        names = [n["name"] for n in up["nodes"]]
        assert len(set(names)) == 3 and len(set(up["urls"])) == 3
        assert up["url"] == up["urls"][0] and up["engine"] == "opensearch"
        rows = _get(up["url"], "/_cat/nodes?format=json&h=name,cluster_manager")
        assert sorted(r["name"] for r in rows) == sorted(names)
        assert sum(r["cluster_manager"] == "*" for r in rows) == 1

        # A second `node up` reuses the running cluster.
        again = _up("opensearch", env)
        assert again["urls"] == up["urls"]
        assert [n["pid"] for n in again["nodes"]] == [n["pid"] for n in up["nodes"]]

        status = run_cli(["node", "status", "--json"], env=env)
        assert status.returncode == 0, status.stderr
        (entry,) = json.loads(status.stdout)
        assert entry["kind"] == "cluster" and entry["url"] == up["url"]
        assert [n["name"] for n in entry["nodes"]] == names
        assert all(n["alive"] and n["pid"] for n in entry["nodes"])

        index = f"test-shards-{uuid.uuid4().hex[:8]}"
        ingest = run_cli(
            [
                "ingest",
                str(tmp_path),
                "--index",
                index,
                "--shards",
                "5",
                "--replicas",
                "1",
                "--json",
            ],
            env=env,
            timeout=600,
        )
        assert ingest.returncode == 0, ingest.stderr[-3000:]
        assert json.loads(ingest.stdout)["written"] == N_DOCS
        health = _get(up["url"], f"/_cluster/health/{index}?wait_for_status=green&timeout=60s")
        assert health["status"] == "green"
        shards = _get(up["url"], f"/_cat/shards/{index}?format=json&h=shard,prirep,state,node")
        assert len(shards) == 10
        assert all(s["state"] == "STARTED" for s in shards)
        assert sorted(s["prirep"] for s in shards) == ["p"] * 5 + ["r"] * 5
        assert {s["node"] for s in shards} == set(names)
        for shard in {s["shard"] for s in shards}:  # a copy and its replica never share a node
            assert len({s["node"] for s in shards if s["shard"] == shard}) == 2
    finally:
        down = _down(env)
    (stopped,) = down
    assert stopped["kind"] == "cluster" and stopped["stopped"] is True
    pids = [n["pid"] for n in stopped["nodes"]]
    assert pids == [n["pid"] for n in up["nodes"]]
    assert all(_pid_gone(pid) for pid in pids)
    after = run_cli(["node", "status", "--json"], env=env)
    assert json.loads(after.stdout) == []

"""Opening the node home to the node user while other nodes write under it: a cluster member
restarted mid-sync walks folders whose segment files and index folders a running member
deletes at any moment. Found by tests/faults/test_cluster_faults.py (rolling restart)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sira_seek.esplugin.local import node as local_node


def test_paths_deleted_during_the_walk_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "nodes" / "node-1" / "data"
    doomed_index = data / "indices" / "gone"
    doomed_index.mkdir(parents=True)
    (doomed_index / "_0.cfs").write_text("x")
    segments = [data / f"_{i}.cfe" for i in range(5)]
    for seg in segments:
        seg.write_text("x")
        seg.chmod(0o640)
    real_chmod = os.chmod
    calls = 0

    def chmod_while_a_node_merges(path: os.PathLike[str] | str, mode: int, **kw: bool) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # a merge and an index deletion land between listing and chmod
            for seg in segments:
                seg.unlink(missing_ok=True)
            shutil.rmtree(doomed_index, ignore_errors=True)
            (data / "_9.cfe").write_text("x")
            (data / "_9.cfe").chmod(0o640)
        real_chmod(path, mode, **kw)

    monkeypatch.setattr(local_node.os, "chmod", chmod_while_a_node_merges)
    local_node._make_traversable(tmp_path)
    assert calls >= 2, "the walk did not reach the data folder"
    assert (tmp_path / "nodes").stat().st_mode & 0o005 == 0o005

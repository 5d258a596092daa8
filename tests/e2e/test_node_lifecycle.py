"""`sira-seek node up/down` as root (service user) and as a normal user."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from cli_runner import run_cli

from sira_seek.config import NodeSettings
from sira_seek.esplugin.local.distributions import DEFAULT_VERSIONS
from sira_seek.esplugin.local.node import LocalNode

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]
E2E_USER = "sira-e2e"


def _health(url: str) -> str:
    with urllib.request.urlopen(url + "/_cluster/health", timeout=5) as resp:
        return str(json.loads(resp.read())["status"])


def test_node_up_reuses_the_running_node(node_urls: dict[str, str]) -> None:
    local = LocalNode(NodeSettings(), "opensearch").running()
    if local is None or local.url != node_urls["opensearch"]:
        # the suite was pointed at an external cluster: no local node to reuse, but the
        # status command must still answer
        assert run_cli(["node", "status"]).returncode == 0
        return
    res = run_cli(["node", "up", "--engine", "opensearch"], timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == node_urls["opensearch"]
    status = run_cli(["node", "status"])
    assert node_urls["opensearch"] in status.stdout


def _normal_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(E2E_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", E2E_USER],
            check=True,
        )
        return pwd.getpwnam(E2E_USER)


def _user_venv(venv: Path) -> Path:
    """A venv of the system Python with the project installed from REPO as a wheel (not
    editable) with its own dependencies, by uv (the test extra's installer, as `make` uses):
    a few seconds where pip's resolution took 22 s here."""
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    uv = Path(sys.executable).parent / "uv"
    subprocess.run(
        [str(uv), "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(REPO)],
        check=True,
        timeout=600,
    )
    return venv


def test_two_node_ups_at_once_as_a_normal_user(world_readable_tmp: Path) -> None:
    """A non-root user gets a node of its own, in its own folder, without the service user; and
    two `node up` at the same moment for that node (a test session and `make demo`) start it
    once: one starts it, the other waits and reports the same node. Without the start lock
    the second process died on Lucene's node lock and its state.json hid the live node, so
    `node status` listed nothing. (One node start proves both: the start lock is the same code
    for root and for a normal user, and it runs here.)"""
    tmp_path = world_readable_tmp
    home = tmp_path / "home"
    downloads = home / "downloads"
    downloads.mkdir(parents=True)
    # Reuse the archives the session already fetched (no second download): the default
    # node's zip and its k-NN plugin, and every jar (modules and their dependencies, small);
    # not the other engines' and versions' archives. The user's own Maven repository then
    # starts empty and is never needed.
    cached = NodeSettings().home / "downloads"
    version = DEFAULT_VERSIONS["opensearch"]
    wanted_zips = (f"opensearch-{version}.zip", f"opensearch-knn-{version}.0.zip")
    for path in cached.iterdir():
        if path.is_file() and (path.suffix != ".zip" or path.name in wanted_zips):
            shutil.copy2(path, downloads / path.name)
    if os.geteuid() == 0:
        # The project venv may live under /root (unreadable to others): build one the user can
        # run, with a real (non-editable) install of the project.
        user = _normal_user()
        started = time.monotonic()
        venv = _user_venv(tmp_path / "venv")
        print(f"\n  the user's venv in {time.monotonic() - started:.1f}s")
        os.chown(home, user.pw_uid, user.pw_gid)
        for p in home.rglob("*"):
            os.chown(p, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", E2E_USER, "--"]
        exe = str(venv / "bin" / "sira-seek")
    else:
        prefix, exe = [], shutil.which("sira-seek") or "sira-seek"
    env = {"PATH": os.environ["PATH"], "SIRA_SEEK_NODE_HOME": str(home), "HOME": str(home)}
    cmd = [*prefix, exe, "node", "up", "--engine", "opensearch", "--json", "--no-progress"]
    started = time.monotonic()
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(2)
    ]
    try:
        outs = [p.communicate(timeout=400) for p in procs]
        print(f"  two node ups done in {time.monotonic() - started:.1f}s")
        for p, (_, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err[-2000:]
        urls = {json.loads(out)["url"] for out, _ in outs}
        assert len(urls) == 1
        (url,) = urls
        assert _health(url) in ("green", "yellow")
        state = LocalNode(NodeSettings(home=home), "opensearch").state()
        assert state is not None and state.url == url
        assert Path(f"/proc/{state.pid}").exists()  # the recorded pid is the live node
        owner = Path(f"/proc/{state.pid}").stat().st_uid
        assert owner != 0  # never runs as root
        if prefix:
            assert owner == _normal_user().pw_uid  # the user's own node, not the service user's
        status = subprocess.run(
            [*prefix, exe, "node", "status", "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert [n["url"] for n in json.loads(status.stdout)] == [url]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        down = subprocess.run(
            [*prefix, exe, "node", "down", "--engine", "opensearch", "--purge"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    assert down.returncode == 0, down.stderr
    assert "stopped opensearch" in down.stdout

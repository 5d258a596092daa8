"""A real multi-node cluster on this machine: N local nodes that discover each other.

Single nodes (``node.py``) use ``discovery.type: single-node``, which cannot show what
happens when a node is lost: no replicas are ever assigned, and one process is the whole
cluster. Here every node lists the others' transport ports in ``discovery.seed_hosts`` and the
first election is bootstrapped from the node names (``cluster.initial_cluster_manager_nodes``
on OpenSearch, ``cluster.initial_master_nodes`` on Elasticsearch), so shards get replicas,
a cluster manager is elected, and killing one node is a real fault.

The archives, the JDK, the service user under root and the launch itself are shared with
``node.py``; this module only adds discovery, per-node folders and ports, and
per-node start/stop/kill for fault tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sira_seek.config import NodeSettings
from sira_seek.esplugin.engines.errors import NodeStartError
from sira_seek.processes import pid_alive, terminate

from .distributions import distribution_spec
from .node import (
    base_node_settings,
    check_reachable,
    chown_tree,
    describe_failure,
    find_java,
    install_distribution,
    node_command,
    node_env,
    port_free,
    port_states,
    prepare_node_dir,
    service_user,
    spawn_node,
    starting_status,
    wait_ports_free,
)

log = logging.getLogger(__name__)

# HTTP ports of node 0 (node i gets +i; transport ports are HTTP + 100), away from the single
# nodes' 9410/9420 so both kinds can run side by side.
CLUSTER_PORTS = {"opensearch": 9430, "elasticsearch": 9440}
DEFAULT_CLUSTER_HEAP = "384m"
# What a member answers itself once its HTTP layer is up: the node info API, not GET /, which
# the minimal Elasticsearch archive does not serve (405, "allowed: [DELETE]").
MEMBER_PROBE = "/_nodes/_local?filter_path=nodes.*.name"
MIN_CLUSTER_TIMEOUT = 300.0
#: How long a member start waits for its ports to free (a killed JVM's sockets closing).
PORT_WAIT_S = 30.0


class ClusterNodeState(BaseModel):
    """One member: its fixed ports (a restarted node must come back on the same transport
    port, the one the others' seed lists name) and its processes."""

    name: str
    url: str
    http_port: int
    transport_port: int
    node_dir: str
    pid: int | None = None  # the server JVM (from the launcher's pid file)
    launcher_pid: int | None = None  # the process we spawned (Elasticsearch: its CLI JVM)

    def pids(self) -> list[int]:
        return [p for p in dict.fromkeys((self.pid, self.launcher_pid)) if p is not None]

    def alive(self) -> bool:
        return any(pid_alive(p) for p in self.pids())


class ClusterState(BaseModel):
    """What ``node up --nodes N`` leaves behind (``<cluster_dir>/state.json``)."""

    engine: str
    version: str
    cluster_name: str
    cluster_dir: str
    heap: str
    nodes: list[ClusterNodeState]
    secure: bool = False

    @property
    def url(self) -> str:
        """The first node's URL: the one shown to people (curl, Dashboards)."""
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        """Every node's URL: what sira-seek's own clients get, so losing any node is survivable."""
        return [n.url for n in self.nodes]


class LocalCluster:
    """``size`` nodes of one engine/version forming one cluster, with per-node control.

    ``root`` is the folder holding cluster folders (default ``<home>/clusters``, which
    ``node status`` lists); tests pass their own so they never meet a user's cluster. The
    distribution and downloads always come from ``settings.home`` (shared cache).
    """

    def __init__(
        self,
        settings: NodeSettings,
        engine: str | None = None,
        version: str | None = None,
        *,
        size: int = 3,
        root: Path | None = None,
        cluster_name: str | None = None,
        heap: str | None = None,
        base_port: int | None = None,
    ):
        if size < 2:
            raise ValueError("a LocalCluster has at least 2 nodes; use LocalNode for one")
        if settings.secure:
            raise NodeStartError(
                "--secure is only available for a single node (--nodes 1): the secured "
                "setup issues one node certificate, not one per cluster member."
            )
        self.settings = settings
        self.spec = distribution_spec(engine or settings.engine, version or settings.version)
        self.size = size
        self.root = root or settings.home / "clusters"
        self.cluster_dir = self.root / f"{self.spec.engine}-{self.spec.version}"
        self.state_file = self.cluster_dir / "state.json"
        self.cluster_name = cluster_name or f"sira-seek-{self.spec.engine}-cluster"
        self.heap = heap or DEFAULT_CLUSTER_HEAP
        self.base_port = base_port
        self.timeout = max(settings.startup_timeout, MIN_CLUSTER_TIMEOUT)
        self._procs: dict[int, subprocess.Popen[bytes]] = {}

    # -- state --------------------------------------------------------------------------------

    def state(self) -> ClusterState | None:
        if not self.state_file.exists():
            return None
        try:
            return ClusterState.model_validate_json(self.state_file.read_text())
        except ValueError:
            return None

    def _save(self, state: ClusterState) -> None:
        self.cluster_dir.mkdir(parents=True, exist_ok=True)
        self.state_file.write_text(state.model_dump_json(indent=2))

    def running(self) -> ClusterState | None:
        """The cluster's state if at least one member is alive and answers HTTP."""
        state = self.state()
        if state is None:
            return None
        for node in state.nodes:
            if node.alive() and _get_json(node.url, "/_cluster/health") is not None:
                return state
        return None

    def health(self, **params: str | int) -> dict[str, Any] | None:
        """``_cluster/health`` from the first live member (None if none answers)."""
        state = self.state()
        if state is None:
            return None
        query = "&".join(f"{k}={v}" for k, v in params.items())
        for node in state.nodes:
            if node.alive():
                body = _get_json(node.url, f"/_cluster/health?{query}", accept_codes=(200, 408))
                if body is not None:
                    return body
        return None

    # -- lifecycle ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One process at a time starts members of this cluster: two test sessions (or two
        terminals) asking for it at once must not launch the same member twice."""
        self.cluster_dir.mkdir(parents=True, exist_ok=True)
        with open(self.cluster_dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def up(self, on_status: Callable[[str], None] | None = None) -> ClusterState:
        """Start the cluster, or complete the running one (members found dead are restarted),
        and wait until all ``size`` nodes have joined and health is at least yellow.

        ``on_status`` hears each download and "starting ..., waited Ns" about once a second.
        """
        with self._locked():
            return self._up(on_status)

    def _up(self, on_status: Callable[[str], None] | None = None) -> ClusterState:
        state = self.state()
        if state is not None and len(state.nodes) != self.size:
            if any(n.alive() for n in state.nodes):
                raise NodeStartError(
                    f"a {len(state.nodes)}-node {self.spec.engine} cluster is already running "
                    f"from {self.cluster_dir}; stop it first (`sira-seek node down`)."
                )
            state = None
        if state is None:
            state = self._new_state()
            self._save(state)
        dead = [i for i, n in enumerate(state.nodes) if not n.alive()]
        if dead:
            self._launch(state, dead, on_status)
        self._wait(state, status="yellow", started=dead, on_status=on_status)
        return self._record_pids(state)

    def start_node(self, i: int, *, status: str = "green") -> ClusterState:
        """(Re)start member ``i`` on its old ports and folders, and wait until it has rejoined
        (all ``size`` nodes present) and health is ``status``."""
        with self._locked():
            state = self._require_state()
            if not state.nodes[i].alive():
                self._launch(state, [i])
            self._wait(state, status=status, started=[i])
            return self._record_pids(state)

    def stop_node(self, i: int, timeout_s: float = 60.0) -> None:
        """Graceful stop of member ``i`` (SIGTERM, then SIGKILL after ``timeout_s``)."""
        node = self._require_state().nodes[i]
        for pid in node.pids():
            terminate(pid, timeout_s)
        self._reap(i)

    def kill_node(self, i: int) -> None:
        """SIGKILL member ``i``: no goodbye to the cluster, as in a crash or OOM kill."""
        node = self._require_state().nodes[i]
        for pid in node.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while node.alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        self._reap(i)

    def down(self, purge: bool = False) -> bool:
        """Stop every member (gracefully, in parallel); ``purge`` also deletes the data."""
        state = self.state()
        stopped = False
        if state is not None:
            live = [p for n in state.nodes if n.alive() for p in n.pids()]
            stopped = bool(live)
            for pid in live:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            for pid in live:
                terminate(pid, 60.0)  # waits; SIGKILL only for a node that hangs
        self.state_file.unlink(missing_ok=True)
        if purge and self.cluster_dir.exists():
            shutil.rmtree(self.cluster_dir)
        return stopped

    # -- internals ----------------------------------------------------------------------------

    def _require_state(self) -> ClusterState:
        state = self.state()
        if state is None:
            raise NodeStartError(f"no cluster has been started in {self.cluster_dir}")
        return state

    def _new_state(self) -> ClusterState:
        ports = _free_port_block(
            self.base_port or CLUSTER_PORTS.get(self.spec.engine, 9430), self.size
        )
        nodes = [
            ClusterNodeState(
                name=f"node-{i}",
                url=f"http://127.0.0.1:{port}",
                http_port=port,
                transport_port=port + 100,
                node_dir=str(self.cluster_dir / f"node-{i}"),
            )
            for i, port in enumerate(ports)
        ]
        return ClusterState(
            engine=self.spec.engine,
            version=self.spec.version,
            cluster_name=self.cluster_name,
            cluster_dir=str(self.cluster_dir),
            heap=self.heap,
            nodes=nodes,
        )

    def _discovery_settings(self, state: ClusterState) -> dict[str, str]:
        names = ",".join(n.name for n in state.nodes)
        bootstrap = (
            "cluster.initial_cluster_manager_nodes"
            if self.spec.engine == "opensearch"
            else "cluster.initial_master_nodes"
        )
        return {
            "discovery.seed_hosts": ",".join(f"127.0.0.1:{n.transport_port}" for n in state.nodes),
            # Read only when the cluster forms for the first time; ignored on restarts, when
            # the nodes' data already holds the cluster state.
            bootstrap: names,
        }

    def _launch(
        self,
        state: ClusterState,
        members: list[int],
        on_status: Callable[[str], None] | None = None,
    ) -> None:
        if os.geteuid() == 0:
            check_reachable(self.settings.home)
            check_reachable(self.root)
        self.cluster_dir.mkdir(parents=True, exist_ok=True)
        dist = install_distribution(self.spec, self.settings.home, on_status)
        java = find_java(self.spec)
        user = service_user(self.settings)
        for i in members:
            node = state.nodes[i]
            busy = wait_ports_free([node.http_port, node.transport_port], PORT_WAIT_S)
            if busy:
                held = {p: port_states(p) for p in busy}
                raise NodeStartError(
                    f"cannot start {node.name} of {self.cluster_name}: port(s) {busy} are in "
                    f"use by another process (socket states {held}, after {PORT_WAIT_S:.0f} s)."
                )
            node_dir = Path(node.node_dir)
            conf = prepare_node_dir(dist, node_dir)
            pid_file = node_dir / "node.pid"
            pid_file.unlink(missing_ok=True)
            settings = {
                **base_node_settings(
                    self.spec,
                    node_dir,
                    http_port=node.http_port,
                    transport_port=node.transport_port,
                    cluster_name=state.cluster_name,
                ),
                "node.name": node.name,
                **self._discovery_settings(state),
            }
            cmd = node_command(dist, self.spec, pid_file, settings)
            env = node_env(self.spec, java, node_dir, conf, state.heap, self.settings.java_opts)
            if user:
                chown_tree(node_dir, user.pw_uid, user.pw_gid)
            log.info("starting %s of %s on %s", node.name, state.cluster_name, node.url)
            proc = spawn_node(cmd, node_dir, env, user)
            self._procs[i] = proc
            node.launcher_pid = proc.pid
            node.pid = None
        self._save(state)

    def _wait(
        self,
        state: ClusterState,
        *,
        status: str,
        started: list[int],
        on_status: Callable[[str], None] | None = None,
    ) -> None:
        """Until every member started here answers on its own URL, all have joined and health
        reaches ``status``; a member that exits fails at once with the tail of its log.

        The started members' own answers matter when one was just SIGKILLed and relaunched:
        the others have not noticed the loss yet, so health still says green with all nodes
        (the dead one counted) while the new process is still booting.
        """
        begun = time.monotonic()
        deadline = begun + self.timeout
        while time.monotonic() < deadline:
            if on_status is not None:
                on_status(starting_status(self.spec, time.monotonic() - begun, self.size))
            for i in started:
                proc = self._procs.get(i)
                if proc is not None and proc.poll() is not None:
                    node = state.nodes[i]
                    raise NodeStartError(
                        describe_failure(
                            self.spec,
                            Path(node.node_dir),
                            f"cluster member {node.name} exited with code {proc.returncode}",
                        )
                    )
            if any(_get_json(state.nodes[i].url, MEMBER_PROBE) is None for i in started):
                time.sleep(1.0)
                continue
            body = self.health(
                wait_for_nodes=self.size, wait_for_status=status, timeout="1s", local="false"
            )
            if body is not None and not body.get("timed_out", True):
                return
            time.sleep(1.0)
        raise NodeStartError(self._formation_failure(state, status))

    def _formation_failure(self, state: ClusterState, status: str) -> str:
        body = self.health() or {}
        joined = body.get("number_of_nodes", 0)
        first = Path(state.nodes[0].node_dir)
        hint = ""
        for node in state.nodes:
            text = _log_text(Path(node.node_dir))
            if "not discovered" in text or "discovery" in text and "warn" in text.lower():
                hint = (
                    "\nThe nodes started but did not discover each other (see 'not discovered' "
                    "in their logs)."
                )
                break
        return (
            describe_failure(
                self.spec,
                first,
                f"cluster {state.cluster_name} did not reach {status} with {self.size} nodes "
                f"within {self.timeout:.0f}s ({joined} joined)",
            )
            + hint
        )

    def _record_pids(self, state: ClusterState) -> ClusterState:
        for node in state.nodes:
            pid_file = Path(node.node_dir) / "node.pid"
            with contextlib.suppress(OSError, ValueError):
                node.pid = int(pid_file.read_text().strip())
        self._save(state)
        return state

    def _reap(self, i: int) -> None:
        proc = self._procs.pop(i, None)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)


def _free_port_block(preferred: int, count: int) -> list[int]:
    """``count`` consecutive free HTTP ports whose transport ports (+100) are free too."""
    for start in range(preferred, preferred + 50, count):
        block = list(range(start, start + count))
        if all(port_free(p) and port_free(p + 100) for p in block):
            return block
    raise NodeStartError(f"no {count} free ports found near {preferred} (and +100)")


def _get_json(url: str, path: str, accept_codes: tuple[int, ...] = (200,)) -> Any:
    try:
        with urllib.request.urlopen(url + path, timeout=5) as resp:  # noqa: S310
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        if exc.code in accept_codes:
            return json.loads(exc.read() or b"{}")
        return None
    except Exception:
        return None


def _log_text(node_dir: Path) -> str:
    path = node_dir / "logs" / "stdout.log"
    return path.read_text(errors="replace")[-20000:] if path.exists() else ""

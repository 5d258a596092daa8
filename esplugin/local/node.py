"""A real single-node cluster on this machine, from the official Maven Central archives.

Used by ``sira-seek node up`` and by the test suite when no cluster URL is configured and
no Docker daemon answers. Archives are fetched with ``mvn`` (so a user's mirrors and proxy
settings apply) and cached. Both engines refuse to run as root, so under root the node
runs as a dedicated unprivileged system user.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import logging
import os
import pwd
import re
import shutil
import socket
import ssl
import stat
import subprocess
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from xml.etree import ElementTree

from pydantic import BaseModel, Field

from sira_seek.config import NodeSettings
from sira_seek.esplugin.engines.errors import NodeStartError
from sira_seek.processes import pid_alive as _pid_alive
from sira_seek.processes import terminate as _terminate

from . import security_opensearch as os_security
from .distributions import DistributionSpec, ModuleJar, distribution_spec
from .security import (
    LocalCredentials,
    ensure_admin_user,
    load_credentials,
    make_certificates,
    security_settings,
)

logger = logging.getLogger(__name__)

PREFERRED_PORTS = {"opensearch": 9410, "elasticsearch": 9420}
# How often a starting node is asked for its health: a node answers within a fraction of a
# second of binding its port, and a 1 s poll left 0.5 s on average unused per start.
POLL_S = 0.25


class NodeState(BaseModel):
    """What ``node up`` leaves behind so another process can reuse or stop the node."""

    engine: str
    version: str
    url: str
    pid: int
    node_dir: str
    secure: bool = False
    plugins: list[str] = Field(
        default_factory=list, description="Plugins installed from Maven (e.g. opensearch-knn)."
    )


# -- downloads -------------------------------------------------------------------------------


def artifact_path(coords: str, dest: Path) -> Path:
    """Where ``fetch_artifact`` keeps the Maven artifact ``g:a:v:type`` in ``dest``."""
    _group, artifact, version, kind = coords.split(":")
    return dest / f"{artifact}-{version}.{kind}"


def not_served_marker(coords: str, dest: Path) -> Path:
    """The file recording that Maven Central said it has no such artifact."""
    path = artifact_path(coords, dest)
    return path.with_name(path.name + ".not-served")


def fetch_artifact(coords: str, dest: Path, on_status: Callable[[str], None] | None = None) -> Path:
    """Copy one Maven artifact (``g:a:v:type``) into ``dest`` with ``mvn``; cached.

    ``on_status`` hears "downloading ..." only when the artifact is not cached yet (``mvn -q``
    reports no byte counts, so a caller can show that a download, not a hang, takes the time).
    """
    target = artifact_path(coords, dest)
    if target.exists():
        return target
    not_served = not_served_marker(coords, dest)
    if not_served.exists():
        raise ArtifactNotServedError(f"{coords} is not on Maven Central ({not_served.read_text()})")
    mvn = shutil.which("mvn")
    if mvn is None:
        raise NodeStartError(
            "Maven (`mvn`) is needed to fetch the engine archive from Maven Central. Install it "
            "(e.g. `apt-get install maven`) or point sira-seek at a running cluster with --url."
        )
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [
        mvn,
        "-B",
        "-q",
        "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy",
        f"-Dartifact={coords}",
        f"-DoutputDirectory={dest}",
    ]
    if on_status is not None:
        on_status(f"downloading {coords} from Maven Central")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not target.exists():
        output = proc.stdout + proc.stderr
        tail = "\n".join(output.splitlines()[-15:])
        if any(answer in output for answer in _NOT_SERVED_ANSWERS):
            # Maven's definite "not there" (not a network failure): remembered, so that an
            # optional plugin of a release Maven does not serve costs no mvn run per start.
            not_served.write_text(f"mvn said 'Could not find artifact' on {time.strftime('%F')}")
            raise ArtifactNotServedError(f"{coords} is not on Maven Central:\n{tail}")
        raise NodeStartError(f"Could not fetch {coords} from Maven:\n{tail}")
    return target


_NOT_SERVED_ANSWERS = ("Could not find artifact", "was not found in")
"""Maven's words for an artifact the repository does not have: the first when it asked just
now, the second when its local repository remembers an earlier miss (``*.lastUpdated``): a
fresh-clone make test failed the secured OpenSearch 2.19.4 node on the second, for the k-NN
plugin Maven Central does not serve for that release."""


class ArtifactNotServedError(NodeStartError):
    """Maven Central answered that it has no such artifact (as opposed to no answer)."""


def install_plugins(
    base: Path,
    spec: DistributionSpec,
    java: Path,
    downloads: Path,
    on_status: Callable[[str], None] | None = None,
) -> tuple[Path, list[str]]:
    """A copy of the assembled distribution ``base`` with the spec's plugins, built once
    (``<base>-<suffixes>``), and the names of the plugins it holds. A copy, so a node already
    running from ``base`` is untouched. A plugin Maven Central does not serve for this release
    is left out with a warning (the node runs without what it gives); any other failure
    (no network, a failed install) is an error."""
    wanted = []
    for plugin in spec.plugins:
        final = base.with_name(f"{base.name}-{plugin.suffix}")
        if (final / "plugins" / plugin.name).is_dir():
            wanted.append(plugin)
            continue
        try:
            fetch_artifact(plugin.coords(spec.version), downloads, on_status)
        except ArtifactNotServedError:
            logger.warning(
                "Maven Central has no %s plugin for %s %s (it must match the engine exactly): "
                "this node runs without %s",
                plugin.name,
                spec.engine,
                spec.version,
                plugin.purpose,
            )
            if on_status is not None:
                on_status(f"no {plugin.name} for {spec.engine} {spec.version}: no {plugin.purpose}")
            continue
        wanted.append(plugin)
    if not wanted:
        return base, []
    final = base.with_name("-".join([base.name, *(p.suffix for p in wanted)]))
    names = [p.name for p in wanted]
    if all((final / "plugins" / name).is_dir() for name in names):
        return final, names
    with tempfile.TemporaryDirectory(dir=base.parent) as tmp:
        staged = Path(tmp) / final.name
        shutil.copytree(base, staged, symlinks=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            spec.java_home_env: str(java),
            spec.conf_env: str(staged / "config"),
        }
        for plugin in wanted:
            for module in plugin.requires_modules:
                if not (staged / "modules" / module.name).is_dir():
                    _install_module(staged, spec, module, downloads, on_status)
            archive = fetch_artifact(plugin.coords(spec.version), downloads, on_status)
            if on_status is not None:
                on_status(f"installing {plugin.name}")
            proc = subprocess.run(
                [
                    str(staged / "bin" / f"{spec.engine}-plugin"),
                    "install",
                    "--batch",
                    archive.as_uri(),
                ],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
                raise NodeStartError(f"could not install the {plugin.name} plugin:\n{tail}")
        if final.exists():
            shutil.rmtree(final)
        staged.rename(final)
    _make_traversable(final)
    return final, names


def _extract(archive: Path, dest: Path) -> None:
    """Unzip keeping Unix permissions (the launch scripts must stay executable)."""
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            path = zf.extract(info, dest)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


def pom_dependencies(pom: Path) -> list[str]:
    """The ``group:artifact:version`` of each compile/runtime dependency a POM lists (a
    module's pom names exactly the jars its folder ships beside its own)."""
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ElementTree.parse(pom).getroot()
    out = []
    for dep in root.findall("m:dependencies/m:dependency", ns):
        scope = dep.findtext("m:scope", "compile", ns)
        if scope not in ("compile", "runtime"):
            continue
        group, artifact, version = (
            dep.findtext(f"m:{k}", "", ns) for k in ("groupId", "artifactId", "version")
        )
        if not (group and artifact and version) or "${" in version:
            raise NodeStartError(
                f"{pom.name}: cannot read the dependency {group}:{artifact}:{version}"
            )
        out.append(f"{group}:{artifact}:{version}")
    return out


def _install_module(
    home: Path,
    spec: DistributionSpec,
    module: ModuleJar,
    downloads: Path,
    on_status: Callable[[str], None] | None = None,
) -> None:
    jar = fetch_artifact(f"{module.artifact}:{spec.version}:jar", downloads, on_status)
    jars = [jar]
    if module.with_dependencies:
        pom = fetch_artifact(f"{module.artifact}:{spec.version}:pom", downloads, on_status)
        jars += [fetch_artifact(f"{c}:jar", downloads, on_status) for c in pom_dependencies(pom)]
    mod_dir = home / "modules" / module.name
    mod_dir.mkdir(parents=True, exist_ok=True)
    for each in jars:
        shutil.copy2(each, mod_dir / each.name)
    if module.security_policy:
        (mod_dir / "plugin-security.policy").write_text(module.security_policy)
    (mod_dir / "plugin-descriptor.properties").write_text(
        "\n".join(
            [
                f"description={module.description}",
                f"version={spec.version}",
                f"name={module.name}",
                f"classname={module.classname}",
                "java.version=11",
                f"opensearch.version={spec.version}",
                f"extended.plugins={module.extended_plugins}",
                "has.native.controller=false",
                "",
            ]
        )
    )


def install_distribution(
    spec: DistributionSpec, home: Path, on_status: Callable[[str], None] | None = None
) -> Path:
    """Return an extracted, assembled distribution folder (built once, then cached);
    ``on_status`` hears each download and the extraction."""
    dist_root = home / "dist"
    final = dist_root / f"{spec.engine}-{spec.version}"
    if (final / spec.launcher).exists():
        return final
    downloads = home / "downloads"
    archive = fetch_artifact(spec.artifact, downloads, on_status)
    dist_root.mkdir(parents=True, exist_ok=True)
    if on_status is not None:
        on_status(f"extracting {archive.name}")
    with tempfile.TemporaryDirectory(dir=dist_root) as tmp:
        _extract(archive, Path(tmp))
        (extracted,) = [p for p in Path(tmp).iterdir() if p.is_dir()]
        for module in spec.modules:
            _install_module(extracted, spec, module, downloads, on_status)
        if final.exists():
            shutil.rmtree(final)
        extracted.rename(final)
    _make_traversable(final)
    return final


def _make_traversable(path: Path) -> None:
    """Open ``path`` and everything under it to the node user.

    The walk may cross the data folders of nodes that are running (a cluster member restarted
    while the others write): Lucene deletes merged segment files and the engine deletes the
    folders of deleted indices at any moment, so a path that vanishes mid-walk is skipped
    (os.walk ignores a folder it can no longer list), not an error that fails the start.
    """
    _open_to_others(path)
    for root, dirs, files in os.walk(path, followlinks=True):
        for name in (*dirs, *files):
            _open_to_others(Path(root, name))


def _open_to_others(p: Path) -> None:
    try:
        mode = p.stat().st_mode
        if stat.S_ISREG(mode) and not mode & 0o077:
            return  # private files (secured nodes' keys, credentials.json) stay private
        extra = stat.S_IRGRP | stat.S_IROTH
        if stat.S_ISDIR(mode):
            extra |= stat.S_IXGRP | stat.S_IXOTH
        os.chmod(p, mode | extra)
    except FileNotFoundError:
        return


# -- java --------------------------------------------------------------------------------------


def _java_major(java_home: Path) -> int | None:
    release = java_home / "release"
    if not (java_home / "bin" / "java").exists() or not release.exists():
        return None
    match = re.search(r'JAVA_VERSION="(\d+)(?:\.(\d+))?', release.read_text())
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def find_java(spec: DistributionSpec) -> Path:
    """A JDK the engine accepts: $SIRA_SEEK_JAVA_HOME, $JAVA_HOME, then /usr/lib/jvm."""
    candidates: list[Path] = []
    for env in ("SIRA_SEEK_JAVA_HOME", spec.java_home_env, "JAVA_HOME"):
        if os.environ.get(env):
            candidates.append(Path(os.environ[env]))
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        candidates += sorted(p for p in jvm.iterdir() if p.is_dir() and not p.is_symlink())
    seen: list[str] = []
    for home in candidates:
        major = _java_major(home)
        seen.append(f"{home} ({major or '?'})")
        if major is None or major < spec.java_min:
            continue
        if spec.java_max is not None and major > spec.java_max:
            continue
        return home
    wanted = f"{spec.java_min}..{spec.java_max}" if spec.java_max else f"{spec.java_min}+"
    raise NodeStartError(
        f"{spec.engine} {spec.version} needs Java {wanted}; found: {', '.join(seen) or 'none'}. "
        "Install a JDK or set SIRA_SEEK_JAVA_HOME."
    )


# -- users and ports ----------------------------------------------------------------------------


def ensure_service_user(name: str) -> pwd.struct_passwd:
    """Both engines refuse root: create (once) the unprivileged user the node runs as."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if useradd is None:
        raise NodeStartError(
            "Elasticsearch and OpenSearch refuse to run as root, and `useradd` is missing to "
            f"create the service user {name!r}. Run sira-seek as a normal user instead."
        )
    subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )
    return pwd.getpwnam(name)


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


_TCP_STATES = {
    "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1",
    "05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT",
    "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
}  # fmt: skip


def port_states(port: int) -> list[str]:
    """The TCP states of the local sockets bound to ``port`` (from /proc/net/tcp and tcp6),
    so that an error about a busy port can say what holds it; empty where /proc is absent."""
    states = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 3 and int(fields[1].rsplit(":", 1)[1], 16) == port:
                states.append(_TCP_STATES.get(fields[3], fields[3]))
    return states


def wait_ports_free(ports: list[int], timeout_s: float) -> list[int]:
    """Wait up to ``timeout_s`` for every port to be bindable; the ones still busy.

    A member restarted right after a SIGKILL can find its port held for a moment while the
    kernel finishes closing the dead JVM's sockets; a short bounded wait tells that apart from
    a port another program really holds."""
    deadline = time.monotonic() + timeout_s
    while True:
        busy = [p for p in ports if not port_free(p)]
        if not busy or time.monotonic() >= deadline:
            return busy
        time.sleep(0.5)


def _free_port(preferred: int) -> int:
    for port in range(preferred, preferred + 8):
        if port_free(port) and port_free(port + 100):
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- lifecycle ------------------------------------------------------------------------------------


@contextlib.contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` for the duration of the block (released when the
    process dies, so a killed start never blocks the next one)."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


PrepareDistribution = Callable[[Path, str, Path], Path]
"""``LocalNode``'s hook: (distribution folder, engine version, JDK home) -> the folder to run."""


class LocalNode:
    """One engine/version's node: its folders, its state file and its process."""

    def __init__(
        self,
        settings: NodeSettings,
        engine: str | None = None,
        version: str | None = None,
        *,
        prepare_distribution: PrepareDistribution | None = None,
    ):
        """``prepare_distribution`` (distribution folder, engine version, JDK home) returns the
        folder the node runs from instead, e.g. a copy with an extra plugin; the test suite
        passes one that adds a test-only analysis plugin (tests/support/analysis_shim) so a
        secured Elasticsearch node from the minimal archive can mint API keys. The folder it
        returns must stay in place while the node runs."""
        self.settings = settings
        self.prepare_distribution = prepare_distribution
        engine = engine or settings.engine
        version = version or settings.version
        if settings.secure and engine == "opensearch" and version is None:
            version = os_security.SECURED_OPENSEARCH_VERSION
        self.spec = distribution_spec(engine, version)
        suffix = "-secure" if settings.secure else ""
        self.node_dir = settings.home / "nodes" / f"{self.spec.engine}-{self.spec.version}{suffix}"
        self.state_file = self.node_dir / "state.json"

    # state
    def state(self) -> NodeState | None:
        if not self.state_file.exists():
            return None
        try:
            return NodeState.model_validate_json(self.state_file.read_text())
        except ValueError:
            return None

    def running(self) -> NodeState | None:
        """The live node's state, if its process is alive and answers HTTP."""
        state = self.state()
        if state is None or not _pid_alive(state.pid):
            return None
        return state if self._http_ok(state.url) else None

    def credentials(self) -> LocalCredentials | None:
        """User, password and CA file of a secured node (None for an open one)."""
        return load_credentials(self.node_dir) if self.settings.secure else None

    def _http_ok(self, url: str, path: str = "/_cluster/health") -> bool:
        creds = self.credentials()
        return _http_ok(url, path, creds)

    # start / stop
    def up(self, on_status: Callable[[str], None] | None = None) -> NodeState:
        """Start the node, or return the one already running.

        ``on_status`` hears what takes the time, for a progress line: each download, then
        "starting ENGINE VERSION, waited Ns" a few times a second until the node answers.
        """
        live = self.running()
        if live is not None:
            return live
        # Two commands starting the same node at once (a test session and `make demo`, two
        # pytest processes) must not race: the loser's process dies on Lucene's node lock and,
        # worse, its state.json would hide the winner's live node. One starts, the other waits
        # and then finds it running.
        self.node_dir.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive_lock(self.node_dir.parent / f".{self.node_dir.name}.up.lock"):
            live = self.running()
            if live is not None and not self._lacks_plugins(live):
                return live
            if live is not None:
                # Started before sira-seek installed the spec's plugins (an older version):
                # restarted once from the distribution with them, its data kept.
                logger.warning(
                    "%s %s at %s runs without %s: restarting it with them (data kept)",
                    live.engine,
                    live.version,
                    live.url,
                    ", ".join(p.name for p in self.spec.plugins),
                )
                if on_status is not None:
                    on_status(f"restarting {live.engine} {live.version} to add its plugins")
                self.down()
            return self._start(on_status)

    def _lacks_plugins(self, live: NodeState) -> bool:
        """Whether the running node misses a plugin this version's node gets (it was started
        by an older sira-seek); a plugin Maven Central does not serve is not missed."""
        wanted = {p.name for p in self.spec.plugins}
        if wanted <= set(live.plugins):
            return False
        downloads = self.settings.home / "downloads"
        served = {
            p.name
            for p in self.spec.plugins
            if not not_served_marker(p.coords(self.spec.version), downloads).exists()
        }
        return not served <= set(live.plugins)

    def _start(self, on_status: Callable[[str], None] | None) -> NodeState:
        if os.geteuid() == 0:
            check_reachable(self.settings.home)
        secured_os = self.settings.secure and self.spec.engine == "opensearch"
        dist, java, plugins = self._install(on_status, secured_os)
        port = self.settings.http_port or _free_port(PREFERRED_PORTS[self.spec.engine])
        conf = prepare_node_dir(dist, self.node_dir)
        pid_file = self.node_dir / "node.pid"
        pid_file.unlink(missing_ok=True)
        user = service_user(self.settings)
        settings = self._node_settings(port, conf, secured_os)
        cmd = node_command(dist, self.spec, pid_file, settings)
        env = node_env(
            self.spec, java, self.node_dir, conf, self.settings.heap, self.settings.java_opts
        )
        if user:
            chown_tree(self.node_dir, user.pw_uid, user.pw_gid)
        if self.settings.secure:
            add_users = os_security.ensure_users if secured_os else ensure_admin_user
            add_users(
                self.node_dir,
                dist,
                env,
                user.pw_uid if user else None,
                user.pw_gid if user else None,
            )
        proc = spawn_node(cmd, self.node_dir, env, user)
        scheme = "https" if self.settings.secure else "http"
        state = NodeState(
            engine=self.spec.engine,
            version=self.spec.version,
            url=f"{scheme}://127.0.0.1:{port}",
            pid=proc.pid,
            node_dir=str(self.node_dir),
            secure=self.settings.secure,
            plugins=plugins,
        )
        self.state_file.write_text(state.model_dump_json(indent=2))
        return self._wait_until_healthy(proc, state, pid_file, on_status)

    def _install(
        self, on_status: Callable[[str], None] | None, secured_os: bool
    ) -> tuple[Path, Path, list[str]]:
        """The distribution ready to run (security plugin for a secured OpenSearch, the spec's
        plugins, the caller's preparation), the Java that runs it and the plugins installed;
        all before the node directory is touched, so a failed download leaves no half node."""
        dist = install_distribution(self.spec, self.settings.home, on_status)
        java = find_java(self.spec)
        downloads = self.settings.home / "downloads"
        if secured_os:
            dist = os_security.install_security_plugin(
                dist, self.spec.version, java, fetch=lambda c: fetch_artifact(c, downloads)
            )
        dist, plugins = install_plugins(dist, self.spec, java, downloads, on_status)
        if self.prepare_distribution is not None:
            dist = self.prepare_distribution(dist, self.spec.version, java)
        return dist, java, plugins

    def _node_settings(self, port: int, conf: Path, secured_os: bool) -> dict[str, str]:
        """The node's settings: single-node, our ports and paths, and TLS with its certificates
        (written into ``conf``) when secure; OpenSearch's security plugin takes its own."""
        settings = {
            "discovery.type": "single-node",
            **base_node_settings(
                self.spec,
                self.node_dir,
                http_port=port,
                transport_port=port + 100,
                cluster_name=f"sira-seek-{self.spec.engine}",
            ),
        }
        if secured_os:
            os_security.make_certificates(conf / "certs")
            settings.update(os_security.security_settings())
        elif self.settings.secure:
            make_certificates(conf / "certs")
            settings.update(security_settings())
        return settings

    def _wait_until_healthy(
        self,
        proc: subprocess.Popen[bytes],
        state: NodeState,
        pid_file: Path,
        on_status: Callable[[str], None] | None,
    ) -> NodeState:
        """Poll until the cluster is yellow, then record the pid the node wrote itself (the one
        ``down`` must stop, which need not be the launcher's); a node that exits or stays
        silent past the startup timeout is stopped and reported with its log's tail."""
        begun = time.monotonic()
        deadline = begun + self.settings.startup_timeout
        while time.monotonic() < deadline:
            if on_status is not None:
                on_status(starting_status(self.spec, time.monotonic() - begun))
            if proc.poll() is not None:
                raise NodeStartError(self._failure(f"exited with code {proc.returncode}"))
            if self._http_ok(state.url, "/_cluster/health?wait_for_status=yellow&timeout=1s"):
                if pid_file.exists():
                    state.pid = int(pid_file.read_text().strip() or proc.pid)
                    self.state_file.write_text(state.model_dump_json(indent=2))
                return state
            time.sleep(POLL_S)
        self.down()
        raise NodeStartError(
            self._failure(f"did not answer within {self.settings.startup_timeout:.0f}s")
        )

    def down(self, purge: bool = False) -> bool:
        """Stop the node if it runs; ``purge`` also deletes its data."""
        state = self.state()
        stopped = False
        if state is not None and _pid_alive(state.pid):
            _terminate(state.pid)
            stopped = True
        self.state_file.unlink(missing_ok=True)
        if purge and self.node_dir.exists():
            shutil.rmtree(self.node_dir)
        return stopped

    def _failure(self, what: str) -> str:
        return describe_failure(self.spec, self.node_dir, what)


# -- pieces shared with cluster.py -----------------------------------------------------------


def starting_status(spec: DistributionSpec, waited_s: float, nodes: int = 1) -> str:
    """The line a progress display shows while a node (or cluster) boots."""
    what = f"{nodes}-node cluster" if nodes > 1 else "node"
    return f"starting {spec.engine} {spec.version} {what}, waited {waited_s:.0f}s"


def prepare_node_dir(dist: Path, node_dir: Path) -> Path:
    """Give a node its own config, data and logs folders (the distribution stays shared and
    read-only); returns the config folder."""
    conf = node_dir / "config"
    if not conf.exists():
        shutil.copytree(dist / "config", conf)
        _localise_jvm_options(conf / "jvm.options", node_dir)
    for sub in ("data", "logs"):
        (node_dir / sub).mkdir(parents=True, exist_ok=True)
    return conf


def service_user(settings: NodeSettings) -> pwd.struct_passwd | None:
    """The unprivileged user nodes run as under root (None for a normal user, who runs them
    directly); the node home is opened up so that user can walk down to it."""
    if os.geteuid() != 0:
        return None
    user = ensure_service_user(settings.service_user)
    _make_traversable(settings.home)
    return user


def base_node_settings(
    spec: DistributionSpec,
    node_dir: Path,
    *,
    http_port: int,
    transport_port: int,
    cluster_name: str,
) -> dict[str, str]:
    """Settings every local node gets, single or one of a cluster: loopback only (so the
    engines stay in development mode, without production bootstrap checks), its own data and
    log folders, and no disk watermarks (a nearly full dev disk must not block writes)."""
    return {
        "network.host": "127.0.0.1",
        "http.port": str(http_port),
        "transport.port": str(transport_port),
        "path.data": str(node_dir / "data"),
        "path.logs": str(node_dir / "logs"),
        "cluster.name": cluster_name,
        "cluster.routing.allocation.disk.threshold_enabled": "false",
        **spec.extra_settings,
    }


def node_command(
    dist: Path, spec: DistributionSpec, pid_file: Path, settings: dict[str, str]
) -> list[str]:
    cmd = [str(dist / spec.launcher), "-p", str(pid_file)]
    for key, value in settings.items():
        cmd += ["-E", f"{key}={value}"]
    return cmd


def node_env(
    spec: DistributionSpec,
    java: Path,
    node_dir: Path,
    conf: Path,
    heap: str,
    java_opts: str = "",
) -> dict[str, str]:
    """A small, explicit environment: the caller's JAVA_OPTS or ES_* variables must not leak
    into the node (``java_opts`` is NodeSettings.java_opts, asked for by name)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(node_dir),
        "LANG": "C.UTF-8",
        spec.java_home_env: str(java),
        spec.java_opts_env: f"-Xms{heap} -Xmx{heap} {java_opts}".strip(),
        spec.conf_env: str(conf),
    }


def spawn_node(
    cmd: list[str], node_dir: Path, env: dict[str, str], user: pwd.struct_passwd | None
) -> subprocess.Popen[bytes]:
    """Start the launcher in its own session (a Ctrl-C in the caller's terminal must not
    reach the node), output appended to ``logs/stdout.log``."""
    out_log = node_dir / "logs" / "stdout.log"
    with open(out_log, "ab") as log:
        return subprocess.Popen(
            cmd,
            cwd=node_dir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            user=user.pw_uid if user else None,
            group=user.pw_gid if user else None,
        )


def describe_failure(spec: DistributionSpec, node_dir: Path, what: str) -> str:
    """What went wrong plus the tail of the node's log (and a hint for the root refusal)."""
    log = node_dir / "logs" / "stdout.log"
    tail = log.read_text(errors="replace").splitlines()[-40:] if log.exists() else []
    hint = ""
    if any("can not run" in line and "root" in line for line in tail):
        hint = (
            "\nThe engine refuses to run as root: run sira-seek as root (it then uses a "
            "service user) or as a normal user."
        )
    return f"{spec.engine} {spec.version} {what}. Last lines of {log}:\n" + "\n".join(tail) + hint


def _localise_jvm_options(jvm_options: Path, node_dir: Path) -> None:
    """The launchers run from the (shared, read-only) distribution folder: point the JVM's
    relative log and heap-dump paths at this node's own folders instead."""
    if not jvm_options.exists():
        return
    text = jvm_options.read_text()
    text = text.replace("file=logs/", f"file={node_dir}/logs/")
    text = text.replace("ErrorFile=logs/", f"ErrorFile={node_dir}/logs/")
    text = text.replace("HeapDumpPath=data", f"HeapDumpPath={node_dir}/data")
    jvm_options.write_text(text)


def check_reachable(home: Path) -> None:
    """Under root the node runs as another user, who must be able to walk down to ``home``."""
    for folder in [home.resolve(), *home.resolve().parents]:
        if folder.exists() and not folder.stat().st_mode & stat.S_IXOTH:
            raise NodeStartError(
                f"{folder} is closed to other users, so the unprivileged service user that runs "
                f"the node cannot reach {home}. Set SIRA_SEEK_NODE_HOME to a folder under a "
                "world-traversable path (the default for root is /var/lib/sira-seek)."
            )


def chown_tree(path: Path, uid: int, gid: int) -> None:
    for p in [path, *path.rglob("*")]:
        os.lchown(p, uid, gid)


def _http_ok(
    url: str, path: str = "/_cluster/health", creds: LocalCredentials | None = None
) -> bool:
    request = urllib.request.Request(url + path)
    context = None
    if creds is not None:
        token = base64.b64encode(f"{creds.username}:{creds.password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
        context = ssl.create_default_context(cafile=creds.ca_certs)
    try:
        with urllib.request.urlopen(request, timeout=3, context=context) as resp:  # noqa: S310
            return bool(resp.status == 200 and json.loads(resp.read() or b"{}"))
    except Exception:
        return False

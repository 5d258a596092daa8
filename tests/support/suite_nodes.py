"""The suite's two default nodes, started before pytest so that two pytest processes share them.

``make test`` (scripts/run_suite.sh) runs the tests that need the session's vLLM server in a
pytest process of their own, beside the rest of the suite: the rest waits on nodes and on one
CLI command at a time and leaves about a third of this 2-core machine idle, which vLLM's
CPU-bound tests fill. Both processes must then use the SAME OpenSearch and Elasticsearch nodes,
and neither may stop them at its end while the other still runs; so this script starts them
first (both at once), hands their URLs to both processes as a user's URLs
(``SIRA_SEEK_TEST_<ENGINE>_URL``: a session never stops a node it was given), and stops at the
end exactly the nodes it started here.

    python tests/support/suite_nodes.py up STATE     # prints `export ...` lines for the shell
    python tests/support/suite_nodes.py down STATE   # stops the nodes `up` started

A URL the user already gives, or a Docker daemon (testcontainers: each session its own
container), leaves that engine to the sessions as before.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ENGINES = ("opensearch", "elasticsearch")

SUITE_JAVA_OPTS = "-XX:TieredStopAtLevel=1"
"""The suite's nodes run with C1 only (NodeSettings.java_opts): on 2 cores the C2 compiler's
threads compete with the suite for the whole session, and the nodes answer small requests. A
node start took 13 s instead of 16-20 s, and contract + SIRA figures + every --json (86 tests)
64-69 s instead of 75-81 s here. A user's own SIRA_SEEK_NODE_JAVA_OPTS wins."""

SHARED_ENV = "SIRA_SEEK_TEST_SHARED_NODES"
"""Set to 1 when the default nodes are shared by concurrent pytest processes: no test may stop
or restart them (the node-restart fault scenario then starts a node of its own)."""


def url_env(engine: str) -> str:
    return f"SIRA_SEEK_TEST_{engine.upper()}_URL"


def _up(engine: str) -> tuple[str, bool]:
    from sira_seek.config import NodeSettings
    from sira_seek.esplugin.local.node import LocalNode

    node = LocalNode(NodeSettings(), engine)
    started_here = node.running() is None
    return node.up().url, started_here


def up(state: Path) -> int:
    from sira_seek.esplugin.local.containers import docker_available

    os.environ.setdefault("SIRA_SEEK_NODE_JAVA_OPTS", SUITE_JAVA_OPTS)
    wanted = [e for e in ENGINES if not os.environ.get(url_env(e))]
    if wanted and docker_available():
        wanted = []
    started: list[str] = []
    exports = {SHARED_ENV: "1"}
    with ThreadPoolExecutor(len(ENGINES)) as pool:
        futures = {e: pool.submit(_up, e) for e in wanted}
        failed = False
        for engine, future in futures.items():
            try:
                url, started_here = future.result()
            except Exception as exc:  # the suite must fail loudly, never skip
                print(f"suite_nodes: could not start a real {engine} node: {exc}", file=sys.stderr)
                failed = True
                continue
            exports[url_env(engine)] = url
            if started_here:
                started.append(engine)
    state.write_text(json.dumps({"started": started}))
    if failed:
        return 1
    for name, value in exports.items():
        print(f"export {name}={shlex.quote(value)}")
    return 0


def down(state: Path) -> int:
    from sira_seek.config import NodeSettings
    from sira_seek.esplugin.local.node import LocalNode

    if not state.exists():
        return 0
    started = json.loads(state.read_text()).get("started", [])
    if os.environ.get("SIRA_SEEK_TEST_KEEP_NODES") == "1":
        return 0
    for engine in started:
        LocalNode(NodeSettings(), engine).down()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("up", "down"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    action = up if sys.argv[1] == "up" else down
    sys.exit(action(Path(sys.argv[2])))

"""``sira-seek serve``'s real runner (one or N workers) over a stand-in cluster whose health
check takes ``SLOW_CLUSTER_DELAY_S`` seconds: a request that is really in flight while the
server is told to stop, with no search node needed (tests/unit/service/test_serve_workers.py).

Run as ``python slow_cluster_serve.py WORKERS SHUTDOWN_TIMEOUT``; prints ``{"port": N}`` once
the port is bound. The stand-in replaces ``sira_seek.client.connect`` at this file's top
level, which every worker runs again when uvicorn spawns it (as ``__mp_main__``), so it
reaches every worker. Each process appends ``started PID`` (a health check began) and
``closed PID`` (its cluster connection was closed) to the file ``SLOW_CLUSTER_MARKS``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from types import SimpleNamespace
from typing import Any

import sira_seek.client

DELAY_S = float(os.environ.get("SLOW_CLUSTER_DELAY_S", "3"))
MARKS = os.environ.get("SLOW_CLUSTER_MARKS", os.devnull)


def mark(event: str) -> None:
    with open(MARKS, "a", encoding="utf-8") as out:
        out.write(f"{event} {os.getpid()}\n")


class SlowHealthBackend:
    """Just what ``/health`` and the service's lifespan use of a ``SearchBackend``."""

    info = SimpleNamespace(
        engine="opensearch", version="0", cluster_name="stand-in", url="http://stand-in"
    )

    def wait_for_health(self, status: str, timeout_s: float) -> str:
        mark("started")
        time.sleep(DELAY_S)
        return "green"

    def close(self) -> None:
        mark("closed")


def connect(*_args: Any, **_kwargs: Any) -> sira_seek.client.SiraSeek:
    return sira_seek.client.SiraSeek(SlowHealthBackend())  # type: ignore[arg-type]


sira_seek.client.connect = connect  # type: ignore[assignment]


if __name__ == "__main__":
    from sira_seek.service import runner
    from sira_seek.service.settings import ServeSettings

    workers, timeout = int(sys.argv[1]), int(sys.argv[2])
    settings = ServeSettings(port=0, workers=workers, shutdown_timeout=timeout)
    sock = runner.bind(settings.host, 0)
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    runner.run(settings, sock)

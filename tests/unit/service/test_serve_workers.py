"""``serve --workers N`` and graceful shutdown, without a search node.

- The options are validated once, in the parent: ``--workers`` at least 1 and
  ``--shutdown-timeout`` at least 0 (flags, variables and ``ServeSettings`` alike), refused
  before anything starts.
- What the parent validated is what a worker builds: the settings the command line makes
  are written, read back by the worker factory from the environment, and give the same
  service (keys, allow-list, body limit, Host list, LLM, cluster arguments, log setup).
- Prometheus counters of several worker processes are summed by ``/metrics``.
- SIGTERM: the listening socket is closed at once (connections refused) while the request
  in flight finishes with 200; every worker closes its cluster connection; exit 0; the log
  says it shut down. Run on the real runner over a stand-in cluster whose health check is
  slow (``slow_cluster_serve.py``), with one worker and with two.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from pydantic import ValidationError

import sira_seek.client
from sira_seek.cli.main import cli
from sira_seek.service import runner, worker
from sira_seek.service.logs import QuietClients, log_config
from sira_seek.service.metrics import ServiceMetrics
from sira_seek.service.settings import (
    SETTINGS_ENV,
    ServeSettings,
    ServiceConfig,
    dump_settings,
    load_settings,
    read_settings,
    write_settings,
)

HERE = Path(__file__).resolve().parent
KEY = "key-" + "k" * 28
PASSWORD = "pw-" + "s" * 20


# -- validation, in the parent -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env", "names"),
    [
        (["--workers", "0"], {}, "--workers"),
        (["--workers", "-3"], {}, "--workers"),
        ([], {"SIRA_SEEK_SERVE_WORKERS": "0"}, "--workers"),
        (["--shutdown-timeout", "-1"], {}, "--shutdown-timeout"),
        ([], {"SIRA_SEEK_SERVE_SHUTDOWN_TIMEOUT": "-5"}, "--shutdown-timeout"),
        (["--workers", "two"], {}, "--workers"),
    ],
)
def test_bad_workers_or_shutdown_timeout_stop_the_command_before_it_binds(
    args: list[str], env: dict[str, str], names: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    monkeypatch.setattr(runner, "bind", lambda *a: started.append(a))
    monkeypatch.setattr(runner, "run", lambda *a: started.append(a))
    result = CliRunner().invoke(cli, ["serve", "--port", "0", *args], env=env)
    assert result.exit_code == 2, result.output
    assert names in result.output
    assert started == []


@pytest.mark.parametrize(
    ("field", "value"), [("workers", 0), ("shutdown_timeout", -1), ("port", 70000)]
)
def test_serve_settings_refuse_what_the_flags_refuse(field: str, value: int) -> None:
    with pytest.raises(ValidationError) as err:
        ServeSettings.model_validate({field: value})
    assert field in str(err.value)


def test_shutdown_timeout_and_workers_reach_uvicorn() -> None:
    settings = ServeSettings(shutdown_timeout=7, workers=3, log_format="json")
    options = runner.uvicorn_options(settings)
    assert options["timeout_graceful_shutdown"] == 7 and options["workers"] == 3
    assert options["lifespan"] == "on"
    formatters = options["log_config"]["formatters"]
    assert formatters["default"]["()"].endswith("JsonFormatter")


# -- the parent's settings are the worker's app -----------------------------------------------


def full_settings(tmp_path: Path) -> ServeSettings:
    return ServeSettings(
        host="0.0.0.0",
        port=8123,
        workers=3,
        shutdown_timeout=5,
        access_log=False,
        log_format="json",
        log_level="info",
        cluster={
            "url": f"https://svc:{PASSWORD}@cluster.example:9200",
            "password": PASSWORD,
            "verify_certs": False,
            "ca_certs": str(tmp_path / "ca.pem"),
        },
        service=ServiceConfig(
            llm="openai:http://127.0.0.1:9/v1#m",
            indexes=("wikimh", "docs"),
            api_keys=(KEY,),
            max_body_bytes=4096,
            allowed_hosts=("api.example", "testserver"),
        ),
    )


def test_settings_round_trip_with_their_secrets_and_never_show_them(tmp_path: Path) -> None:
    settings = full_settings(tmp_path)
    assert load_settings(dump_settings(settings)) == settings
    assert load_settings(dump_settings(settings)).service.api_keys == (KEY,)
    path = write_settings(settings, tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the keys
    assert read_settings(path) == settings
    assert KEY not in repr(settings) and PASSWORD not in repr(settings)
    # Every other dump of the service config still leaves the keys out.
    assert KEY not in json.dumps(settings.service.model_dump(mode="json"))
    redact = settings.redactor()
    assert redact(f"{KEY} {PASSWORD}") == "*** ***"


class ConnectRecorder:
    """Stands in for ``sira_seek.client.connect``: records its arguments, no cluster."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from sira_seek.backend import EngineError

        self.calls.append(dict(kwargs, _positional=args))
        raise EngineError("no cluster in a unit test")


def cli_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], env: dict[str, str]
) -> ServeSettings:
    """The settings ``sira-seek serve ARGS`` validated, caught where it would start serving."""
    caught: list[ServeSettings] = []

    class Bound:
        def getsockname(self) -> tuple[str, int]:
            return ("127.0.0.1", 8123)

    monkeypatch.setattr(runner, "bind", lambda host, port: Bound())
    monkeypatch.setattr(runner, "run", lambda settings, sock: caught.append(settings))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["serve", *args], env=env)
    assert result.exit_code == 0, result.output
    assert len(caught) == 1
    return caught[0]


def test_the_worker_builds_the_service_the_parent_validated(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "keys.txt").write_text(f"{KEY}\n")
    (tmp_path / "ca.pem").write_text("not a real CA, never read here\n")
    args = [
        "--host", "0.0.0.0", "--port", "8123", "--workers", "3", "--shutdown-timeout", "5",
        "--index", "wikimh", "--index", "docs", "--api-keys-file", "keys.txt",
        "--max-body-bytes", "4096", "--allowed-host", "testserver",
        "--llm", "openai:http://127.0.0.1:9/v1#m", "--log-format", "json", "--no-access-log",
        "--url", "https://cluster.example:9200", "--username", "svc", "--insecure",
        "--ca-certs", "ca.pem",
    ]  # fmt: skip
    parent = cli_settings(monkeypatch, tmp_path, args, {"SIRA_SEEK_PASSWORD": PASSWORD})
    assert parent.workers == 3 and parent.shutdown_timeout == 5 and not parent.access_log
    assert parent.service.api_keys == (KEY,) and parent.service.indexes == ("wikimh", "docs")
    assert parent.cluster["ca_certs"] == str(tmp_path / "ca.pem")  # absolute for every worker
    # The arguments are exactly what sira_seek.client.connect takes.
    inspect.signature(sira_seek.client.connect).bind(**parent.cluster)

    path = write_settings(parent, tmp_path)
    monkeypatch.setenv(SETTINGS_ENV, str(path))
    redactors: list[Any] = []
    monkeypatch.setattr(worker, "redact_log_handlers", redactors.append)
    recorder = ConnectRecorder()
    monkeypatch.setattr(sira_seek.client, "connect", recorder)
    app = worker.app_from_environment()

    assert app.state.serve_settings == parent
    assert redactors and redactors[0](f"{KEY}/{PASSWORD}") == "***/***"
    client = TestClient(app)
    auth = {"Authorization": f"Bearer {KEY}"}
    assert client.post("/search", json={"query": "q"}).status_code == 401
    other = client.post("/search", json={"query": "q", "index": "other"}, headers=auth)
    assert other.status_code == 403
    big = client.post("/search", content=b"x" * 5000, headers=auth)
    assert big.status_code == 413
    spec = client.get("/openapi.json").json()
    index = spec["components"]["schemas"]["SearchBody"]["properties"]["index"]
    assert {"type": "string", "enum": ["wikimh", "docs"]} in index["anyOf"]
    assert client.get("/health", headers={**auth, "host": "evil.example"}).status_code == 400
    health = client.get("/health", headers=auth)
    assert health.status_code == 503 and PASSWORD not in health.text
    assert recorder.calls == [
        {
            "_positional": (),
            **parent.cluster,
            "url": "https://cluster.example:9200",
            "username": "svc",
            "password": PASSWORD,
            "verify_certs": False,
        }
    ]


def test_a_worker_without_readable_settings_stops_the_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from uvicorn.config import STARTUP_FAILURE

    for value in (None, str(tmp_path / "missing.json")):
        if value is None:
            monkeypatch.delenv(SETTINGS_ENV, raising=False)
        else:
            monkeypatch.setenv(SETTINGS_ENV, value)
        with pytest.raises(SystemExit) as stopped:
            worker.app_from_environment()
        assert stopped.value.code == STARTUP_FAILURE


# -- logs and metrics across processes ---------------------------------------------------------


def test_every_process_logs_alike_at_the_command_lines_level() -> None:
    quiet = log_config("text", "warning")
    assert quiet["root"]["handlers"] == ["default"]
    assert quiet["loggers"]["sira_seek"]["level"] == "WARNING"
    assert quiet["loggers"]["sira_seek.service"]["level"] == "INFO"  # start and stop lines
    assert "quiet_clients" in quiet["handlers"]["default"]["filters"]
    debug = log_config("json", "debug")
    assert debug["loggers"]["sira_seek"]["level"] == "DEBUG"
    assert debug["loggers"]["elastic_transport"]["level"] == "INFO"
    assert "quiet_clients" not in debug["handlers"]["default"]["filters"]

    def record(name: str, level: int) -> logging.LogRecord:
        return logging.LogRecord(name, level, __file__, 1, "m", None, None)

    keep = QuietClients()
    assert not keep.filter(record("elastic_transport.transport", logging.WARNING))
    assert keep.filter(record("opensearch", logging.ERROR))
    assert keep.filter(record("sira_seek.service.app", logging.WARNING))


WRITE_METRICS = """
from sira_seek.service.metrics import ServiceMetrics
m = ServiceMetrics()
assert m.multiprocess_dir
m.requests.labels("POST", "/search", "200").inc({n})
m.latency.labels("POST", "/search").observe(0.02)
"""


def test_metrics_are_summed_over_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for n in (3, 4):  # two worker processes, each with its own pid and files
        code = WRITE_METRICS.format(n=n)
        subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    text = ServiceMetrics().exposition()[0].decode()
    assert 'sira_seek_http_requests_total{method="POST",route="/search",status="200"} 7.0' in text
    assert 'sira_seek_http_request_seconds_count{method="POST",route="/search"} 2.0' in text


# -- graceful shutdown -------------------------------------------------------------------------


def refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except (ConnectionRefusedError, ConnectionResetError):
        return True


def marks(path: Path, event: str) -> list[str]:
    if not path.exists():
        return []
    return [line.split()[1] for line in path.read_text().splitlines() if line.startswith(event)]


def wait_for(check: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_finishes_the_requests_in_flight_refuses_new_ones_and_exits_0(
    workers: int, tmp_path: Path
) -> None:
    mark_file, err_file = tmp_path / "marks", tmp_path / "stderr.log"
    env = {**os.environ, "SLOW_CLUSTER_DELAY_S": "4", "SLOW_CLUSTER_MARKS": str(mark_file)}
    script = str(HERE / "slow_cluster_serve.py")
    with err_file.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, script, str(workers), "30"],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=tmp_path,
        )  # fmt: skip
    try:
        assert proc.stdout is not None
        port = json.loads(proc.stdout.readline())["port"]
        base = f"http://127.0.0.1:{port}"
        # Every worker connected its stand-in cluster at start-up (the lifespan's health
        # probe is not a request); wait until the port answers.
        wait_for(lambda: not refused(port), 60, "the server to listen")
        answers: list[httpx.Response | BaseException] = []

        def slow_request() -> None:
            try:
                answers.append(httpx.get(f"{base}/health", timeout=60))
            except httpx.HTTPError as exc:
                answers.append(exc)

        in_flight = [threading.Thread(target=slow_request) for _ in range(3)]
        for thread in in_flight:
            thread.start()
        wait_for(lambda: len(marks(mark_file, "started")) >= 3, 30, "3 requests in flight")
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: refused(port), 3, "new connections to be refused")
        assert answers == []  # refused while the requests in flight still run
        for thread in in_flight:
            thread.join(timeout=60)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    statuses = [a.status_code if isinstance(a, httpx.Response) else repr(a) for a in answers]
    assert statuses == [200, 200, 200]
    log = err_file.read_text()
    assert "Shutting down" in log and "Finished server process" in log, log
    # Each worker closed its cluster connection once its requests were done.
    assert len(marks(mark_file, "closed")) == workers, mark_file.read_text()
    assert log.count("stopped: the cluster connection is closed") == workers
    if workers > 1:
        assert "Received SIGTERM" in log and "Stopping parent process" in log
    assert "Traceback" not in log, log

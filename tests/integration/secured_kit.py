"""What the secured-node tests of both engines share: connection settings and CLI
environments for the admin and the read-only user, the installed commands, the secret scan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sira_seek.config import ClusterSettings
from sira_seek.esplugin.local.node import NodeState
from sira_seek.esplugin.local.security import LocalCredentials

BIN = Path(sys.executable).parent


def cluster_settings(
    state: NodeState, creds: LocalCredentials, *, reader: bool = False, **extra: object
) -> ClusterSettings:
    """The admin's (or with ``reader`` the read-only user's) settings, CA file included."""
    values: dict[str, object] = {
        "url": state.url,
        "username": creds.reader_username if reader else creds.username,
        "password": creds.reader_password if reader else creds.password,
        "ca_certs": creds.ca_certs,
    }
    values.update(extra)
    return ClusterSettings(**values)  # type: ignore[arg-type]


def cli_env(
    state: NodeState, creds: LocalCredentials, home: Path, *, reader: bool
) -> dict[str, str]:
    """A minimal environment for the CLI (secrets via the environment, never argv)."""
    return {
        "SIRA_SEEK_URL": state.url,
        "SIRA_SEEK_USERNAME": creds.reader_username if reader else creds.username,
        "SIRA_SEEK_PASSWORD": creds.reader_password if reader else creds.password,
        "SIRA_SEEK_CA_CERTS": creds.ca_certs,
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
    }


def run_installed(
    exe: str, args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """One of the venv's console scripts, as a user runs it."""
    return subprocess.run(
        [str(BIN / exe), *args], capture_output=True, text=True, env=env, check=False, timeout=180
    )


def assert_no_secret(texts: str | list[str], *secrets: str) -> None:
    """The secret scan: no secret (password, API key) in anything printed or written."""
    joined = texts if isinstance(texts, str) else "\n".join(texts)
    for secret in secrets:
        assert secret and secret not in joined, "a secret appears in the output"


def node_fingerprint(creds: LocalCredentials) -> str:
    """SHA-256 fingerprint of the node's certificate, as a user would pin it."""
    node_crt = str(Path(creds.ca_certs).with_name("node.crt"))
    out = subprocess.run(
        ["openssl", "x509", "-in", node_crt, "-noout", "-fingerprint", "-sha256"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split("=", 1)[1].strip()


def run_installed_side_by_side(
    calls: list[tuple[str, list[str], dict[str, str]]],
) -> list[subprocess.CompletedProcess[str]]:
    """Independent console-script runs ``(exe, args, env)`` started together, each its own
    process as in parallel shells, results in the order given: what each prints and returns
    is what it would one after the other, in less time (most of a run is the interpreter
    starting, and the node waits meanwhile)."""
    procs = [
        subprocess.Popen(
            [str(BIN / exe), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for exe, args, env in calls
    ]
    try:
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

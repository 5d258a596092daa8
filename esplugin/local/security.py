"""TLS and a user for a secured local Elasticsearch node (x-pack security ships in its archive).

Lets sira-seek be tested the way production clusters run: HTTPS with a private CA, basic auth,
API keys. Certificates come from the system's ``openssl``; the users go into the file realm.
API keys live in the ``.security`` index, which the minimal archive can create only with an
analysis plugin it lacks: the test suite adds a test-only one through ``LocalNode``'s
``prepare_distribution`` hook (tests/support/analysis_shim); without it, TLS, users and roles
work but minting an API key fails.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel

from sira_seek.esplugin.engines.errors import NodeStartError

ADMIN_USER = "sira_admin"
READER_USER = "sira_reader"
# File-realm role for read-only use (search, DF statistics). Users and roles live in files so
# they work from the first start, before (and without) the .security index.
READER_ROLE = """sira_reader:
  cluster: ["monitor"]
  indices:
    - names: ["*"]
      privileges: ["read", "view_index_metadata", "monitor"]
"""


class LocalCredentials(BaseModel):
    """What a client needs to reach the secured node; kept in a 0600 file, never logged."""

    username: str
    password: str
    ca_certs: str
    reader_username: str = READER_USER
    reader_password: str = ""


def _openssl(*args: str, cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise NodeStartError("a secured local node needs `openssl` to make its certificates")
    proc = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise NodeStartError(f"openssl {args[0]} failed: {proc.stderr.strip()[-400:]}")


def make_certificates(certs: Path) -> None:
    """A private CA and a node certificate for localhost / 127.0.0.1 (once per node).

    Private keys are readable by their owner only (also repaired on nodes made before)."""
    if (certs / "node.crt").exists():
        _owner_only(certs / "ca.key", certs / "node.key")
        return
    certs.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "3650",
        "-subj",
        "/CN=sira-seek local CA",
        cwd=certs,
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "node.key",
        "-out",
        "node.csr",
        "-subj",
        "/CN=localhost",
        cwd=certs,
    )
    (certs / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _openssl(
        "x509",
        "-req",
        "-in",
        "node.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "node.crt",
        "-days",
        "3650",
        "-extfile",
        "san.ext",
        cwd=certs,
    )
    _owner_only(certs / "ca.key", certs / "node.key")


def _owner_only(*paths: Path) -> None:
    for path in paths:
        if path.exists():
            path.chmod(0o600)


def security_settings() -> dict[str, str]:
    """Node settings: security and HTTPS on (paths relative to the node's config folder)."""
    return {
        "xpack.security.enabled": "true",
        "xpack.security.http.ssl.enabled": "true",
        "xpack.security.http.ssl.key": "certs/node.key",
        "xpack.security.http.ssl.certificate": "certs/node.crt",
        "xpack.security.http.ssl.certificate_authorities": "certs/ca.crt",
        "xpack.security.authc.api_key.enabled": "true",
    }


def ensure_admin_user(
    node_dir: Path, dist: Path, env: dict[str, str], user: int | None, group: int | None
) -> LocalCredentials:
    """Create the superuser in the file realm once; return the stored credentials."""
    cred_file = node_dir / "credentials.json"
    if cred_file.exists():
        _owner_only(cred_file)
        return LocalCredentials.model_validate_json(cred_file.read_text())
    conf = node_dir / "config"
    roles = conf / "roles.yml"
    roles.write_text(roles.read_text() + "\n" + READER_ROLE if roles.exists() else READER_ROLE)
    if user is not None and group is not None:
        os.chown(roles, user, group)
    password, reader_password = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    for name, secret, role in (
        (ADMIN_USER, password, "superuser"),
        (READER_USER, reader_password, "sira_reader"),
    ):
        proc = subprocess.run(
            [str(dist / "bin" / "elasticsearch-users"), "useradd", name, "-p", secret, "-r", role],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            user=user,
            group=group,
        )
        if proc.returncode != 0:
            raise NodeStartError(f"could not add the node's user {name}: {proc.stdout[-300:]}")
    creds = LocalCredentials(
        username=ADMIN_USER,
        password=password,
        ca_certs=str(conf / "certs" / "ca.crt"),
        reader_password=reader_password,
    )
    fd = os.open(cred_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(creds.model_dump(), fh)
    return creds


def load_credentials(node_dir: Path) -> LocalCredentials | None:
    cred_file = node_dir / "credentials.json"
    if not cred_file.exists():
        return None
    return LocalCredentials.model_validate_json(cred_file.read_text())

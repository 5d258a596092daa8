"""TLS and users for a secured local OpenSearch node, with the official security plugin.

The integ-test-zip archive has no security plugin, but Maven Central serves the plugin's zip
(``org.opensearch.plugin:opensearch-security``) for some releases; a plugin must match its
engine exactly, so the secured node runs the newest OpenSearch whose plugin Maven serves.
Certificates come from the system's ``openssl``; users, roles and role mappings are YAML the
plugin loads into its security index on first start (``allow_default_init_securityindex``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from sira_seek.esplugin.engines.errors import NodeStartError

from .security import ADMIN_USER, READER_USER, LocalCredentials

# The newest OpenSearch release whose security plugin Maven Central serves (2.19.6 and 3.x
# are not published there); `node up --engine opensearch --secure` defaults to it.
SECURED_OPENSEARCH_VERSION = "2.19.4"
SECURITY_PLUGIN = "org.opensearch.plugin:opensearch-security"
NODE_DN = "CN=localhost,O=sira-seek"
ADMIN_DN = "CN=sira-seek-admin,O=sira-seek"

# Only HTTP basic auth against the plugin's internal user database; nothing anonymous.
CONFIG_YML = """_meta:
  type: "config"
  config_version: 2
config:
  dynamic:
    http:
      anonymous_auth_enabled: false
    authc:
      basic_internal_auth_domain:
        description: "HTTP basic auth against the internal users database"
        http_enabled: true
        transport_enabled: true
        order: 0
        http_authenticator:
          type: basic
          challenge: true
        authentication_backend:
          type: intern
"""

# Read-only use of sira-seek: search, point-in-time scans, DF look-ups (`_mtermvectors`,
# a composite action checked at cluster level), mappings and analyzers. No write, no manage.
ROLES_YML = """_meta:
  type: "roles"
  config_version: 2
sira_reader:
  reserved: false
  description: "sira-seek read-only: search, term statistics, mappings view"
  cluster_permissions:
    - "cluster_monitor"
    - "cluster_composite_ops_ro"
  index_permissions:
    - index_patterns: ["*"]
      allowed_actions:
        - "read"
        - "indices_monitor"
        - "indices:admin/get"
        - "indices:admin/mappings/get"
        - "indices:admin/aliases/get"
        - "indices:admin/analyze"
        - "indices:admin/resolve/index"
"""

ROLES_MAPPING_YML = f"""_meta:
  type: "rolesmapping"
  config_version: 2
all_access:
  reserved: false
  users: ["{ADMIN_USER}"]
  description: "sira-seek's admin user"
sira_reader:
  reserved: false
  users: ["{READER_USER}"]
"""


def security_plugin_coords(version: str) -> str:
    """Maven coordinates of the security plugin built for OpenSearch ``version``."""
    return f"{SECURITY_PLUGIN}:{version}.0:zip"


def install_security_plugin(
    base: Path, version: str, java: Path, *, fetch: Callable[[str], Path]
) -> Path:
    """A copy of the assembled distribution ``base`` with the security plugin (cached).

    A copy, so a plain node of the same version keeps running without the plugin.
    ``fetch`` copies a Maven artifact into the download cache and returns its path.
    """
    final = base.with_name(base.name + "-security")
    if (final / "plugins" / "opensearch-security").is_dir():
        return final
    try:
        plugin_zip = fetch(security_plugin_coords(version))
    except NodeStartError as exc:
        raise NodeStartError(
            f"no security plugin for OpenSearch {version}: it must match the engine exactly, "
            f"and Maven Central serves it for {SECURED_OPENSEARCH_VERSION} (the default for "
            f"--secure) but not for every release (not 2.19.6 or 3.x). {exc}"
        ) from None
    with tempfile.TemporaryDirectory(dir=base.parent) as tmp:
        staged = Path(tmp) / final.name
        shutil.copytree(base, staged, symlinks=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "OPENSEARCH_JAVA_HOME": str(java),
            "OPENSEARCH_PATH_CONF": str(staged / "config"),
        }
        proc = subprocess.run(
            [str(staged / "bin" / "opensearch-plugin"), "install", "--batch", plugin_zip.as_uri()],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
            raise NodeStartError(f"could not install the OpenSearch security plugin:\n{tail}")
        if final.exists():
            shutil.rmtree(final)
        staged.rename(final)
    for p in [final, *final.rglob("*")]:  # the service user must read it all
        extra = stat.S_IRGRP | stat.S_IROTH | (stat.S_IXGRP | stat.S_IXOTH if p.is_dir() else 0)
        os.chmod(p, p.stat().st_mode | extra)
    return final


def _openssl(command: str, *args: str, cwd: Path) -> None:
    """Run ``openssl`` with ``command`` split on spaces, then ``args`` as given."""
    exe = shutil.which("openssl")
    if exe is None:
        raise NodeStartError("a secured local node needs `openssl` to make its certificates")
    argv = [exe, *command.split(), *args]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise NodeStartError(f"openssl {argv[1]} failed: {proc.stderr.strip()[-400:]}")


def _signed_certificate(certs: Path, name: str, dn: str, extensions: str) -> None:
    """``name.crt`` signed by the CA, with its key as unencrypted PKCS#8 (the plugin's format)."""
    subject = "/" + "/".join(reversed(dn.split(",")))
    _openssl(f"genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out {name}.rsa.key", cwd=certs)
    _openssl(f"pkcs8 -topk8 -nocrypt -in {name}.rsa.key -out {name}.key", cwd=certs)
    (certs / f"{name}.rsa.key").unlink()
    _openssl(f"req -new -key {name}.key -out {name}.csr", "-subj", subject, cwd=certs)
    (certs / f"{name}.ext").write_text(extensions)
    _openssl(
        f"x509 -req -in {name}.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 "
        f"-extfile {name}.ext -out {name}.crt",
        cwd=certs,
    )


def make_certificates(certs: Path) -> None:
    """A private CA, a node certificate (transport and HTTPS) and an admin certificate."""
    if (certs / "node.crt").exists() and (certs / "admin.crt").exists():
        return
    certs.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -sha256",
        "-subj",
        "/CN=sira-seek local CA",
        cwd=certs,
    )
    _signed_certificate(
        certs,
        "node",
        NODE_DN,
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth,clientAuth\n",
    )
    _signed_certificate(
        certs,
        "admin",
        ADMIN_DN,
        "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
    )
    for key in certs.glob("*.key"):
        key.chmod(0o600)


def security_settings() -> dict[str, str]:
    """Node settings: TLS on transport and HTTP, the admin DN, first-start initialisation."""
    return {
        "plugins.security.ssl.transport.pemcert_filepath": "certs/node.crt",
        "plugins.security.ssl.transport.pemkey_filepath": "certs/node.key",
        "plugins.security.ssl.transport.pemtrustedcas_filepath": "certs/ca.crt",
        "plugins.security.ssl.transport.enforce_hostname_verification": "false",
        "plugins.security.ssl.http.enabled": "true",
        "plugins.security.ssl.http.pemcert_filepath": "certs/node.crt",
        "plugins.security.ssl.http.pemkey_filepath": "certs/node.key",
        "plugins.security.ssl.http.pemtrustedcas_filepath": "certs/ca.crt",
        "plugins.security.authcz.admin_dn": ADMIN_DN,
        "plugins.security.nodes_dn": NODE_DN,
        "plugins.security.allow_default_init_securityindex": "true",
        "plugins.security.restapi.roles_enabled": "all_access",
        "plugins.security.audit.type": "noop",
    }


def _bcrypt_hash(dist: Path, java: str, password: str) -> str:
    """Hash with the plugin's own tool; the password goes by environment, never argv."""
    hasher = dist / "plugins" / "opensearch-security" / "tools" / "hash.sh"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "OPENSEARCH_JAVA_HOME": java,
        "SIRA_SEEK_HASH_INPUT": password,
    }
    proc = subprocess.run(
        ["bash", str(hasher), "-env", "SIRA_SEEK_HASH_INPUT"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    hashes = [line for line in proc.stdout.splitlines() if line.startswith("$2")]
    if proc.returncode != 0 or not hashes:
        raise NodeStartError(f"could not hash a password with {hasher}: {proc.stderr[-300:]}")
    return hashes[-1].strip()


def ensure_users(
    node_dir: Path, dist: Path, env: dict[str, str], user: int | None, group: int | None
) -> LocalCredentials:
    """Write users, roles and mappings once (before first start); return the credentials."""
    cred_file = node_dir / "credentials.json"
    if cred_file.exists():
        cred_file.chmod(0o600)  # heals files loosened by older versions of sira-seek
        return LocalCredentials.model_validate_json(cred_file.read_text())
    sec = node_dir / "config" / "opensearch-security"
    if not sec.is_dir():
        raise NodeStartError(f"{sec} is missing: the security plugin is not installed")
    password, reader_password = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    java = env["OPENSEARCH_JAVA_HOME"]
    users: dict[str, dict[str, object]] = {"_meta": {"type": "internalusers", "config_version": 2}}
    for name, secret in ((ADMIN_USER, password), (READER_USER, reader_password)):
        users[name] = {"hash": _bcrypt_hash(dist, java, secret), "reserved": False}
    files = {
        "internal_users.yml": json.dumps(users, indent=2) + "\n",  # JSON is YAML
        "config.yml": CONFIG_YML,
        "roles.yml": ROLES_YML,
        "roles_mapping.yml": ROLES_MAPPING_YML,
    }
    for name, text in files.items():
        path = sec / name
        path.write_text(text)
        path.chmod(0o600)
        if user is not None and group is not None:
            os.chown(path, user, group)
    creds = LocalCredentials(
        username=ADMIN_USER,
        password=password,
        ca_certs=str(node_dir / "config" / "certs" / "ca.crt"),
        reader_password=reader_password,
    )
    fd = os.open(cred_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(creds.model_dump(), fh)
    return creds

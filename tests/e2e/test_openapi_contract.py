"""The HTTP API checked by a client nobody here wrote: schemathesis, from the live OpenAPI
document, with every check (status codes and error bodies as declared, schema-valid
requests accepted, schema-violating ones refused, ...), against ``sira-seek serve`` with
API keys and an index allow-list on a real node.

Bounded (``--max-examples``) to fit the suite; ``/ask`` is left out because each
schema-valid question runs SEEK with an LLM (its validation is the same code as /search's,
checked in tests/unit/service and tests/e2e/test_serve.py). The seed is printed, so a
failure replays with ``schemathesis run ... --seed N``.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from cli_runner import sira_seek_exe

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

KEY = "st-" + os.urandom(16).hex()


def _schemathesis() -> str:
    found = Path(sys.executable).parent / "schemathesis"
    exe = str(found) if found.exists() else shutil.which("schemathesis")
    if not exe:
        pytest.fail("schemathesis is not installed (the test extra installs it)", pytrace=False)
    return exe


def test_schemathesis_finds_no_failure_in_the_openapi_contract(
    node_urls: dict[str, str], wikimh_indexes: dict[str, str], tmp_path: Path
) -> None:
    keys = tmp_path / "keys"
    keys.write_text(KEY + "\n", encoding="utf-8")
    index = wikimh_indexes["opensearch"]
    log = (tmp_path / "serve.log").open("w")
    port = 18000 + random.randrange(2000)
    serve = subprocess.Popen(
        [sira_seek_exe(), "serve", "--port", str(port), "--url", node_urls["opensearch"],
         "--index", index, "--api-keys-file", str(keys)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                httpx.get(f"{base}/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                assert serve.poll() is None, (tmp_path / "serve.log").read_text()
                time.sleep(0.3)
        seed = random.randrange(2**31)
        print(f"schemathesis seed: {seed}")
        run = subprocess.run(
            [_schemathesis(), "run", f"{base}/openapi.json", "--checks", "all",
             "-H", f"Authorization: Bearer {KEY}", "--max-examples", "40",
             "--seed", str(seed), "--exclude-path", "/ask", "--workers", "1",
             "--request-timeout", "60"],
            capture_output=True, text=True, timeout=900, cwd=tmp_path, check=False,
        )  # fmt: skip
    finally:
        serve.terminate()
        serve.wait(timeout=30)
        log.close()
    assert run.returncode == 0, run.stdout[-6000:]
    assert "generated" in run.stdout and KEY not in run.stdout

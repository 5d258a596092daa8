"""The docs' Python example, taken from docs/tutorials/python.md and run as a user would (on
one engine: the example uses the engine-neutral facade; tests/engine_matrix.py).

The first code block under "A first example" runs in a fresh interpreter with
``SIRA_SEEK_URL`` pointing at the session's node; what it prints must show both methods
working: the ingest count, BM25 and SIRA hits, the DF decisions, the Dev Tools request line
and the metrics. If the docs drift from the API, this fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from docs_pages import section
from engine_matrix import ONE_ENGINE

from sira_seek.backend import SearchBackend

pytestmark = [pytest.mark.e2e, ONE_ENGINE]

PYTHON_PAGE, EXAMPLE = "tutorials/python.md", "A first example"


def readme_python_example() -> str:
    text = section(PYTHON_PAGE, EXAMPLE)
    found = re.search(r"```python\n(.*?)```", text, re.S)
    assert found, f"docs/{PYTHON_PAGE} '{EXAMPLE}' has no python code block"
    return found.group(1)


def test_the_readme_python_example_runs_and_prints_what_it_says(
    node_urls: dict[str, str], engine: str, backend: SearchBackend
) -> None:
    code = readme_python_example()
    assert "sira_seek.connect()" in code  # the documented entry point, not an internal one
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "SIRA_SEEK_URL": node_urls[engine]},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    ingested = re.fullmatch(r"ingested 8 into (readme-[0-9a-f]{8})", lines[0])
    assert ingested, done.stdout
    index = ingested.group(1)

    bm25 = re.fullmatch(r"bm25 \[(.*)\]", lines[1])
    sira = re.fullmatch(r"sira \[(.*)\]", lines[2])
    assert bm25 and sira, done.stdout
    assert {"'d1'", "'d2'"} <= set(bm25.group(1).split(", "))  # both judged documents
    assert sira.group(1).split(", ")[:2] in (["'d2'", "'d1'"], ["'d1'", "'d2'"])

    decisions = {
        m.group(2): m.group(1) for m in re.finditer(r"^  (\w+)\s+'([^']+)': ", done.stdout, re.M)
    }
    assert decisions == {
        "literary periodical": "kept",
        "Bauer Media Group": "kept",
        "1844": "kept",
        "magazine": "in_query",  # in the question already: adds nothing
    }
    assert f"GET {index}/_search?" in done.stdout
    metrics = dict(re.findall(r"^(bm25|sira) nDCG@10 ([0-9.]+) R@10", done.stdout, re.M))
    assert set(metrics) == {"bm25", "sira"}
    assert all(0.9 <= float(v) <= 1.0 for v in metrics.values()), metrics
    assert not backend.index_exists(index)  # the example cleans up after itself

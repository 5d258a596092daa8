"""``import sira_seek`` is light and side-effect free, and the library never configures logging.

Run in fresh interpreters: this test process has long imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def run_python(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stderr == "", done.stderr  # importing prints nothing, warns nothing
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_import_loads_no_engine_client_or_pydantic_and_shows_the_entry_point() -> None:
    found = run_python(
        """
        import json, sys, pydoc
        import sira_seek
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in
                       ("pydantic", "elasticsearch", "opensearchpy", "httpx", "ir_measures"))
        ours = sorted(m for m in sys.modules if m.startswith("sira_seek"))
        text = pydoc.render_doc(sira_seek, renderer=pydoc.plaintext)
        print(json.dumps({"heavy": heavy, "ours": ours, "help": text,
                          "all": sorted(sira_seek.__all__)}))
        """
    )
    assert found["heavy"] == [] and found["ours"] == ["sira_seek", "sira_seek.lazy_exports"]
    help_text = str(found["help"])
    assert "sira_seek.connect(" in help_text and "connect(url: 'str | None' = None" in help_text
    assert found["all"] == sorted(
        ["IngestReport", "RunReport", "SeekResult", "SiraHit", "SiraResult", "SiraSeek",
         "__version__", "connect"]
    )  # fmt: skip


def test_public_names_resolve_lazily_to_the_library_types() -> None:
    found = run_python(
        """
        import json
        import sira_seek
        from sira_seek.client import SiraSeek
        from sira_seek.sira.results import SiraResult
        names = {n: getattr(sira_seek, n).__module__ for n in sira_seek.__all__
                 if n not in ("__version__", "connect")}
        import inspect, sira_seek.client
        print(json.dumps({"names": names, "same": sira_seek.SiraSeek is SiraSeek
                          and sira_seek.SiraResult is SiraResult,
                          "signatures": [str(inspect.signature(f)) for f in
                                         (sira_seek.connect, sira_seek.client.connect)]}))
        """
    )
    assert found["same"] is True
    top, impl = found["signatures"]  # type: ignore[misc]
    assert top == impl  # the package's connect() forwards every argument of the real one
    assert found["names"] == {
        "IngestReport": "sira_seek.ingest",
        "RunReport": "sira_seek.sync.run_report",
        "SeekResult": "sira_seek.seek.results",
        "SiraHit": "sira_seek.sira.results",
        "SiraResult": "sira_seek.sira.results",
        "SiraSeek": "sira_seek.client",
    }


def test_importing_every_library_module_configures_no_logging_handler() -> None:
    found = run_python(
        """
        import importlib, json, logging, pkgutil, sys
        import sira_seek
        skipped = ("sira_seek.cli",)
        names = [m.name for m in pkgutil.walk_packages(sira_seek.__path__, "sira_seek.")
                 if not m.name.startswith(skipped)]
        for name in names:
            importlib.import_module(name)
        loggers = [logging.getLogger()] + [
            logging.getLogger(n) for n in logging.root.manager.loggerDict
            if n.startswith("sira_seek")]
        print(json.dumps({
            "modules": len(names),
            "handlers": {l.name: [type(h).__name__ for h in l.handlers]
                         for l in loggers if l.handlers},
            "root_level": logging.getLogger().level,
            # a logger named after no module was not made with getLogger(__name__)
            "bad_names": sorted(n for n, l in logging.root.manager.loggerDict.items()
                                if n.startswith("sira") and isinstance(l, logging.Logger)
                                and n not in sys.modules),
            "named": sum(n.startswith("sira_seek.") for n in logging.root.manager.loggerDict),
        }))
        """
    )
    assert int(str(found["modules"])) > 80  # really walked the library
    assert found["handlers"] == {}
    assert found["root_level"] == 30  # WARNING, Python's default: nobody called basicConfig
    assert found["bad_names"] == [] and int(str(found["named"])) >= 5

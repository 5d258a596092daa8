"""A planted credential never reaches what the command line leaves behind: the files the
library writes (``eval qa --predictions``, run records, HTML reports, ``sira-sync --report``,
the SEEK checkpoint, the sync failures file), a ``--debug`` traceback, and the output of every
command (each one goes through ``friendly_errors``, the one exception named).

Sibling of test_secrets_never_leave.py (its planted values and closed port). The LLM is the
scripted double above the ``LLMClient`` protocol (tests/unit/seek/seek_llm_double.py), made
to fail with an error text that spells the password as a bare value, not in a URL: only the
command's ``Redactor`` (built from ``--llm``) can mask it, not a shape.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

UNIT = Path(__file__).resolve().parent
sys.path.insert(0, str(UNIT / "seek"))
from seek_llm_double import ScriptedSeekLLMDouble  # noqa: E402

from sira_seek.cli.main import cli  # noqa: E402
from sira_seek.llm.errors import LLMCallError  # noqa: E402
from sira_seek.metrics.run_record import RunRecord  # noqa: E402
from sira_seek.redaction import Redactor, redacted_output  # noqa: E402
from sira_seek.seek import api  # noqa: E402
from sira_seek.seek.checkpoint import SeekCheckpoint  # noqa: E402
from sira_seek.seek.results import SeekResult  # noqa: E402
from sira_seek.sync.checkpoint import RunStateStore  # noqa: E402
from sira_seek.sync.records import EnrichmentFingerprint, FailureRecord  # noqa: E402
from sira_seek.sync.run_report import RunReport  # noqa: E402
from sira_seek.sync.slicing import SliceSpec  # noqa: E402

CLOSED = "127.0.0.1:9"
LLM_PW = "LlmPw-files-3e91"
URL_PW = "UrlPw-files-7c20"
LLM = f"openai:http://u:{LLM_PW}@{CLOSED}/v1#m"
CLUSTER = f"http://elastic:{URL_PW}@{CLOSED}"
SECRETS = (LLM_PW, URL_PW)


def assert_clean(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} leaked in: {text[:600]}"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing from the environment masks for the command: only what it was given does."""
    for name in ("SIRA_SEEK_LLM", "SIRA_SEEK_LLM_BACKEND", "SIRA_SEEK_URL", "SIRA_SEEK_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SIRA_SEEK_LLM_CACHE", "false")


def test_eval_qa_predictions_mask_the_llm_password_the_error_spells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def answer(text: str) -> str:
        if "Spain" in text:
            raise LLMCallError(f"server said: wrong password {LLM_PW} for user u")
        return "<answer> Paris </answer>"

    llm = ScriptedSeekLLMDouble({"answer": answer})
    monkeypatch.setattr(api, "create_llm_client", lambda *a, **k: llm)
    qa = tmp_path / "qa.jsonl"
    rows = [
        {"id": "fr", "question": "Capital of France?", "golden_answers": ["Paris"]},
        {"id": "es", "question": "Capital of Spain?", "golden_answers": ["Madrid"]},
    ]
    qa.write_text("".join(json.dumps(r) + "\n" for r in rows))
    predictions = tmp_path / "out" / "predictions.jsonl"
    args = ["eval", "qa", "--qa", str(qa), "--method", "vanilla-llm", "--quiet", "--json"]
    args += ["--llm", LLM, "--predictions", str(predictions)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 3, result.output  # one question failed
    written = predictions.read_text()
    failed = [json.loads(line) for line in written.splitlines() if "Spain" in line]
    assert len(failed) == 1 and "wrong password *** for user u" in json.dumps(failed[0])
    assert_clean(written, result.stdout, result.stderr)


def test_a_run_record_is_masked_with_the_running_commands_secrets(tmp_path: Path) -> None:
    record = RunRecord(
        name=f"sira-{URL_PW}",  # a bare value: only the command's Redactor knows it
        method="sira",
        settings={"llm": LLM, "tau": 0.3},
    )
    path = tmp_path / "run.json"
    with redacted_output(Redactor([URL_PW])):
        record.save(path)
    assert_clean(path.read_text())
    again = RunRecord.load(path)  # still a run record
    assert again.settings == {"llm": "openai:http://***@127.0.0.1:9/v1#m", "tau": 0.3}


def test_the_html_report_masks_what_a_saved_run_carries(tmp_path: Path) -> None:
    """A run file written by an older version (unmasked) still makes a masked report."""
    record = RunRecord(name="bm25", method="bm25", settings={"llm": LLM}, metrics={"ndcg@10": 0.5})
    run = tmp_path / "run.json"
    run.write_text(record.model_dump_json())  # as an unmasking writer left it
    out = tmp_path / "report.html"
    sira = record.model_copy(update={"name": f"run at {CLUSTER}", "method": "sira"})
    run2 = tmp_path / "run2.json"
    run2.write_text(sira.model_dump_json())
    result = CliRunner().invoke(cli, ["report", str(run), str(run2), "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert "run at http://***@127.0.0.1:9" in html
    assert_clean(html, result.output)


def test_sync_report_checkpoint_and_failures_files_are_masked(tmp_path: Path) -> None:
    from sira_seek.cli.sync import _render_report

    fingerprint = EnrichmentFingerprint(model="m", prompt_id="p", enrichment_version=1)
    report = RunReport(
        index="i",
        slice="0/1",
        run_id="r",
        fingerprint=fingerprint,
        fields=["text"],
        tau=0.3,
        doc_count=1,
        started_at="now",
        write_error_samples=[f"refused by {CLUSTER}/i/_bulk"],
    )
    path = tmp_path / "report.json"
    _render_report(report, path, as_json=False)
    store = RunStateStore(tmp_path / "state", "i", SliceSpec(index=0, count=1))
    raw = f"<html>502 from http://u:{LLM_PW}@{CLOSED}/v1</html>"
    failure = FailureRecord(
        doc_id="d", kind="llm", message="bad", raw_text=raw, index="i", source_hash="h",
        model="m", prompt_id="p",
    )  # fmt: skip
    with redacted_output(Redactor([LLM_PW])):
        store.record_failures([failure])
    checkpoint = SeekCheckpoint(tmp_path / "seek.jsonl", method="seek", variant=None)
    checkpoint.append(
        SeekResult(id="q", question="?", method="seek", error=f"cluster {CLUSTER} is down")
    )
    written = [path.read_text(), store.failures_path.read_text(), checkpoint.path.read_text()]
    assert_clean(*written)
    assert json.loads(written[0])["write_error_samples"] == [
        "refused by http://***@127.0.0.1:9/i/_bulk"
    ]
    assert store.read_failures()[0].raw_text == "<html>502 from http://***@127.0.0.1:9/v1</html>"


def test_a_debug_traceback_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --debug the known failure leaves the command as an exception; Python's last
    handler prints it, with the command's ``Redactor`` (the password given as a flag)."""
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    args = ["--debug", "search", "q", "--index", "x", "--url", f"http://{CLOSED}"]
    args += ["--username", "u", "--password", URL_PW, "--llm", LLM]
    result = CliRunner().invoke(cli, args)
    assert result.exc_info is not None and result.exit_code == 1
    printed = subprocess_free_excepthook_output(result.exc_info)
    assert "Traceback (most recent call last)" in printed and "127.0.0.1:9" in printed
    assert_clean(printed)


def subprocess_free_excepthook_output(exc_info: Any) -> str:
    """What ``sys.excepthook`` prints for ``exc_info`` (as at the process's end)."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stderr(buffer):
        sys.excepthook(*exc_info)
    return buffer.getvalue()


def test_an_installed_command_prints_its_debug_traceback_masked() -> None:
    """The same through the installed command: the traceback Python prints at exit."""
    exe = Path(sys.executable).with_name("sira-seek")
    done = subprocess.run(
        [str(exe), "--debug", "search", "q", "--index", "x", "--url", CLUSTER],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback (most recent call last)" in done.stderr
    assert "http://***@127.0.0.1:9" in done.stderr
    assert_clean(done.stdout, done.stderr)


UNMASKED = {("llm", "install")}
"""Commands that print no secret (the reason is a comment at each)."""


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    ctx = click.Context(group)
    found: list[tuple[Any, ...]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


def test_every_command_masks_its_output() -> None:
    """Each command's callback runs inside ``friendly_errors`` (whose wrapper masks stdout,
    stderr, logs and the error message): a new command without it fails here."""
    from sira_seek.cli import sync, tuning

    commands = _commands(cli) + [(("sira-sync", *p), c) for p, c in _commands(sync.main)]
    commands.append((("tuning",), tuning.main))
    unmasked = {
        path for path, command in commands if not getattr(command.callback, "masks_output", False)
    }
    assert unmasked == UNMASKED
    assert len(commands) > 20

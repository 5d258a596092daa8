"""``sira-seek eval qa``'s progress on stderr, against the stub OpenAI-compatible server (a real
HTTP server on 127.0.0.1; ``vanilla-llm`` needs no cluster).

On a terminal the bar must show a rate and the elapsed<remaining bracket; piped, a few plain
lines; either way a failed question gets its own line, and nothing of it shows under
``--no-progress`` and ``--json``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from stub_openai_server import StubOpenAIServer, StubReply  # noqa: E402

from sira_seek.cli.main import cli  # noqa: E402

QUESTIONS = 5
# "eval qa:  40%|####      | 2/5 [00:00<00:01,  3.95question/s, failed=1]" (or s/question)
BAR = re.compile(
    r"eval qa: +\d+%\|.*\| \d+/5 \[\d\d:\d\d<(\d\d:\d\d|\?), +[\d.?]+(question/s|s/question)"
)
RATE = re.compile(r"(question/s|s/question|it/s|s/it)")


@pytest.fixture
def qa_file(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    rows = [
        {"id": f"q{i}", "question": f"Capital number {i}?", "golden_answers": ["Paris"]}
        for i in range(QUESTIONS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _eval_qa(stub: StubOpenAIServer, qa: Path, *extra: str) -> tuple[int, str, str]:
    args = ["eval", "qa", "--qa", str(qa), "--method", "vanilla-llm", "--no-cache"]
    args += ["--llm", f"openai:{stub.base_url}#stub-model", "--concurrency", "1", *extra]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


def _stub() -> StubOpenAIServer:
    # The first request fails for good (400 is not retried); the rest answer after 0.2 s each,
    # long enough for tqdm (0.1 s refresh) to draw the bar mid-run.
    refused = StubReply(status=400, body={"error": {"message": "scripted refusal"}})
    return StubOpenAIServer(
        [refused], default=StubReply(text="<answer>Paris</answer>", delay_s=0.2)
    )


def test_bar_shows_rate_eta_and_failures(qa_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # CliRunner's stderr is no terminal; the terminal's display is asked for by name.
    monkeypatch.setattr("sira_seek.cli.progress.on_terminal", lambda stream=None: True)
    with _stub() as stub:
        code, stdout, stderr = _eval_qa(stub, qa_file)
    assert code == 3, stderr  # one failed question: partial failure, after the scores
    assert BAR.search(stderr), stderr
    assert re.search(r"\| 5/5 \[", stderr), stderr  # reached the end, total = questions
    assert "failed=1" in stderr
    failures = [line for line in re.split(r"[\r\n]", stderr) if "FAILED" in line]
    assert len(failures) == 1 and failures[0].startswith("[q0] FAILED") and "400" in failures[0]
    # The old per-question lines ("[q1] 0.2s 'Paris'") are gone; the summary has its own line.
    assert not re.search(r"^\[q\d\] [\d.]+s ", stderr, re.M)
    assert re.search(r"^5 answered \(1 failed\)", stderr, re.M), stderr
    assert "Cover-EM" in stdout or "cover" in stdout.lower()


def test_piped_progress_is_plain_lines(qa_file: Path) -> None:
    """stderr is not a terminal here: start, each tenth (5 questions: every one), the
    failure, the end with the rate; no redraws."""
    with _stub() as stub:
        code, _stdout, stderr = _eval_qa(stub, qa_file)
    assert code == 3, stderr
    lines = stderr.splitlines()
    assert "\r" not in stderr and "%|" not in stderr, stderr
    assert lines[0] == "eval qa: started of 5 question", lines
    assert sum(1 for line in lines if line.startswith("[q0] FAILED")) == 1
    counted = [line for line in lines if re.match(r"eval qa: \d/5 question \(\d+%\)", line)]
    assert len(counted) == QUESTIONS, lines
    assert re.search(r"^eval qa: done, 5 question \[.*question/s\], failed=1$", stderr, re.M)


@pytest.mark.parametrize("flag", ["--no-progress", "--json"])
def test_no_progress_and_json_draw_no_bar(qa_file: Path, flag: str) -> None:
    with _stub() as stub:
        code, stdout, stderr = _eval_qa(stub, qa_file, flag)
    assert code == 3, stderr
    assert not RATE.search(stderr) and "%|" not in stderr and "FAILED" not in stderr, stderr
    assert "answered (1 failed)" in stderr  # the one-line summary stays
    if flag == "--json":
        assert json.loads(stdout)["failed"] == 1


def test_no_progress_env_variable_is_the_same_switch(
    qa_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIRA_SEEK_NO_PROGRESS", "1")
    with _stub() as stub:
        _code, _stdout, stderr = _eval_qa(stub, qa_file)
    assert not RATE.search(stderr) and "%|" not in stderr, stderr

"""``eval agentic`` stops on unusable inputs before it connects or loads a model (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sira_seek.cli.main import cli


def _inputs(tmp_path: Path, judged_id: str) -> list[str]:
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "q1", "question": "Who?", "golden_answers": ["X"]}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\n{judged_id}\td1\t1\n")
    return ["eval", "agentic", "--index", "idx", "--qa", str(qa), "--qrels", str(qrels)]


def test_questions_without_any_judgement_are_bad_input(tmp_path: Path) -> None:
    # the URL is never contacted: the inputs are checked first
    args = [*_inputs(tmp_path, "other"), "--url", "http://127.0.0.1:9"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "none of the 1 questions" in result.output and "is judged in" in result.output


def test_a_budget_below_one_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [*_inputs(tmp_path, "q1"), "--budget", "0"])
    assert result.exit_code == 2 and "--budget" in result.output


def test_an_unknown_protocol_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [*_inputs(tmp_path, "q1"), "--protocol", "peek"])
    assert result.exit_code == 2 and "--protocol" in result.output
    assert "evidence-blind" in result.output and "snippets" in result.output

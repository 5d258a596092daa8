"""``sira-seek eval qa-score`` through click's runner, on hand-made predictions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sira_seek.cli.qa_score import qa_score

# Five hand-made predictions (tests/unit/fixtures); the reference code's own samples are
# scored through the CLI in tests/integration/test_pager_reference_samples.py. By hand:
#   cover_em  1, 0, 1, 0, 1          -> 0.6
#   em        1, 0, 0, 0, 0          -> 0.2
#   f1        1, 2/3, 1/3, 0, 2/3    -> 0.5333
PREDICTIONS = Path(__file__).resolve().parent / "fixtures" / "qa_predictions.jsonl"


@pytest.fixture(scope="module")
def infer_file() -> Path:
    return PREDICTIONS


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(qa_score, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_json_output_gives_the_hand_computed_scores(infer_file: Path) -> None:
    code, output = _run("--predictions", str(infer_file), "--json")
    assert code == 0, output
    report = json.loads(output)
    assert list(report) == ["cover_em", "em", "f1", "questions", "no_gold"]
    assert report["questions"] == 5
    assert report["cover_em"] == pytest.approx(0.6)
    assert report["em"] == pytest.approx(0.2)
    assert report["f1"] == pytest.approx(0.5333, abs=1e-4)


def test_table_output(infer_file: Path) -> None:
    code, output = _run("--predictions", str(infer_file))
    assert code == 0, output
    rows = dict(line.split() for line in output.strip().splitlines())
    assert rows == {"cover_em": "0.600", "em": "0.200", "f1": "0.533", "questions": "5"}


def test_bad_line_is_reported_with_its_number_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    good = json.dumps({"golden_answers": ["a"], "prediction": "a"})
    path.write_text(f"{good}\n{good}\n{{broken\n", encoding="utf-8")
    code, output = _run("--predictions", str(path), "--json")
    assert code == 2  # bad input
    assert f"Error: {path}, line 3: invalid JSON" in output
    assert "Traceback" not in output


def test_missing_keys_are_named(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text(json.dumps({"answer": ["a"], "output": "a"}) + "\n", encoding="utf-8")
    code, output = _run("--predictions", str(path))
    assert code == 2  # bad input
    assert "line 1: no prediction: expected one of pred_ans, prediction" in output


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n", encoding="utf-8")
    code, output = _run("--predictions", str(path))
    assert code == 2  # bad input
    assert "no predictions to score" in output


def test_undecodable_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "binary.jsonl"
    good = json.dumps({"answer": ["a"], "pred_ans": "a"}).encode()
    path.write_bytes(good + b"\n" + b'{"answer": ["\xff"]}\n')
    code, output = _run("--predictions", str(path))
    assert code == 2  # bad input
    assert f"Error: {path}, line 2: not UTF-8 text" in output


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    line = json.dumps({"answer": ["a"], "pred_ans": "a"})
    path.write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\n")
    code, output = _run("--predictions", str(path), "--json")
    assert code == 0, output
    assert json.loads(output)["em"] == 1.0


def test_missing_file_and_missing_option_are_usage_errors(tmp_path: Path) -> None:
    assert _run("--predictions", str(tmp_path / "absent.jsonl"))[0] == 2
    assert _run()[0] == 2


def test_command_name_for_registration() -> None:
    assert qa_score.name == "qa-score"

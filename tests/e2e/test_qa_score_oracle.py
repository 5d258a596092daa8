"""`sira-seek eval qa-score --predictions F --json`, run as installed, equals the SEEK authors'
scorer (../shared/reference, read with their own reader) to 4 decimals on files of their format:
their sample predictions, a hand-made file of held-out tricky cases, and a seeded random file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from pager_oracle import random_row, reference_file
from seeds import seeded_rng

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

# Not the unit or oracle tests' cases: answers a QA run really produces, with the characters
# and shapes that separate a careless scorer from theirs.
HELD_OUT_ROWS: list[dict[str, Any]] = [
    {"answer": ["Shaquille O'Neal"], "pred_ans": "Shaquille O’Neal"},
    {"answer": "Guns N’ Roses", "pred_ans": "Guns N' Roses"},
    {"answer": ["yes"], "pred_ans": "True"},
    {"answer": ["yes"], "pred_ans": "true"},
    {"answer": ["no"], "pred_ans": "False."},
    {"answer": ["False"], "pred_ans": "no"},
    {"answer": ["The"], "pred_ans": ""},
    {"answer": ["The Beatles", "Beatles"], "pred_ans": ""},
    {"answer": ["Missouri River", "the Missouri River"], "pred_ans": "<None>"},
    {"answer": ["Rock ’n’ Roll"], "pred_ans": "rock `n´ roll"},
    {"answer": ["“Hey Jude”"], "pred_ans": "Hey Jude"},
    {"answer": ["New_York_City"], "pred_ans": "It is New York City, the largest."},
    {"answer": ["Zoë Saldaña"], "pred_ans": "zoë saldaña"},
    {"answer": ["December\u00a029,\u00a02017"], "pred_ans": "December 29 2017"},
    {"answer": ["six", "six points"], "pred_ans": "Six points"},
    {"answer": ["noanswer"], "pred_ans": "no answer"},
    {"answer": ["yes"], "pred_ans": "yes, it is"},
    {"answer": ["1,000"], "pred_ans": "1 000 people"},
    {"answer": ["an apple"], "pred_ans": "A   apple"},
    {"answer": [""], "pred_ans": "   "},
]


def _score(path: Path) -> dict[str, float]:
    res = run_cli(["eval", "qa-score", "--predictions", str(path), "--json"], timeout=120)
    assert res.returncode == 0, res.stderr
    report: dict[str, float] = json.loads(res.stdout)
    return report


def _assert_equal_to_theirs(path: Path, questions: int) -> None:
    theirs = reference_file(path)
    report = _score(path)
    assert report["questions"] == questions
    assert {name: report[name] for name in theirs} == {k: round(v, 4) for k, v in theirs.items()}


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_pager_sample_file(shared_data: Path) -> None:
    path = shared_data / "pager_samples" / "infer" / "nq_test_shuffle_2k.jsonl"
    if not path.is_file():
        pytest.fail(f"PAGER sample predictions missing: {path}", pytrace=False)
    _assert_equal_to_theirs(path, 10)
    assert _score(path) == {
        "cover_em": 0.6, "em": 0.6, "f1": 0.6611, "questions": 10, "no_gold": 0
    }


def test_held_out_tricky_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "tricky.jsonl", HELD_OUT_ROWS)
    _assert_equal_to_theirs(path, len(HELD_OUT_ROWS))


def test_random_tricky_file(tmp_path: Path) -> None:
    rng = seeded_rng("qa-score random file")
    rows = [random_row(rng) for _ in range(400)]
    _assert_equal_to_theirs(_write(tmp_path / "random.jsonl", rows), len(rows))

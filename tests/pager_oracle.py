"""The SEEK/PAGER authors' QA scorer as a test oracle, and inputs that probe its corners.

The scorer (``src/evaluate_infer.py`` of OpenBMB/PAGER, MIT) stays in ``../shared/reference``:
it is imported from there by path, never copied into this Apache-2.0 repository. Its only
third-party import is ``jsonlines`` (in the ``test`` extra). The tricky vocabulary below is what
separated sira-seek's earlier scorer from theirs: curly quotes, booleans in every case, articles,
empty strings, underscores, accents, Unicode spaces, and ``<answer>`` tags in every state.
"""

from __future__ import annotations

import importlib.util
import os
import random
import string
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REFERENCE_ENV = "SIRA_SEEK_SHARED_REFERENCE"
REPO_ROOT = Path(__file__).resolve().parents[1]


def reference_dir() -> Path:
    """../shared/reference beside the repo (or $SIRA_SEEK_SHARED_REFERENCE)."""
    override = os.environ.get(REFERENCE_ENV)
    return Path(override) if override else REPO_ROOT.parent / "shared" / "reference"


@cache
def load_reference() -> ModuleType:
    """Import ``pager_evaluate_infer.py`` by path; fail (never skip) when it cannot be."""
    path = reference_dir() / "pager_evaluate_infer.py"
    if not path.is_file():
        pytest.fail(f"the authors' scorer is missing: {path} does not exist", pytrace=False)
    spec = importlib.util.spec_from_file_location("pager_evaluate_infer", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as err:
        pytest.fail(f"{path} needs {err.name}: pip install -e '.[test]'", pytrace=False)
    return module


def authors_extraction(generated: str) -> str:
    """The answer extraction of the authors' ``src/infer_page.py`` (lines 158-161), restated
    as the oracle for `extract_tagged_answer`: last ``<answer>``, up to ``</answer>``."""
    if "<answer>" in generated:
        return generated.split("<answer>")[-1].split("</answer>")[0].strip()
    return "<None>"


def _fresh_metrics() -> dict[str, float]:
    return dict.fromkeys(("em", "f1", "cover_em_1", "cover_em_2", "prec", "recall", "acc_num"), 0)


def reference_item(prediction: str, golds: Sequence[str]) -> dict[str, float]:
    """One question through their ``update_answer``: our metric names, their values."""
    em, _prec, _recall, f1, cover_em_1, _cover_em_2 = load_reference().update_answer(
        _fresh_metrics(), prediction, list(golds)
    )
    return {"cover_em": float(cover_em_1), "em": float(em), "f1": float(f1)}


def reference_rows(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Their ``eval`` loop over rows of their format, unrounded (it prints 0.1 % steps)."""
    ref = load_reference()
    metrics = _fresh_metrics()
    for row in rows:
        gold = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
        ref.update_answer(metrics, row["pred_ans"], gold)
    n = len(rows)
    return {"cover_em": metrics["cover_em_1"] / n, "em": metrics["em"] / n, "f1": metrics["f1"] / n}


def reference_file(path: Path) -> dict[str, float]:
    """Their scores for a JSONL file, read with their own reader."""
    return reference_rows(load_reference().read_jsonl(str(path)))


# ------------------------------------------------------------------------------------------
# Tricky inputs
# ------------------------------------------------------------------------------------------

TRICKY_WORDS: tuple[str, ...] = (
    # articles, in every case and glued to punctuation or underscores
    "a", "an", "the", "A", "An", "The", "THE", "the_", "_the", "an’", "´the", "the.", "theatre",
    "another",
    # booleans and closed answers
    "True", "False", "true", "false", "TRUE", "FALSE", " True", "yes", "no", "Yes", "NO",
    "noanswer", "no answer", "None", "<None>",
    # quotes and apostrophes: ASCII, curly single (in their set), curly double (not), acute
    "O’Neal", "O'Neal", "O´Neal", "O`Neal", "‘", "’", "“", "”", "'", '"', "´", "`", "“Paris”",
    "‘Paris’", "Paris",
    # underscores, accents, Unicode letters and spaces, digits
    "_", "__", "New_York", "New York", "café", "Café", "CAFÉ", "e\u0301", "naïve", "İstanbul",
    "Straße", "ß", "ﬁ", "Ω", "1", "42", "3.14", "1,000", "1st", "2017", "December\xa029,\xa02017",
    # punctuation runs
    "-", ".", ",", "!?", "(SDH)", "...", "—", "–",
    # tags, as models write them
    "<answer>", "</answer>", "<ANSWER>", "<answer >",
)  # fmt: skip
TRICKY_CHARS = (
    string.ascii_letters + string.digits + string.punctuation + "‘’“”´`_ \t\n\xa0\u2009\u3000"
    "éÉçñüÖßİıΩ"
)
SEPARATORS: tuple[str, ...] = ("", " ", " ", " ", "  ", "_", "\n", "\t", "\xa0", ", ")


def random_text(rng: random.Random, max_parts: int = 6) -> str:
    """A short text of tricky words and stray characters (may be empty)."""
    parts: list[str] = []
    for _ in range(rng.randrange(max_parts + 1)):
        if rng.random() < 0.75:
            parts.append(rng.choice(TRICKY_WORDS))
        else:
            parts.append("".join(rng.choice(TRICKY_CHARS) for _ in range(rng.randrange(1, 4))))
        parts.append(rng.choice(SEPARATORS))
    return "".join(parts)


def random_generation(rng: random.Random) -> str:
    """Model output with zero, one, several, unclosed or empty ``<answer>`` tags."""
    shape = rng.choice(("none", "closed", "unclosed", "twice", "empty", "stray-close"))
    reasoning, answer, tail = random_text(rng), random_text(rng, 3), random_text(rng, 2)
    if shape == "none":
        return f"{reasoning}\n{answer}"
    if shape == "closed":
        return f"{reasoning}\n\n<answer> {answer} </answer>{tail}"
    if shape == "unclosed":
        return f"{reasoning}<answer>{answer}"
    if shape == "twice":
        return f"<answer>{reasoning}</answer> {tail} <answer>{answer}</answer>"
    if shape == "empty":
        return f"{reasoning}<answer></answer>"
    return f"{reasoning}</answer>{answer}<answer>{tail}"


def random_row(rng: random.Random) -> dict[str, Any]:
    """One row of their format: ``answer`` a string or a list of 1-4, ``pred_ans`` text."""
    golds = [random_text(rng, 4) for _ in range(rng.randrange(1, 5))]
    answer: str | list[str] = golds[0] if rng.random() < 0.2 else golds
    if rng.random() < 0.3:
        prediction = authors_extraction(random_generation(rng))
    elif rng.random() < 0.3:
        prediction = rng.choice(golds)  # a hit, to make EM/F1 non-trivial
    else:
        prediction = random_text(rng)
    return {"answer": answer, "pred_ans": prediction}

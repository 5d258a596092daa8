"""Answer-level QA metrics equal to the SEEK/PAGER authors' scorer on every input.

The papers' numbers are only comparable when scoring matches theirs to the last character, so
their scorer (``src/evaluate_infer.py`` of OpenBMB/PAGER, MIT; kept read-only in
``../shared/reference`` and used by ``tests/integration/test_qa_metrics_oracle.py`` as an oracle
over generated and hand-made cases) is re-stated here in sira-seek's own code:

1. an answer that is exactly ``True`` or ``False`` (case and spaces matter) becomes ``yes`` or
   ``no``; ``true``, ``FALSE`` or `` True`` stay words;
2. ``_`` becomes a space (entity ids such as ``New_York``);
3. lowercase;
4. every ASCII punctuation character and the typographic quotes ``‘ ’ ´`` become a space (so
   ``O’Neal`` and ``O'Neal`` both give ``o neal``; ``“ ”`` are *not* in their set and stay);
5. the articles ``a``, ``an``, ``the`` are dropped (regex word boundaries, Unicode-aware);
6. whitespace (Unicode included, e.g. the non-breaking spaces in NQ dates) is collapsed.

Their quirks are kept on purpose, because a "fix" would move the figures: a gold answer that
normalises to nothing (``"The"``) is matched by, and only by, a prediction that normalises to
nothing, for EM and Cover-EM alike; a prediction with no ``<answer>`` tag is the literal
``<None>`` (`extract_tagged_answer`).

Metric names are fixed strings, ``cover_em``, ``em`` and ``f1``, so that reports from
``sira-seek eval qa`` and ``sira-seek eval qa-score`` can be compared key by key. Their
``cover_em`` is the scorer's ``cover_em_1`` (every gold token among the prediction's tokens,
in any order), the one their tables and command line report.
"""

from __future__ import annotations

import json
import logging
import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sira_seek.input_errors import InputError

logger = logging.getLogger(__name__)

METRIC_NAMES: tuple[str, ...] = ("cover_em", "em", "f1")
"""The metric keys of every QA report, in display order."""

GOLD_KEYS: tuple[str, ...] = ("golden_answers", "answer")
"""Gold-answer keys, in order of preference: FlashRAG files use the first, PAGER the second."""

PREDICTION_KEYS: tuple[str, ...] = ("pred_ans", "prediction")
"""Prediction keys, in order of preference: PAGER writes ``pred_ans``."""

NO_ANSWER = "<None>"
"""What the authors' inference code records when the model wrote no ``<answer>`` tag (or the
generation failed); it is scored like any other text (it normalises to ``none``)."""

AnswerExtraction = Literal["tagged", "lenient"]
"""How a final answer is taken from raw model text: ``tagged`` is the authors' rule
(`extract_tagged_answer`, the default everywhere); ``lenient`` also accepts an ``Answer:`` line
or the last line (`sira_seek.seek.output_parsing.extract_answer`), which scores higher than
the papers on models that forget the tag, so it is never the default."""

ANSWER_EXTRACTIONS: tuple[AnswerExtraction, ...] = ("tagged", "lenient")

_ANSWER_OPEN = "<answer>"
_ANSWER_CLOSE = "</answer>"
# string.punctuation already holds "`"; the authors add the curly single quotes and the acute
# accent. The curly double quotes are NOT in their set: "“x”" stays one token "“x”".
_PUNCTUATION_TO_SPACE = str.maketrans({ch: " " for ch in string.punctuation + "‘’´`"})
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_BOOLEAN_ANSWERS = {"True": "yes", "False": "no"}
# Answers on which partial token overlap is meaningless: "yes it is" is not half of "no".
_CLOSED_ANSWERS = frozenset({"yes", "no", "noanswer"})

Answer = str | bool | int | float


def extract_tagged_answer(raw: str | None) -> str:
    """The final answer as the authors' inference code takes it: the text after the LAST
    ``<answer>`` up to the first ``</answer>`` after it (or the end), stripped; `NO_ANSWER`
    when there is no ``<answer>`` at all (tags are case-sensitive) or no text (a failure).

    An unclosed tag keeps everything after it, and an empty tag gives ``""`` (scored as an
    empty answer, not as ``<None>``), exactly as theirs.
    """
    if raw is None or _ANSWER_OPEN not in raw:
        return NO_ANSWER
    return raw.split(_ANSWER_OPEN)[-1].split(_ANSWER_CLOSE)[0].strip()


def normalize_answer(answer: Answer) -> str:
    """Normalise an answer the way the authors' scorer does (see the module docstring).

    Non-text answers (JSON booleans and numbers in a gold list, which their scorer cannot read)
    are scored as their Python text, so a JSON ``true`` gold becomes ``"True"`` and then ``yes``.
    """
    text = str(answer)
    text = _BOOLEAN_ANSWERS.get(text, text)
    text = text.replace("_", " ").lower().translate(_PUNCTUATION_TO_SPACE)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _tokens(answer: Answer) -> list[str]:
    return normalize_answer(answer).split()


def _as_gold_list(golden_answers: Answer | Sequence[Answer]) -> list[Answer]:
    """A single gold string is a one-element list, not a list of characters."""
    if isinstance(golden_answers, str | bool | int | float):
        return [golden_answers]
    return list(golden_answers)


def _cover_one(prediction_tokens: set[str], gold: Answer) -> float:
    gold_tokens = _tokens(gold)
    if not gold_tokens:
        # Their scorer compares "".split(" ") == [""] lists: a gold that normalises to nothing
        # ("The", "?") is covered by exactly the predictions that normalise to nothing.
        return 0.0 if prediction_tokens else 1.0
    return 1.0 if all(token in prediction_tokens for token in gold_tokens) else 0.0


def cover_em(prediction: Answer, golden_answers: Answer | Sequence[Answer]) -> float:
    """Cover-EM, the papers' headline metric: 1.0 if every token of some gold answer occurs
    among the prediction's tokens, in any order.

    Long generated answers ("It was Andy Warhol who said it") still count when they contain the
    gold answer, which strict EM would reject.
    """
    prediction_tokens = set(_tokens(prediction))
    return max(
        (_cover_one(prediction_tokens, g) for g in _as_gold_list(golden_answers)), default=0.0
    )


def exact_match(prediction: Answer, golden_answers: Answer | Sequence[Answer]) -> float:
    """Strict EM: 1.0 if the normalised prediction equals some normalised gold answer."""
    normalised = normalize_answer(prediction)
    return max(
        (1.0 if normalised == normalize_answer(g) else 0.0 for g in _as_gold_list(golden_answers)),
        default=0.0,
    )


def _f1_one(prediction: Answer, gold: Answer) -> float:
    prediction_tokens = _tokens(prediction)
    gold_tokens = _tokens(gold)
    pred_text, gold_text = " ".join(prediction_tokens), " ".join(gold_tokens)
    if (pred_text in _CLOSED_ANSWERS or gold_text in _CLOSED_ANSWERS) and pred_text != gold_text:
        return 0.0
    common = sum((Counter(prediction_tokens) & Counter(gold_tokens)).values())
    if common == 0:
        return 0.0
    precision = common / len(prediction_tokens)
    recall = common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: Answer, golden_answers: Answer | Sequence[Answer]) -> float:
    """SQuAD-style token F1 (bag of normalised tokens), best over the gold answers.

    As in FlashRAG, a yes/no/noanswer answer gets no partial credit against a different one.
    """
    return max((_f1_one(prediction, g) for g in _as_gold_list(golden_answers)), default=0.0)


class PredictionRecord(BaseModel):
    """One question to score: gold answers and the system's final answer.

    No gold answers is allowed (a QA file may hold questions without one): such a record is
    counted in `QAScores.no_gold`, never scored, because any answer "matching" an absent gold
    would inflate the means. Prediction files (`read_predictions`) still refuse an empty list.
    """

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    question: str | None = None
    golden_answers: list[str] = Field(default_factory=list)
    prediction: str


class QAScores(BaseModel):
    """Mean metrics over the scored questions; the key names are the reported metric names.

    ``questions`` counts the scored questions (the denominator); ``no_gold`` those left out
    because they have no gold answer.
    """

    model_config = ConfigDict(frozen=True)

    cover_em: float
    em: float
    f1: float
    questions: int
    no_gold: int = 0

    def as_report(self, ndigits: int | None = 4) -> dict[str, float | int]:
        """The JSON report printed by the CLI: metrics rounded for reading, counts exact.

        ``no_gold`` appears only when some question had no gold answer, so the usual report
        keeps its four keys.
        """
        metrics = {name: getattr(self, name) for name in METRIC_NAMES}
        if ndigits is not None:
            metrics = {name: round(value, ndigits) for name, value in metrics.items()}
        report: dict[str, float | int] = {**metrics, "questions": self.questions}
        if self.no_gold:
            report["no_gold"] = self.no_gold
        return report


class PredictionFileError(InputError):
    """A prediction file line that cannot be scored; carries the 1-based line number."""

    def __init__(self, path: Path | str, line_number: int, reason: str) -> None:
        self.path = Path(path)
        self.line_number = line_number
        self.reason = reason
        super().__init__(f"{self.path}, line {line_number}: {reason}")


def _first_present(obj: Mapping[str, Any], keys: Sequence[str]) -> tuple[str, Any] | None:
    for key in keys:
        if key in obj:
            return key, obj[key]
    return None


def _gold_strings(value: Any) -> list[str]:
    """Gold answers as strings; booleans stay ``True``/``False`` so normalisation maps them."""
    values = value if isinstance(value, list | tuple) else [value]
    if not values:
        raise ValueError("gold answer list is empty")
    golds: list[str] = []
    for item in values:
        if not isinstance(item, str | bool | int | float):
            raise ValueError(f"gold answer must be text, got {type(item).__name__}")
        golds.append(str(item))
    return golds


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


def record_from_mapping(obj: Mapping[str, Any]) -> PredictionRecord:
    """Build a record from a PAGER (``answer``/``pred_ans``) or FlashRAG-style
    (``golden_answers``/``prediction``) dict.

    A null prediction is scored as an empty answer rather than rejected: a question whose
    generation failed must count as wrong, not vanish from the denominator.
    """
    gold = _first_present(obj, GOLD_KEYS)
    if gold is None:
        raise ValueError(f"no gold answers: expected one of {', '.join(GOLD_KEYS)}")
    prediction = _first_present(obj, PREDICTION_KEYS)
    if prediction is None:
        raise ValueError(f"no prediction: expected one of {', '.join(PREDICTION_KEYS)}")
    pred_value = prediction[1]
    if pred_value is not None and not isinstance(pred_value, str | bool | int | float):
        raise ValueError(
            f"prediction {prediction[0]!r} must be text, got {type(pred_value).__name__}"
        )
    return PredictionRecord(
        id=_optional_text(obj.get("id")),
        question=_optional_text(obj.get("question")),
        golden_answers=_gold_strings(gold[1]),
        prediction="" if pred_value is None else str(pred_value),
    )


def parse_prediction_line(line: str) -> PredictionRecord:
    """Parse one JSONL line; raises ``ValueError`` with a reason a user can act on."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"invalid JSON ({err.msg} at column {err.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    return record_from_mapping(obj)


def _decode(raw_line: bytes, line_number: int) -> str:
    # Windows tools write a byte-order mark; it is not part of the first JSON object.
    return raw_line.decode("utf-8-sig" if line_number == 1 else "utf-8")


def read_predictions(path: Path | str) -> list[PredictionRecord]:
    """Read a JSONL prediction file (blank lines ignored).

    Any unusable line, including one that is not UTF-8, raises `PredictionFileError` naming the
    file and line, so a CLI can report it without a traceback.
    """
    path = Path(path)
    records: list[PredictionRecord] = []
    with path.open("rb") as handle:
        for line_number, raw_line in enumerate(handle, start=1):
            try:
                line = _decode(raw_line, line_number)
                if line.strip():
                    records.append(parse_prediction_line(line))
            except UnicodeDecodeError as err:
                reason = f"not UTF-8 text (byte {err.start + 1})"
                raise PredictionFileError(path, line_number, reason) from None
            except ValueError as err:
                raise PredictionFileError(path, line_number, str(err)) from None
    return records


def score_predictions(records: Iterable[PredictionRecord | Mapping[str, Any]]) -> QAScores:
    """Mean Cover-EM, EM and token F1 over the records with gold answers (summed in file
    order and divided once, as the authors' scorer does, so the floats agree to the last bit);
    records without gold are counted in ``no_gold`` and logged; zeros when nothing is scored."""
    totals = dict.fromkeys(METRIC_NAMES, 0.0)
    count = 0
    no_gold: list[str] = []
    for item in records:
        record = item if isinstance(item, PredictionRecord) else record_from_mapping(item)
        if not record.golden_answers:
            no_gold.append(record.id or "?")
            continue
        totals["cover_em"] += cover_em(record.prediction, record.golden_answers)
        totals["em"] += exact_match(record.prediction, record.golden_answers)
        totals["f1"] += token_f1(record.prediction, record.golden_answers)
        count += 1
    if no_gold:
        logger.warning(
            "%d question(s) without a gold answer, not scored: %s",
            len(no_gold),
            ", ".join(no_gold[:10]) + (" ..." if len(no_gold) > 10 else ""),
        )
    if count == 0:
        return QAScores(cover_em=0.0, em=0.0, f1=0.0, questions=0, no_gold=len(no_gold))
    means = {name: total / count for name, total in totals.items()}
    return QAScores(**means, questions=count, no_gold=len(no_gold))

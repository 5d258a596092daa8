"""Render runs into one self-contained HTML page (inline CSS and SVG, no scripts, no network)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from html import escape

from sira_seek.input_errors import InputError
from sira_seek.metrics.information_gain import DigParameters
from sira_seek.metrics.run_record import RunRecord
from sira_seek.metrics.seek_diagnostics import SeekDiagnostics

from . import svg_charts
from .significance import ALPHA, PairedTest, compare_with_baseline

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1320px;
color:#222}
h1{font-size:22px} h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ddd;padding:4px 8px;
text-align:right} th{background:#f5f5f5} td:first-child,th:first-child{text-align:left}
.grid{display:flex;flex-wrap:wrap;gap:16px} figure{margin:0} figcaption{font-size:12px;color:#555}
.best{font-weight:bold} .sig{background:#e8f5e9} .sig.worse{background:#fdecea}
.note{font-size:12px;color:#555}
"""


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _fmt(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _summary_table(runs: list[RunRecord], metrics: list[str]) -> str:
    best = {m: max(r.metrics.get(m, 0.0) for r in runs) for m in metrics}
    head = "".join(f"<th>{escape(m)}</th>" for m in metrics)
    rows = []
    for r in runs:
        cells = "".join(
            f'<td class="{"best" if r.metrics.get(m) == best[m] else ""}">'
            f"{_fmt(r.metrics.get(m))}</td>"
            for m in metrics
        )
        p50 = statistics.median(r.latency_ms) if r.latency_ms else None
        rows.append(
            f"<tr><td>{escape(r.name)}</td><td>{escape(r.method)}</td><td>{escape(r.engine)}</td>"
            f'{cells}<td>{len(r.per_query)}</td><td data-key="fallbacks">{len(r.fallbacks)}</td>'
            f"<td>{_fmt(p50, 1)}</td>"
            f"<td>{_fmt(_mean([float(t) for t in r.llm_tokens]), 1)}</td></tr>"
        )
    return (
        f"<table><tr><th>run</th><th>method</th><th>engine</th>{head}<th>queries</th>"
        "<th>fell back to BM25</th><th>latency p50 ms</th><th>LLM tokens/query</th></tr>"
        f"{''.join(rows)}</table>" + _fallback_notes(runs)
    )


FALLBACKS_LISTED = 20
"""Query ids a report names per run that fell back; the rest are counted."""


def _fallback_notes(runs: list[RunRecord]) -> str:
    """Under the summary, per run with fallbacks: which queries ran as plain BM25 (the LLM
    gave nothing), since their figures in that run's metrics are BM25's."""
    notes = []
    for r in runs:
        if not r.fallbacks:
            continue
        shown = ", ".join(escape(q) for q in r.fallbacks[:FALLBACKS_LISTED])
        more = len(r.fallbacks) - FALLBACKS_LISTED
        if more > 0:
            shown += f" and {more} more"
        notes.append(
            f'<p class="note" data-run="{escape(r.name)}">{escape(r.name)}: {len(r.fallbacks)} '
            f"of {len(r.per_query)} queries fell back to plain BM25 (the LLM gave nothing), "
            f"their figures are BM25's: {shown}</p>"
        )
    return "".join(notes)


def _win_loss_section(runs: list[RunRecord], baseline: RunRecord, metric: str) -> str:
    figures, rows = [], []
    for run in runs:
        if run is baseline:
            continue
        deltas = [
            (qid, vals.get(metric, 0.0) - baseline.per_query.get(qid, {}).get(metric, 0.0))
            for qid, vals in run.per_query.items()
        ]
        wins = sum(d > 0 for _, d in deltas)
        losses = sum(d < 0 for _, d in deltas)
        rows.append(
            f"<tr><td>{escape(run.name)}</td><td>{wins}</td><td>{losses}</td>"
            f"<td>{len(deltas) - wins - losses}</td></tr>"
        )
        title = f"{run.name} vs {baseline.name}: per-query {metric} difference"
        figures.append(
            f"<figure>{svg_charts.win_loss(deltas, title)}<figcaption>{escape(title)}"
            "</figcaption></figure>"
        )
    table = (
        f"<table><tr><th>run vs {escape(baseline.name)}</th><th>wins</th><th>losses</th>"
        f"<th>ties</th></tr>{''.join(rows)}</table>"
    )
    return table + f'<div class="grid">{"".join(figures)}</div>'


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "–"
    return f"{p:.1e}" if p < 1e-3 else f"{p:.4f}"


def _significance_section(tests: list[PairedTest], baseline: RunRecord) -> str:
    """Per run and measure: mean difference to the baseline and the paired t-test p-value."""
    measures = sorted({t.measure for t in tests})
    by_cell = {(t.run, t.measure): t for t in tests}
    head = "".join(f"<th>{escape(m)}</th>" for m in measures)
    rows = []
    for run in dict.fromkeys(t.run for t in tests):
        cells = []
        for m in measures:
            test = by_cell.get((run, m))
            if test is None:
                cells.append("<td>–</td>")
                continue
            cls = ("sig worse" if test.mean_delta < 0 else "sig") if test.significant else ""
            mark = " *" if test.significant else ""
            cells.append(
                f'<td class="{cls}" data-measure="{escape(m)}" data-p="{test.p_value}">'
                f"{test.mean_delta:+.4f} (p {_fmt_p(test.p_value)}){mark}</td>"
            )
        rows.append(f"<tr><td>{escape(run)}</td>{''.join(cells)}</tr>")
    n = max((t.queries for t in tests), default=0)
    return (
        f"<table><tr><th>run vs {escape(baseline.name)}</th>{head}</tr>{''.join(rows)}</table>"
        f'<p class="note">Mean per-query difference to {escape(baseline.name)} and the p-value of '
        f"a two-sided paired t-test (scipy.stats.ttest_rel) over the {n} queries both runs "
        f"scored; * marks p &lt; {ALPHA} (no correction for multiple comparisons).</p>"
    )


def pick_baseline(runs: list[RunRecord], baseline: str | None) -> RunRecord:
    """The run named ``baseline``; else the first BM25 run; else the first run."""
    if baseline is not None:
        found = next((r for r in runs if r.name == baseline), None)
        if found is None:
            names = ", ".join(r.name for r in runs)
            raise InputError(f"no run named {baseline!r} (runs: {names})")
        return found
    return next((r for r in runs if r.method == "bm25"), runs[0])


_SEEK_ROWS: tuple[tuple[str, str], ...] = (
    ("questions", "questions analysed"),
    ("failed", "failed (left out)"),
    ("subquery_similarity", "sub-query similarity (mean over pairs; Fig. 4a)"),
    ("subquery_diversity", "sub-query diversity (1 - similarity)"),
    ("subquery_similarity_measure", "similarity used"),
    ("diversity_questions", "questions with 2+ sub-queries"),
    ("document_overlap", "document overlap (Jaccard of consecutive steps; Fig. 4a)"),
    ("document_overlap_questions", "questions with 2+ steps"),
    ("fig6_questions", "questions with 4 rounds (Fig. 6's population, A.7)"),
    ("new_document_share", "share of retrieved documents new when retrieved"),
    ("dig", "DIG (gold-answer confidence with the knowledge minus without)"),
    ("dig_questions", "questions with DIG scored"),
    (
        "dig_parameters",
        "DIG parameters (Eq. 14-15: window W, first k tokens, alpha, omega; edge reading)",
    ),
    ("max_subquery_recall_at_5", "maximum sub-query Recall@5 (answer-containing documents; A.5)"),
    ("max_subquery_recall_questions", "questions with gold answers"),
    ("qrels_subquery_recall_at_5", "maximum sub-query Recall@5 over judged documents"),
    ("qrels_recall_questions", "questions with judgements"),
    ("step_cap_reached", "questions stopped at the step cap"),
    ("evidence_shortened", "questions answered with shorter evidence (prompt too long)"),
    ("subqueries_per_question", "sub-queries per question"),
    ("gists_per_question", "gists per question"),
    ("seconds_per_question", "seconds per question (mean)"),
    ("seconds_per_question_p50", "seconds per question (median)"),
    ("amortised_seconds_per_question", "seconds per question (run wall time / questions)"),
    ("cost.llm_calls_per_question", "LLM calls per question (the method's cost, failed included)"),
    ("cost.prompt_tokens_per_question", "prompt tokens per question"),
    ("cost.completion_tokens_per_question", "completion tokens per question"),
    ("cost.rounds_per_question", "LLM rounds per question (calls made together count once)"),
    ("split.conflict.questions", "knowledge conflict questions (closed-book correct; Table 3)"),
    ("split.conflict.cover_em", "Cover-EM on knowledge conflict (Table 3)"),
    ("split.utilization.questions", "knowledge utilization questions (closed-book wrong)"),
    ("split.utilization.cover_em", "Cover-EM on knowledge utilization (Table 3)"),
    ("judge.accuracy", "judge: knowledge context accuracy (0-5; §5.4)"),
    ("judge.logicality", "judge: logicality (0-5)"),
    ("judge.structure", "judge: structure (0-5)"),
    ("judge.refinement", "judge: refinement (0-5)"),
    ("judge.judged", "judge: contexts rated"),
    ("judge.malformed", "judge: malformed replies (left out)"),
)

_SEEK_NOTE = (
    "Failed questions are left out. Sub-query similarity is the mean over every pair of a "
    "question's sub-queries (the paper embeds them with Qwen3-Embedding-0.6B; the measure used "
    "is named above). Document overlap is the Jaccard of consecutive steps' retrieved sets; "
    "across iterations (Fig. 6b) each step is also compared with all earlier steps' documents "
    "together. Maximum sub-query Recall@5 (A.5) counts a sub-query 1 when one of its top 5 "
    "documents contains a gold answer, and takes the best sub-query. DIG is the SEEK paper's "
    "Document Information Gain (Appendix A.6, Eq. 13-15) over the knowledge each method "
    "answered from, p(gold | question, knowledge) - p(gold | question), each confidence the "
    "product of window-smoothed token probabilities (window W, divided by W) raised to "
    "omega_i * alpha for the first k tokens and to 1 - alpha for the rest; scored with the "
    "run's own LLM, one few-shot answer prompt with and without the knowledge, and the first "
    "gold answer. Table 3's populations are decided by a closed-book run of the same model "
    "(Cover-EM of its answer), not by the method's own answers. The judge's prompt is our "
    "wording: the paper's template (A.12, Figure 11) is an image whose text it does not give."
)


def _field(diagnostics: SeekDiagnostics, key: str) -> object:
    """A row's value: an attribute, or ``cost.<name>`` of the run's LLM cost (None without)."""
    if key.startswith("cost."):
        cost = diagnostics.cost
        return None if cost is None else getattr(cost, key.removeprefix("cost."))
    if key.startswith("split."):
        split = diagnostics.knowledge_split
        population, _, metric = key.removeprefix("split.").partition(".")
        return None if split is None else getattr(getattr(split, population), metric)
    if key.startswith("judge."):
        judged, name = diagnostics.knowledge_judge, key.removeprefix("judge.")
        if judged is None:
            return None
        return judged.means[name] if name in judged.means else getattr(judged, name)
    return getattr(diagnostics, key)


def _cell(key: str, value: object) -> str:
    if isinstance(value, DigParameters):
        text = escape(value.describe())
    elif isinstance(value, float):
        text = _fmt(value)
    else:
        text = "–" if value is None else escape(str(value))
    return f'<td data-key="{key}">{text}</td>'


def _seek_curves(name: str, d: SeekDiagnostics) -> str:
    """One run's Fig. 6b, Fig. 6a and Fig. 4b tables (those it has); Fig. 6 first over A.7's
    population (the questions that took four rounds), then over all questions, labelled."""
    parts = []
    fig6 = f"questions with {d.fig6_rounds} rounds, {d.fig6_questions}: the paper's population"
    for label, overlap in (
        (fig6, d.document_overlap_by_iteration_fig6),
        ("all questions", d.document_overlap_by_iteration),
    ):
        if not overlap:
            continue
        rows = "".join(
            f"<tr><td>{r.iteration}</td><td>{r.questions}</td>"
            f"{_cell('with_previous', r.with_previous)}"
            f"{_cell('with_cumulative', r.with_cumulative)}</tr>"
            for r in overlap
        )
        parts.append(
            f"<h3>{escape(name)}: document overlap across iterations (Fig. 6b), "
            f"{escape(label)}</h3><table>"
            "<tr><th>step</th><th>questions</th><th>with previous step</th>"
            f"<th>with all earlier steps</th></tr>{rows}</table>"
        )
    for label, curve in (
        (fig6, d.performance_by_iteration_fig6),
        ("all questions", d.performance_by_iteration),
    ):
        if not curve:
            continue
        rows = "".join(
            f"<tr><td>{r.iteration}</td><td>{r.questions}</td><td>{r.iterating}</td>"
            f"{_cell('cover_em', r.cover_em)}{_cell('f1', r.f1)}</tr>"
            for r in curve
        )
        parts.append(
            f"<h3>{escape(name)}: performance across iterations (Fig. 6a), {escape(label)}</h3>"
            "<table><tr><th>after iteration</th><th>questions</th><th>still iterating</th>"
            f"<th>Cover-EM</th><th>F1</th></tr>{rows}</table>"
        )
    if d.slot_ablation is not None:
        ablation = d.slot_ablation
        rows = "".join(
            f"<tr><td>{escape(r.removed)}</td>{_cell('cover_em', r.cover_em)}"
            f"{_cell('f1', r.f1)}</tr>"
            for r in ablation.rows
        )
        parts.append(
            f"<h3>{escape(name)}: slot ablation (Fig. 4b), {ablation.questions} sketches of "
            f"{ablation.seed_slots} slots</h3><table><tr><th>slot removed</th>"
            f"<th>Cover-EM</th><th>F1</th></tr>{rows}</table>"
        )
    return "".join(parts)


def seek_diagnostics_section(diagnostics: Mapping[str, SeekDiagnostics]) -> str:
    """The SEEK paper's analyses, one column per run (``eval qa --diagnostics``), each run's
    gist-count distribution and its curves (overlap and performance across iterations, slot
    ablation). Definitions: `sira_seek.metrics.seek_diagnostics`."""
    names = list(diagnostics)
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    rows = []
    for key, label in _SEEK_ROWS:
        cells = "".join(_cell(key, _field(diagnostics[name], key)) for name in names)
        rows.append(f"<tr><td>{escape(label)}</td>{cells}</tr>")
    gist_rows = "".join(
        f"<tr><td>{escape(name)}</td><td>"
        + (", ".join(f"{k} gists: {v}" for k, v in sorted(d.gist_counts.items())) or "–")
        + "</td></tr>"
        for name, d in diagnostics.items()
    )
    return (
        f"<table><tr><th>analysis</th>{head}</tr>{''.join(rows)}</table>"
        f"<h3>Gists per question</h3><table><tr><th>run</th><th>questions by gist count</th>"
        f"</tr>{gist_rows}</table>"
        + "".join(_seek_curves(name, d) for name, d in diagnostics.items())
        + f'<p class="note">{_SEEK_NOTE}</p>'
        + "".join(
            f'<p class="note">{escape(name)}: DIG unavailable: {escape(d.dig_unavailable)}</p>'
            for name, d in diagnostics.items()
            if d.dig_unavailable
        )
    )


def render_seek_report(diagnostics: Mapping[str, SeekDiagnostics], *, title: str = "") -> str:
    """A report of SEEK analyses alone (``eval qa --diagnostics --report FILE``)."""
    if not diagnostics:
        raise ValueError("a SEEK report needs at least one run's diagnostics")
    heading = escape(title or "sira-seek SEEK analyses")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{heading}</title><style>{CSS}</style></head><body><h1>{heading}</h1>"
        f"<h2>SEEK analyses</h2>{seek_diagnostics_section(diagnostics)}</body></html>"
    )


def render_report(
    runs: list[RunRecord],
    *,
    baseline: str | None = None,
    title: str = "",
    seek: Mapping[str, SeekDiagnostics] | None = None,
) -> str:
    """The whole report; ``baseline`` (default: the first BM25 run, else the first run) is what
    the others are compared with, per query and with a paired significance test. ``seek``
    (run name -> `SeekDiagnostics`) adds the SEEK analyses section."""
    if not runs:
        raise ValueError("a report needs at least one run file")
    # "nDCG@10" (saved with --measures) and "ndcg@10" (default) must be one column.
    runs = [r.with_measure_keys() for r in runs]
    base = pick_baseline(runs, baseline)
    svg_charts.reset_colors([r.name for r in runs])
    metrics = sorted({m for r in runs for m in r.metrics})
    sections = [
        f"<h1>{escape(title or 'sira-seek evaluation report')}</h1>",
        "<h2>Summary</h2>",
        _summary_table(runs, metrics),
        "<h2>Metrics</h2>",
        svg_charts.grouped_bars(
            metrics,
            {r.name: [r.metrics.get(m, 0.0) for m in metrics] for r in runs},
            "Mean metrics per run",
            "score",
        ),
    ]
    tests = compare_with_baseline(runs, base) if len(runs) > 1 else []
    if tests:
        sections += [
            f"<h2>Paired significance vs {escape(base.name)}</h2>",
            _significance_section(tests, base),
        ]
    if len(runs) > 1 and any(r.per_query for r in runs):
        metric = "ndcg@10" if "ndcg@10" in metrics else metrics[0]
        sections += [
            f"<h2>Per-query wins and losses ({escape(metric)})</h2>",
            _win_loss_section(runs, base, metric),
        ]
    curves = {r.name: r for r in runs if r.recall_curve}
    if curves:
        ks = sorted({k for r in curves.values() for k in r.recall_curve})
        sections += [
            "<h2>Recall@k</h2>",
            svg_charts.lines(
                [float(k) for k in ks],
                {n: [r.recall_curve.get(k, 0.0) for k in ks] for n, r in curves.items()},
                "Recall@k",
                "k",
                "recall",
            ),
        ]
    sections += [
        "<h2>Latency</h2>",
        svg_charts.histogram(
            {r.name: r.latency_ms for r in runs if r.latency_ms}, "Per-query latency", "ms"
        ),
        "<h2>LLM tokens per query</h2>",
        svg_charts.histogram(
            {r.name: [float(t) for t in r.llm_tokens] for r in runs if any(r.llm_tokens)},
            "LLM tokens per query",
            "tokens",
        ),
    ]
    if seek:
        sections += ["<h2>SEEK analyses</h2>", seek_diagnostics_section(seek)]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title or 'sira-seek report')}</title><style>{CSS}</style></head>"
        f"<body>{''.join(sections)}</body></html>"
    )

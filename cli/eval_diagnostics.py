"""``eval qa --diagnostics``: the SEEK paper's analyses of a finished run, as lines for people.

The analyses themselves are computed by the QA evaluation workflow
(`sira_seek.workflows.evaluate_qa`, over `sira_seek.metrics.seek_diagnostics`).
"""

from __future__ import annotations

import click

from sira_seek.workflows.scores import AnalysisCost, SeekDiagnostics


def show(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _cost(cost: AnalysisCost | None) -> str:
    if cost is None:
        return ""
    return (
        f"; cost {cost.llm_calls} LLM calls, {cost.completion_tokens} completion tokens, "
        f"{cost.wall_seconds:.1f}s"
        + (f", {cost.failed_questions} questions failed" if cost.failed_questions else "")
    )


def _fig6_label(found: SeekDiagnostics) -> str:
    return f"questions with {found.fig6_rounds} rounds ({found.fig6_questions}; the paper's)"


def _overlap_lines(found: SeekDiagnostics) -> list[str]:
    """Fig. 6b: one line per step from the second, over A.7's population, then over all."""
    lines = []
    for label, curve in (
        (_fig6_label(found), found.document_overlap_by_iteration_fig6),
        ("all questions", found.document_overlap_by_iteration),
    ):
        lines.append(f"  Fig. 6b, {label}:" + ("" if curve else " none"))
        lines += [
            f"    step {r.iteration}: with previous {show(r.with_previous)}, with cumulative "
            f"{show(r.with_cumulative)} ({r.questions} questions)"
            for r in curve
        ]
    return lines


def _answer_lines(found: SeekDiagnostics) -> list[str]:
    """Fig. 6a, one line per iteration, and Fig. 4b, one line per removed slot."""
    curve = found.performance_by_iteration
    if curve is None or found.performance_by_iteration_unavailable:
        missing = found.performance_by_iteration_unavailable
        lines = [f"performance by iteration   n/a ({missing})"]
    else:
        cost = _cost(found.performance_by_iteration_cost)
        lines = [f"performance by iteration   (Fig. 6a){cost}"]
        for label, rows in (
            (_fig6_label(found), found.performance_by_iteration_fig6 or []),
            ("all questions", curve),
        ):
            lines.append(f"  Fig. 6a, {label}:" + ("" if rows else " none"))
            lines += [
                f"    after {r.iteration}: Cover-EM {r.cover_em:.4f}, F1 {r.f1:.4f} "
                f"({r.questions} questions, {r.iterating} still iterating)"
                for r in rows
            ]
    ablation = found.slot_ablation
    if ablation is None:
        return [*lines, f"slot ablation              n/a ({found.slot_ablation_unavailable})"]
    lines.append(
        f"slot ablation (Fig. 4b)    {ablation.questions} sketches of "
        f"{ablation.seed_slots} slots{_cost(ablation.cost)}"
    )
    return lines + [
        f"  {r.removed:<10} Cover-EM {r.cover_em:.4f}, F1 {r.f1:.4f}" for r in ablation.rows
    ]


def _knowledge_lines(found: SeekDiagnostics) -> list[str]:
    """Table 3 (conflict / utilization) and §5.4's judge, when asked."""
    lines = []
    split = found.knowledge_split
    if split is not None:
        lines.append(
            f"knowledge split (Table 3)  closed-book {split.closed_book} decides ({split.metric}"
            f"; {split.unmatched} questions unmatched)"
        )
        for label, part in (("conflict", split.conflict), ("utilization", split.utilization)):
            lines.append(
                f"  {label:<12} {part.questions} questions: Cover-EM {part.cover_em:.4f}, "
                f"EM {part.em:.4f}, F1 {part.f1:.4f}"
            )
    judged = found.knowledge_judge
    if judged is not None:
        means = ", ".join(f"{k} {show(v)}" for k, v in judged.means.items())
        lines.append(
            f"knowledge judge (§5.4)     {means} (0-5; {judged.judged} judged, "
            f"{judged.malformed} malformed, {judged.failed} failed, {judged.no_context} "
            f"without context; context: {judged.context}; judge {judged.judge}"
            f"{_cost(judged.cost)})"
        )
    return lines


def format_diagnostics(found: SeekDiagnostics) -> str:
    """A few lines for people; ``--json`` carries every figure and the per-question rows."""
    gists = ", ".join(f"{k}: {v}" for k, v in found.gist_counts.items()) or "n/a"
    dig_with = "n/a" if found.dig_parameters is None else found.dig_parameters.describe()
    recall_note = found.max_subquery_recall_unavailable
    lines = [
        f"sub-query similarity       {show(found.subquery_similarity)} "
        f"({found.subquery_similarity_measure}; diversity {show(found.subquery_diversity)}; "
        f"{found.diversity_questions} questions with 2+ sub-queries)",
        f"document overlap           {show(found.document_overlap)} (consecutive steps' "
        f"Jaccard; {found.document_overlap_questions} questions with 2+ steps)",
        *_overlap_lines(found),
        f"new-document share         {show(found.new_document_share)}",
        f"DIG                        {show(found.dig)} ({found.dig_questions} questions"
        + (f"; unavailable: {found.dig_unavailable})" if found.dig_unavailable else ")"),
        f"DIG parameters (Eq. 14-15) {dig_with}",
        f"max sub-query Recall@5     {show(found.max_subquery_recall_at_5)} "
        f"(answer-containing documents; {found.max_subquery_recall_questions} questions"
        + (f"; {recall_note})" if recall_note else ")"),
        f"qrels sub-query Recall@5   {show(found.qrels_subquery_recall_at_5)} "
        f"({found.qrels_recall_questions} judged questions)",
        *_answer_lines(found),
        f"stopped at the step cap    {found.step_cap_reached} questions",
        f"sub-queries per question   {show(found.subqueries_per_question)}",
        f"gists per question         {show(found.gists_per_question)} (by count {gists})",
        f"seconds per question       {show(found.seconds_per_question)} "
        f"(median {show(found.seconds_per_question_p50)}, "
        f"amortised {show(found.amortised_seconds_per_question)})",
        f"LLM cost                   {'n/a' if found.cost is None else found.cost.describe()}",
        *_knowledge_lines(found),
    ]
    return "\n".join(lines)


def echo_diagnostics(found: SeekDiagnostics) -> None:
    click.echo(format_diagnostics(found))

"""Metrics: pure functions over plain records, the leaf every evaluation builds on.

- ``qa``: Cover-EM, EM and F1 equal to the SEEK/PAGER authors' scorer, and reading
  prediction files;
- ``retrieval``: retrieval metrics through ir_measures (``score_run``, the one scoring path);
- ``coverage``: answer coverage@k of ranked passages;
- ``information_gain``: the DIG arithmetic (confidences in, gains out);
- ``seek_diagnostics``: the SEEK paper's analyses over plain per-question traces;
- ``seek_answer_analyses``: its answer-quality analyses (after each iteration, slot ablation);
- ``run_record``: a saved run (what ``sira-seek report`` compares);
- ``trec_run``: six-column TREC run files.

Nothing here imports the algorithms (``sira``, ``seek``, ``sync``, ``agent``), the front
ends (``service``, ``integrations``, ``client``, ``cli``), ``workflows`` or ``esplugin``:
they import metrics, never the other way round (``tests/unit/foundation/test_metrics_leaf.py``
checks every import, function-level ones included). What needs a search backend or an LLM
lives beside its method (``sira_seek.bm25``, ``sira_seek.sira.evaluation``,
``sira_seek.seek.information_gain``) or in ``sira_seek.workflows``.
"""

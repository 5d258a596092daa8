"""Choose tau and w on a dev split, never on the reported one (the reference leaves both unset).

The algorithm takes connected ``SearchBackend``s; the command that connects to the clusters is
``python -m sira_seek.cli.tuning``:

    python -m sira_seek.cli.tuning --url http://127.0.0.1:9410 --url http://127.0.0.1:9420 \\
        --index wikimh --data ../shared/data/wikimh --dev 50 \\
        --expansions expansions-hotpotqa.strong-llm.jsonl \\
        --weak-expansions tests/regression/expansions-hotpotqa.cpu-gemma3-270m.jsonl

Every (tau, w, ngram tier) of the grid runs on the first ``--dev`` queries of each cluster,
with the strong expansions and with each weak one. A setting is admissible when, with every
weak expansion source, it loses at most ``--max-loss`` nDCG@10 and Recall@10 against BM25 on
dev (the DF filter and w must protect against a weak model); among those, the best mean
strong-expansion nDCG@10 over the clusters wins (then Recall@10, then the smaller w and tau).
The winner is then reported on all queries and on the held-out rest.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from sira_seek.backend import SearchBackend
from sira_seek.corpus import Query

from .evaluation import evaluate_bm25, evaluate_sira
from .expansions import QueryExpander
from .settings import SiraSettings

TAUS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
WEIGHTS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
METRICS = ("ndcg@10", "recall@10")

Scores = dict[str, dict[str, float]]  # engine -> metric -> value


class GridPoint(BaseModel):
    tau: float
    weight: float
    ngram_tier: bool
    strong: Scores
    weak: dict[str, Scores]

    def mean(self, metric: str, scores: Scores | None = None) -> float:
        scores = scores or self.strong
        return round(sum(m[metric] for m in scores.values()) / len(scores), 4)


def split(queries: list[Query], dev: int) -> tuple[list[Query], list[Query]]:
    """The first ``dev`` queries (file order) are the dev split, the rest are held out."""
    return queries[:dev], queries[dev:]


def admissible(point: GridPoint, bm25: Scores, max_loss: float) -> bool:
    """No weak source loses more than ``max_loss`` against BM25 on any cluster and metric."""
    return all(
        scores[engine][metric] >= bm25[engine][metric] - max_loss
        for scores in point.weak.values()
        for engine in bm25
        for metric in METRICS
    )


def choose(grid: list[GridPoint], bm25: Scores, max_loss: float) -> GridPoint:
    pool = [g for g in grid if admissible(g, bm25, max_loss)] or grid
    return max(pool, key=lambda g: (g.mean("ndcg@10"), g.mean("recall@10"), -g.weight, -g.tau))


def _scores(
    backends: Mapping[str, SearchBackend],
    index: str,
    queries: list[Query],
    qrels: dict[str, dict[str, int]],
    expander: QueryExpander | None,
    settings: SiraSettings | None = None,
) -> Scores:
    out: Scores = {}
    for engine, backend in backends.items():
        if expander is None:
            out[engine] = evaluate_bm25(backend, index, queries, qrels)
        else:
            out[engine] = evaluate_sira(
                backend, index, queries, qrels, expander=expander, settings=settings
            )
    return out


def tune(
    backends: Mapping[str, SearchBackend],
    index: str,
    queries: list[Query],
    qrels: dict[str, dict[str, int]],
    strong: QueryExpander,
    weak: Mapping[str, QueryExpander],
    *,
    dev: int,
    max_loss: float,
) -> dict[str, Any]:
    """The grid on the dev split of every cluster (``backends``: engine -> backend), the chosen
    setting, and its scores on all queries and on the held-out rest (a JSON-ready report)."""
    dev_q, held_out = split(queries, dev)
    bm25_dev = _scores(backends, index, dev_q, qrels, None)
    grid: list[GridPoint] = []
    for tau, weight, ngram in itertools.product(TAUS, WEIGHTS, (False, True)):
        settings = SiraSettings(tau=tau, weight=weight, ngram_tier=ngram)
        grid.append(
            GridPoint(
                tau=tau,
                weight=weight,
                ngram_tier=ngram,
                strong=_scores(backends, index, dev_q, qrels, strong, settings),
                weak={
                    n: _scores(backends, index, dev_q, qrels, e, settings) for n, e in weak.items()
                },
            )
        )
    best = choose(grid, bm25_dev, max_loss)
    chosen = SiraSettings(tau=best.tau, weight=best.weight, ngram_tier=best.ngram_tier)
    report: dict[str, Any] = {
        "dev_queries": len(dev_q),
        "criterion": f"weak sources lose <= {max_loss} vs BM25 on dev; then best strong nDCG@10",
        "admissible": sum(admissible(g, bm25_dev, max_loss) for g in grid),
        "grid_size": len(grid),
        "chosen": {"tau": best.tau, "weight": best.weight, "ngram_tier": best.ngram_tier},
        "bm25_dev": bm25_dev,
        "dev": {"strong": best.strong, **best.weak},
        "reported": {
            name: {
                "all": _scores(backends, index, queries, qrels, exp, chosen),
                "held_out": _scores(backends, index, held_out, qrels, exp, chosen),
            }
            for name, exp in {"strong": strong, **weak}.items()
        },
        "bm25": {
            "all": _scores(backends, index, queries, qrels, None),
            "held_out": _scores(backends, index, held_out, qrels, None),
        },
        "grid": [g.model_dump() for g in grid],
    }
    return report

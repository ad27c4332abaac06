"""Tune hybrid fusion on one half of the hard evaluation, report on the other.

    .venv/bin/python benchmarks/fusion_tune.py

Candidates are gathered once per question (one statement each, as
memory_search does, with no relevance floor); every setting is then only a
re-rank, so a grid of hundreds of settings takes a minute or two. The set
is split by service (ops tenant) and by speaker (public corpus): settings
are chosen on the dev half and their figures reported on the held-out half,
which the choice never saw. The floor is then chosen as the highest one
whose dev recall@5 stays within FLOOR_TOLERANCE of the unfloored ranking.
On a throwaway database.
"""

import itertools
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import command_line, setup_django

LIMIT = 10
TOP = 8
FLOOR_TOLERANCE = 0.01
GRID = {
    "entity": (0.0, 0.05, 0.1, 0.15),
    "doc_type": (0.0, 0.05, 0.1),
    "recency": (0.0, 0.02, 0.05, 0.1),
    "time": (0.1, 0.2, 0.3),
    "lexical_lift": (0.3, 0.5, 0.7),
}
FLOORS = tuple(round(0.30 + 0.02 * step, 2) for step in range(16))


def gather_all(tenants: dict, query_rows: list) -> dict:
    """Question id → (its unfloored hybrid candidates, path → memory id)."""
    from memory_app.selectors.search import (
        FUSION,
        OVERFETCH,
        context_stores,
        hybrid_candidates,
        searchable_documents,
    )

    unfloored = replace(FUSION, floor=0.0)
    gathered = {}
    for query in query_rows:
        actor, paths = tenants[query.tenant]
        scope = context_stores(actor)
        candidates = hybrid_candidates(
            searchable_documents(actor, scope=scope),
            query.text,
            scope=scope,
            k=LIMIT * OVERFETCH,
            fusion=unfloored,
        )
        gathered[query.id] = (candidates, paths)
    return gathered


def ranked_ids(gathered: dict, query_rows: list, fusion) -> dict[str, list[str]]:
    from memory_app.selectors.search import above_floor, rerank

    ranked = {}
    for query in query_rows:
        candidates, paths = gathered[query.id]
        kept = [c for c in candidates if above_floor(c, fusion.floor)]
        hits = rerank(kept, query.text, "hybrid", fusion)[:LIMIT]
        ranked[query.id] = [paths.get(c.document.path, "") for c in hits]
    return ranked


def objective(scores: dict) -> float:
    """Recall@5 over the answerable questions; MRR breaks ties."""
    return scores["all"].recall_at_5 + 0.1 * scores["all"].mrr


def fusion_for(setting: dict):
    from memory_app.selectors.search import FUSION

    weights = dict(FUSION.weights)
    weights.update({name: setting[name] for name in ("entity", "doc_type", "recency", "time")})
    return replace(FUSION, weights=weights, lexical_lift=setting["lexical_lift"], floor=0.0)


def tune(gathered: dict, dev: list):
    from benchmarks.eval.run import score_kinds

    tried = []
    for values in itertools.product(*GRID.values()):
        setting = dict(zip(GRID, values, strict=True))
        value = objective(score_kinds(dev, ranked_ids(gathered, dev, fusion_for(setting))))
        tried.append((value, setting))
    tried.sort(key=lambda pair: -pair[0])
    print("best settings on dev (recall@5 + 0.1·MRR):")
    for value, setting in tried[:TOP]:
        print(f"  {value:.4f}  {setting}")
    best = fusion_for(tried[0][1])
    base = score_kinds(dev, ranked_ids(gathered, dev, best))["all"].recall_at_5
    floor = 0.0
    for candidate in FLOORS:
        floored = replace(best, floor=candidate)
        if score_kinds(dev, ranked_ids(gathered, dev, floored))["all"].recall_at_5 >= (
            base - FLOOR_TOLERANCE
        ):
            floor = candidate
    return replace(best, floor=floor)


def report(title: str, gathered: dict, query_rows: list, fusion) -> None:
    from benchmarks.eval.run import KINDS, score_kinds

    scores = score_kinds(query_rows, ranked_ids(gathered, query_rows, fusion))
    print(f"\n{title}")
    print("kind           n    R@5    R@10   MRR    nDCG@10 empty hits")
    for kind in ("all", *KINDS):
        if kind in scores:
            print(f"{kind:<11} {scores[kind].row()}")


def main() -> None:
    command_line(__doc__).parse_args()
    setup_django()
    from benchmarks.eval.hard import ops_set, public_set, split
    from benchmarks.eval.run import load_hard
    from memory_app.selectors.search import FUSION

    ops_rows, ops_queries = ops_set()
    public_rows, public_queries = public_set()
    query_rows = ops_queries + public_queries
    gathered = gather_all(load_hard(ops_rows + public_rows), query_rows)
    dev, held_out = split(query_rows)
    print(f"{len(dev)} dev questions, {len(held_out)} held out")
    chosen = tune(gathered, dev)
    print(f"chosen: weights {chosen.weights}, lift {chosen.lexical_lift}, floor {chosen.floor}")
    for name, fusion in (("current", FUSION), ("chosen", chosen)):
        report(f"{name}, dev", gathered, dev, fusion)
        report(f"{name}, held out", gathered, held_out, fusion)


if __name__ == "__main__":
    main()

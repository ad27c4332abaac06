"""Retrieval quality: recall@5, MRR and nDCG@10 for text, semantic and hybrid.

    .venv/bin/python benchmarks/retrieval_eval.py

300 memories and 150 judged queries (benchmarks/eval/dataset.py), on a
throwaway database.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import setup_django


def main() -> None:
    setup_django()
    from benchmarks.eval.dataset import memories, queries
    from benchmarks.eval.run import evaluate, load_memories
    from memory_app.actors import actor_for
    from memory_app.services.principals import principal_upsert

    rows, query_rows = memories(), queries()
    ids_by_path = load_memories(rows)
    actor = actor_for(principal_upsert(username="eval"))
    print(f"{len(rows)} memories, {len(query_rows)} queries")
    for kind in ("all", "exact", "paraphrase", "reference"):
        subset = [q for q in query_rows if kind == "all" or q.kind == kind]
        for mode in ("text", "semantic", "hybrid"):
            print(f"{kind:<10} {mode:<8} {evaluate(actor, subset, ids_by_path, mode)}")


if __name__ == "__main__":
    main()

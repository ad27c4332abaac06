"""Retrieval quality on the hard evaluation set, per mode and per query kind.

    .venv/bin/python benchmarks/retrieval_eval.py [--easy]

The hard set (benchmarks/eval/hard.py): the ops tenant (300 runbooks, 300
near-topic conversation turns, 225 dated change notes; 240 whole-sentence
questions in six kinds) and, when MEMORY_EVAL_CORPUS points at the public long-conversation
corpus, one tenant per speaker with its dated questions. Recall@5/@10, MRR
and nDCG@10 per kind; for no-answer questions the share that came back
empty. `--easy` runs the original short-query set (dataset.py) instead.
On a throwaway database.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import command_line, setup_django


def easy() -> None:
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


def hard() -> None:
    from benchmarks.eval.hard import ops_set, public_set
    from benchmarks.eval.run import KINDS, MODES, evaluate_hard, load_hard

    ops_rows, ops_queries = ops_set()
    public_rows, public_queries = public_set()
    rows, query_rows = ops_rows + public_rows, ops_queries + public_queries
    tenants = load_hard(rows)
    print(f"{len(rows)} memories in {len(tenants)} tenants, {len(query_rows)} questions")
    print("kind        mode         n    R@5    R@10   MRR    nDCG@10 empty hits")
    results = {mode: evaluate_hard(tenants, query_rows, mode) for mode in MODES}
    for kind in ("all", *KINDS):
        for mode in MODES:
            if kind in results[mode]:
                print(f"{kind:<11} {mode:<9} {results[mode][kind].row()}")


def main() -> None:
    parser = command_line(__doc__)
    parser.add_argument("--easy", action="store_true", help="the original short-query set")
    easy_set = parser.parse_args().easy
    setup_django()
    easy() if easy_set else hard()


if __name__ == "__main__":
    main()

"""The text side of a search alone, under each of PostgreSQL's plan cache modes.

    .venv/bin/python benchmarks/text_side_bench.py --documents 100000
        [--queries 200] [--rounds 3] [--data-dir DIR] [--small-scope-rows N]

Loads N documents spread as retrieval_bench.py spreads them, without
embeddings: the text statement reads none, so a 100,000-document load
takes minutes instead of hours. Then, for the benchmark agent's broad
scope, one of its system stores (3% of the table) and its one conversation
store (0.2%), it captures the prepared text statement of each question
(memory_search in text mode) and runs it again under `plan_cache_mode`
custom (planned each time, as an unprepared statement is), auto
(PostgreSQL's default) and generic (the app's setting), interleaved round
by round so machine noise hits all three. Prints the wall time per mode
and how many questions the generic plan answered with the same documents
in the same order as the custom one. `--small-scope-rows` moves the size
under which a scope's rows are read whole instead of through the text
index (0: never).
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import percentiles, setup_django

MODES = ("force_custom_plan", "auto", "force_generic_plan")


def captured_statements(actor, queries: list[str], stores: list[str] | None) -> list[str]:
    """The EXECUTE of the text statement each question sends, its arguments inlined."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory_app.selectors.search import memory_search

    statements = []
    for query in queries:
        with CaptureQueriesContext(connection) as captured:
            memory_search(actor=actor, query=query, stores=stores, mode="text")
        statements += [
            q["sql"]
            for q in captured.captured_queries
            if q["sql"].startswith("EXECUTE memory_text_side_")
        ]
    return statements


def measure(statements: list[str], rounds: int) -> None:
    from django.db import connection

    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    answers: dict[str, list] = {}
    with connection.cursor() as cursor:
        for _ in range(rounds):
            for mode in MODES:
                cursor.execute("SELECT set_config('plan_cache_mode', %s, false)", [mode])
                rows = []
                for statement in statements:
                    started = time.perf_counter()
                    cursor.execute(statement)
                    rows.append(cursor.fetchone()[0])
                    samples[mode].append((time.perf_counter() - started) * 1000)
                answers[mode] = rows
        cursor.execute("SELECT set_config('plan_cache_mode', 'force_generic_plan', false)")
    for mode in MODES:
        print(f"  {mode:<20} {percentiles(samples[mode])}")
    same = sum(a == b for a, b in zip(answers[MODES[0]], answers[MODES[-1]], strict=True))
    print(f"  generic answers as custom: {same} / {len(statements)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument(
        "--small-scope-rows",
        type=int,
        default=None,
        help="stores holding at most this many rows are read whole (0: never)",
    )
    args = parser.parse_args()
    setup_django(args.data_dir)
    if args.small_scope_rows is not None:
        from memory_app.selectors import candidates

        candidates.SMALL_SCOPE_ROWS = args.small_scope_rows

    from django.db import connection

    from benchmarks.eval.dataset import TOPICS
    from benchmarks.loading import bulk_load
    from benchmarks.retrieval_bench import build_world
    from memory_app.models import MemoryDocument

    rng = random.Random(11)
    agent, actor, plan = build_world(args.documents, rng)
    present = MemoryDocument.objects.filter(created_by=agent).count()
    if present < args.documents:
        if present:
            sys.exit(f"{args.data_dir} holds {present} documents, fewer than asked")
        seconds = bulk_load(plan, agent, rng, embed=False)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE memory_app_memorydocument")
            cursor.execute("VACUUM ANALYZE memory_app_documentterms")
        print(f"loaded {args.documents} documents without embeddings in {seconds:.0f} s")
    services = ["payments", "checkout", "kafka", "search", "billing", "gateway"]
    queries = [
        rng.choice([t.paraphrase, t.exact_query]).format(svc=rng.choice(services))
        for t in (rng.choice(TOPICS) for _ in range(args.queries))
    ]
    scopes = [
        ("broad scope", None),
        ("one system store", ["system:system-0"]),
        ("one conversation store", ["conversation"]),
    ]
    for label, stores in scopes:
        statements = captured_statements(actor, queries, stores)
        print(f"{label}: {len(statements)} text statements, {args.rounds} rounds")
        measure(statements, args.rounds)


if __name__ == "__main__":
    main()

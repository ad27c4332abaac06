"""memory_mark_used latency, and what its updates cost the documents table.

    .venv/bin/python benchmarks/mark_used_bench.py [--documents 2000] [--calls 300]
        [--fillfactor N]

Loads N documents (real embeddings) into one conversation store, then
calls the memory_mark_used service with five documents drawn at random per
call, as an agent marks the memories a turn used. Each call's documents
are first recorded as injected into the run (usage rows, as
memory_context writes them), since only what a run was given counts. Prints the call's
latency and that of its UPDATE of the documents' counts alone, how many
of the row updates were heap-only (HOT: the new row version stayed on its
page, so no index got an entry) and how the table and its HNSW index
grew. `--fillfactor` sets the documents table's fill factor before the
load, to compare with the migrations' setting (75).
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import percentiles, setup_django
from benchmarks.loading import bulk_load

CALL_SIZE = 5


def sizes(cursor) -> tuple[int, int]:
    cursor.execute(
        "SELECT pg_relation_size('memory_app_memorydocument'),"
        " pg_relation_size('document_embedding_hnsw')"
    )
    return cursor.fetchone()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=2_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--fillfactor", type=int, default=None)
    args = parser.parse_args()
    setup_django()

    from django.db import connection

    from memory_app.actors import Actor
    from memory_app.models import MemoryDocument, MemoryUsage
    from memory_app.services.context import memory_mark_used
    from memory_app.services.conversations import conversation_open
    from memory_app.services.principals import principal_upsert

    with connection.cursor() as cursor:
        if args.fillfactor is not None:
            cursor.execute(
                f"ALTER TABLE memory_app_memorydocument SET (fillfactor = {args.fillfactor})"
            )
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE oid = 'memory_app_memorydocument'::regclass"
        )
        print(f"documents table options: {cursor.fetchone()[0]}")
    agent = principal_upsert(username="bench-agent", service_account=True)
    conversation = conversation_open(user=agent, external_id="bench-conversation")
    rng = random.Random(7)
    load_seconds = bulk_load([(conversation.store, "agent_draft")] * args.documents, agent, rng)
    print(f"loaded {args.documents} documents with embeddings in {load_seconds:.1f} s")
    actor = Actor(user=agent, agent=agent, conversation=conversation, run_id="bench-run")
    ids = [str(pk) for pk in MemoryDocument.objects.values_list("pk", flat=True)]
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_app_memorydocument")
        before = sizes(cursor)
    calls = [rng.sample(ids, CALL_SIZE) for _ in range(args.calls)]

    def injected(chosen: list[str]) -> None:
        """The turn's usage rows, as memory_context records them."""
        MemoryUsage.objects.bulk_create(
            MemoryUsage(
                run_id=actor.run_id,
                conversation=conversation,
                principal=agent,
                document_id=pk,
                version=1,
                rank=rank,
                score=0.5,
                block="untrusted",
                tokens=40,
            )
            for rank, pk in enumerate(chosen, start=1)
        )

    samples, counted, updated = [], [], 0

    def timing_updates(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            if sql.startswith('UPDATE "memory_app_memorydocument"'):
                counted.append((time.perf_counter() - started) * 1000)

    with connection.execute_wrapper(timing_updates):
        for chosen in calls:
            injected(chosen)
            started = time.perf_counter()
            updated += memory_mark_used(actor=actor, ids=chosen)
            samples.append((time.perf_counter() - started) * 1000)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        time.sleep(1.5)  # the statistics reach the view once a second at most
        cursor.execute(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
            " WHERE relid = 'memory_app_memorydocument'::regclass"
        )
        updates, hot = cursor.fetchone()
        after = sizes(cursor)
    print(f"memory_mark_used of {CALL_SIZE}, {args.calls} calls: {percentiles(samples)}")
    print(f"documents counted: {updated} of {CALL_SIZE * args.calls} named")
    print(f"its UPDATE of the documents' counts: {percentiles(counted)}")
    print(f"row updates: {updates}, heap-only: {hot} ({hot / max(updates, 1):.1%})")
    print(
        f"table {before[0] / 2**20:.2f} -> {after[0] / 2**20:.2f} MiB, "
        f"HNSW index {before[1] / 2**20:.2f} -> {after[1] / 2**20:.2f} MiB"
    )


if __name__ == "__main__":
    main()

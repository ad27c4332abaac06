"""The audit of a memory_context turn: its one statement, timed alone.

    .venv/bin/python benchmarks/audit_bench.py --data-dir DIR [--documents 100000]
        [--blocks 20] [--against MIGRATION]

Runs on a database `benchmarks/retrieval_bench.py --data-dir DIR --load-only`
loaded. A few memory_context calls of the benchmark agent capture a real
turn's audit (its trace of every candidate, its usage rows, its event);
then the statement that writes it runs again and again, in blocks of five.

With `--against` (a migration of memory_app, say
`0016_document_time_indexes`) the blocks alternate between the schema as
migrated and the schema of that migration, the tables migrated back and
forth between blocks, so machine noise hits both alike; the schema is
left migrated.
"""

import argparse
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import setup_django


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--against", help="a memory_app migration to alternate with")
    args = parser.parse_args()
    setup_django(args.data_dir)

    from django.core.management import call_command
    from django.db.migrations.recorder import MigrationRecorder

    from memory_app.services.context_audit import context_audit_write

    audit = captured_audit(args.documents)
    print(
        f"a turn's audit: {len(audit['candidates'])} candidates in its trace "
        f"({len(json.dumps(audit['candidates']))} bytes), {len(audit['rows'])} usage rows"
    )
    latest = (
        MigrationRecorder.Migration.objects.filter(app="memory_app").order_by("-id").first().name
    )
    schemas = [latest, args.against] if args.against else [latest]
    samples: dict[str, list[float]] = defaultdict(list)
    for block in range(args.blocks):
        for schema in schemas if block % 2 else schemas[::-1]:
            if len(schemas) > 1:
                call_command("migrate", "memory_app", schema, verbosity=0)
            for _ in range(5):
                started = time.perf_counter()
                context_audit_write(**audit)
                samples[schema].append((time.perf_counter() - started) * 1000)
    if len(schemas) > 1:
        call_command("migrate", "memory_app", latest, verbosity=0)

    print(f"{'schema':<40} {'p50':>7} {'p95':>7} {'mean':>7}  ms")
    for schema in schemas:
        values = samples[schema]
        q = statistics.quantiles(values, n=100, method="inclusive")
        print(f"{schema:<40} {q[49]:7.2f} {q[94]:7.2f} {statistics.fmean(values):7.2f}")


def captured_audit(documents: int) -> dict:
    """The arguments of the audit of the last of a few real turns."""
    from benchmarks.retrieval_bench import agent_client, build_world, unthrottled
    from memory_app.services import context

    agent, _, _ = build_world(documents, random.Random(11))
    captured = []
    write = context.context_audit_write

    def capturing(**kwargs):
        captured.append(kwargs)
        return write(**kwargs)

    context.context_audit_write = capturing
    client = agent_client(agent)
    questions = [
        "kafka consumer lag after the deploy",
        "the payments api timed out, how did we fix it?",
        "what changed in checkout last week",
    ]
    with unthrottled():
        for question in questions:
            response = client.post(
                "/api/v1/tools/memory_context",
                json.dumps({"message": question}),
                content_type="application/json",
            )
            assert response.status_code == 200, response.content
    context.context_audit_write = write
    return captured[-1]


if __name__ == "__main__":
    main()

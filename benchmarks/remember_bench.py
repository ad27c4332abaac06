"""memory_remember throughput and latency, scanner included, with N documents present.

    .venv/bin/python benchmarks/remember_bench.py [--documents 10000] [--writes 300]
        [--ef-construction 64,256 [--blocks 8]]

Loads N realistic documents (with real embeddings) into one conversation
store through bulk inserts, then times memory_remember over the HTTP stack
(Django test client, token auth, headers) and the service on its own.

The loaded documents are another principal's, written before the run
and counted by the planner's statistics, as after `memory_import`; the
agent's quota then counts its own writes only. The per-run write cap
stays at its default and each run of the agent makes that many writes,
as agent runs do, so the quota counts what it would in service. Only the
per-minute rate is lifted: one serial writer goes faster than an agent
is allowed to. The memories are drawn from a
few thousand combinations of service, symptom and fix with figures of
their own; write-time dedup merges a near-duplicate only when no figure,
negation or replaced word sets the two apart, so at 10,000 documents
most writes now create a document. The outcomes are printed beside the
figures.

With `--ef-construction` the HNSW index is built again before each block
of writes over the HTTP stack, with each listed setting in turn (the order
reversed every other block, so machine noise hits all alike), and a write's
latency is printed per setting: what a denser graph costs a write, whose
new vector is inserted into it.
"""

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import percentiles, setup_django, timed
from benchmarks.loading import bulk_load, hnsw_index_sql


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--ef-construction", help="HNSW settings to alternate, e.g. 64,256")
    parser.add_argument("--blocks", type=int, default=8)
    args = parser.parse_args()
    setup_django()

    from django.conf import settings
    from rest_framework.test import APIClient

    from benchmarks.corpus import memory
    from memory_app.actors import Actor
    from memory_app.services.conversations import conversation_open
    from memory_app.services.principals import api_key_issue, principal_upsert
    from memory_app.services.remember import RememberInput, memory_remember
    from memory_app.services.statistics import statistics_refresh

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    settings.MEMORY_RATE_LIMIT_PER_MINUTE = 10**9
    settings.MEMORY_API_WRITE_RATE = "1000000/minute"
    agent = principal_upsert(username="bench-agent", service_account=True)
    loader = principal_upsert(username="bench-loader")
    conversation = conversation_open(user=agent, external_id="bench-conversation")
    rng = random.Random(7)
    placements = [(conversation.store, "agent_draft")] * args.documents
    load_seconds = bulk_load(placements, loader, rng)
    statistics_refresh()
    print(f"loaded {args.documents} documents with embeddings in {load_seconds:.1f} s")

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=agent).raw}")
    counter = iter(range(10**9))
    outcomes: Counter[str] = Counter()

    def next_write() -> tuple[dict, str]:
        """The next memory, and the run that writes it."""
        n = next(counter)
        return memory(rng, args.documents + n), f"bench-run-{n // settings.MEMORY_RUN_WRITE_CAP}"

    def http_write():
        body, run = next_write()
        response = client.post(
            "/api/v1/tools/memory_remember",
            {"store": "conversation", **body},
            format="json",
            HTTP_X_MEMORY_CONVERSATION="bench-conversation",
            HTTP_X_MEMORY_RUN=run,
        )
        assert response.status_code in (200, 201), response.content
        outcomes[response.json()["outcome"]] += 1

    def service_write():
        body, run = next_write()
        actor = Actor(user=agent, agent=agent, conversation=conversation, run_id=run)
        result = memory_remember(actor=actor, data=RememberInput(store="conversation", **body))
        outcomes[result.outcome] += 1

    if args.ef_construction:
        settings_compared = [int(value) for value in args.ef_construction.split(",")]
        compare_graphs(http_write, outcomes, settings_compared, args.blocks)
        return

    for label, fn in [("HTTP end-to-end", http_write), ("service only", service_write)]:
        timed(fn, 10)  # warm-up
        outcomes.clear()
        started = time.perf_counter()
        samples = timed(fn, args.writes)
        elapsed = time.perf_counter() - started
        mix = ", ".join(f"{count} {outcome}" for outcome, count in outcomes.most_common())
        print(
            f"memory_remember {label}: {args.writes} writes ({mix}), "
            f"{args.writes / elapsed:.0f} writes/s; {percentiles(samples)}"
        )


def compare_graphs(write, outcomes: Counter, settings_compared: list[int], blocks: int) -> None:
    """Writes in blocks of 40 (after 5 unmeasured), the HNSW index built
    with each `ef_construction` before its block."""
    from django.db import connection

    samples: dict[int, list[float]] = {value: [] for value in settings_compared}
    mixes: dict[int, Counter] = {value: Counter() for value in settings_compared}
    for block in range(blocks):
        for value in settings_compared if block % 2 else settings_compared[::-1]:
            with connection.cursor() as cursor:
                cursor.execute("DROP INDEX document_embedding_hnsw")
                cursor.execute("SET maintenance_work_mem = '256MB'")
                cursor.execute(hnsw_index_sql(value))
            timed(write, 5)
            outcomes.clear()
            samples[value] += timed(write, 40)
            mixes[value] += outcomes
    for value in settings_compared:
        mix = ", ".join(f"{count} {outcome}" for outcome, count in mixes[value].most_common())
        mean = statistics.fmean(samples[value])
        print(
            f"ef_construction {value}: {len(samples[value])} writes ({mix}), "
            f"mean {mean:.2f} ms ({1000 / mean:.0f} writes/s); {percentiles(samples[value])}"
        )


if __name__ == "__main__":
    main()

"""memory_embed throughput: documents embedded and stored per second.

    .venv/bin/python benchmarks/embed_bench.py [--documents 5000] [--workers 1 2]
        [--rounds 2]

Loads N realistic documents without embeddings (as an import leaves them),
then re-embeds all of them with `embeddings_backfill`, what `memory_embed`
runs, once per worker count and round, in turn: before each run every
vector is marked as another model's, as after a model change, so each run
embeds and writes every row (the HNSW index takes each new vector).
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import setup_django
from benchmarks.loading import bulk_load


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=5_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    setup_django()

    from memory_app.models import MemoryDocument
    from memory_app.services.conversations import conversation_open
    from memory_app.services.embedding_backfill import embeddings_backfill
    from memory_app.services.principals import principal_upsert

    agent = principal_upsert(username="bench-agent", service_account=True)
    conversation = conversation_open(user=agent, external_id="bench-conversation")
    placements = [(conversation.store, "agent_draft")] * args.documents
    bulk_load(placements, agent, random.Random(7), embed=False)
    print(f"loaded {args.documents} documents without embeddings")
    for round_ in range(1, args.rounds + 1):
        for workers in args.workers:
            MemoryDocument.objects.exclude(embedding=None).update(embedding_model="older-model")
            started = time.perf_counter()
            done = embeddings_backfill(workers=workers)
            seconds = time.perf_counter() - started
            print(
                f"round {round_}, {workers} worker(s): {done} documents in {seconds:.1f} s, "
                f"{done / seconds:.0f} documents/s"
            )


if __name__ == "__main__":
    main()

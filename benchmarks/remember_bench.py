"""memory_remember throughput and latency, scanner included, with N documents present.

    .venv/bin/python benchmarks/remember_bench.py [--documents 10000] [--writes 300]

Loads N realistic documents (with real embeddings) into one conversation
store through bulk inserts, then times memory_remember over the HTTP stack
(Django test client, token auth, headers) and the service on its own.
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import percentiles, setup_django, timed


def load(store, author, count: int, rng: random.Random) -> float:
    from django.utils import timezone

    from benchmarks.corpus import memory
    from memory_app.embeddings import document_text, get_backend
    from memory_app.hashing import GENESIS, chain_sha256, sha256_text
    from memory_app.models import MemoryDocument, MemoryVersion

    started = time.perf_counter()
    backend = get_backend()
    batch = 500
    for offset in range(0, count, batch):
        rows = [memory(rng, n) for n in range(offset, min(count, offset + batch))]
        vectors = backend.embed(
            [document_text(r["title"], r["recall_hint"], r["content"]) for r in rows]
        )
        documents = [
            MemoryDocument(
                store=store,
                path=r["path"],
                title=r["title"],
                recall_hint=r["recall_hint"],
                content=r["content"],
                content_sha256=sha256_text(r["content"]),
                doc_type=r["doc_type"],
                trust="agent_draft",
                tags=r["tags"],
                entities=r["entities"],
                importance=r["importance"],
                embedding=vector,
                embedding_model=backend.model_id,
                created_by=author,
            )
            for r, vector in zip(rows, vectors, strict=True)
        ]
        MemoryDocument.objects.bulk_create(documents)
        now = timezone.now()
        MemoryVersion.objects.bulk_create(
            MemoryVersion(
                document=d,
                version=1,
                change="create",
                title=d.title,
                recall_hint=d.recall_hint,
                content=d.content,
                sha256=d.content_sha256,
                chain_sha256=chain_sha256(
                    previous_chain=GENESIS,
                    version=1,
                    change="create",
                    content_sha256=d.content_sha256,
                    author_name=author.username,
                    created_at=now,
                ),
                author=author,
                author_name=author.username,
                created_at=now,
            )
            for d in documents
        )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    setup_django()

    from django.conf import settings
    from rest_framework.test import APIClient

    from benchmarks.corpus import memory
    from memory_app.actors import Actor
    from memory_app.services.conversations import conversation_open
    from memory_app.services.principals import api_key_issue, principal_upsert
    from memory_app.services.remember import RememberInput, memory_remember

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    settings.MEMORY_RUN_WRITE_CAP = 10**9
    settings.MEMORY_RATE_LIMIT_PER_MINUTE = 10**9
    agent = principal_upsert(username="bench-agent", service_account=True)
    conversation = conversation_open(user=agent, external_id="bench-conversation")
    rng = random.Random(7)
    load_seconds = load(conversation.store, agent, args.documents, rng)
    print(f"loaded {args.documents} documents with embeddings in {load_seconds:.1f} s")

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=agent).raw}")
    counter = iter(range(10**9))

    def http_write():
        body = memory(rng, args.documents + next(counter))
        response = client.post(
            "/api/v1/tools/memory_remember",
            {"store": "conversation", **body},
            format="json",
            HTTP_X_MEMORY_CONVERSATION="bench-conversation",
            HTTP_X_MEMORY_RUN="bench-run",
        )
        assert response.status_code in (200, 201), response.content

    actor = Actor(user=agent, agent=agent, conversation=conversation, run_id="bench-run")

    def service_write():
        body = memory(rng, args.documents + next(counter))
        memory_remember(actor=actor, data=RememberInput(store="conversation", **body))

    for label, fn in [("HTTP end-to-end", http_write), ("service only", service_write)]:
        timed(fn, 10)  # warm-up
        started = time.perf_counter()
        samples = timed(fn, args.writes)
        elapsed = time.perf_counter() - started
        print(
            f"memory_remember {label}: {args.writes} writes, "
            f"{args.writes / elapsed:.0f} writes/s; {percentiles(samples)}"
        )


if __name__ == "__main__":
    main()

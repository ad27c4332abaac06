"""Bulk loading for benchmarks: documents and their first versions, as a write
would leave them (content hash, chained version, real embedding), minus the
per-row round trips."""

import random
import time
from collections.abc import Callable, Sequence

from benchmarks.corpus import memory

BATCH = 256


def bulk_load(
    placements: Sequence[tuple],
    author,
    rng: random.Random,
    *,
    extra: Callable[[], dict] | None = None,
) -> float:
    """Insert one generated memory per (store, trust) placement; returns seconds."""
    from django.utils import timezone

    from memory_app.embeddings import document_text, get_backend
    from memory_app.hashing import GENESIS, chain_sha256, sha256_text
    from memory_app.models import MemoryDocument, MemoryVersion

    started = time.perf_counter()
    backend = get_backend()
    for offset in range(0, len(placements), BATCH):
        chunk = placements[offset : offset + BATCH]
        rows = [memory(rng, offset + i) for i in range(len(chunk))]
        vectors = backend.embed(
            [document_text(r["title"], r["recall_hint"], r["content"]) for r in rows]
        )
        documents = MemoryDocument.objects.bulk_create(
            MemoryDocument(
                store=store,
                trust=trust,
                content_sha256=sha256_text(row["content"]),
                embedding=vector,
                embedding_model=backend.model_id,
                created_by=author,
                **row,
                **(extra() if extra else {}),
            )
            for (store, trust), row, vector in zip(chunk, rows, vectors, strict=True)
        )
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
        if offset // BATCH % 20 == 0:
            print(f"  loaded {offset + len(chunk)} / {len(placements)}", flush=True)
    return time.perf_counter() - started

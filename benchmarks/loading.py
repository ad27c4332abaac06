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
    embed: bool = True,
) -> float:
    """Insert one generated memory per (store, trust) placement; returns seconds.

    `embed=False` leaves embeddings to the backfill, as a burst of writes
    whose background embedding has not caught up yet would.
    """
    from django.utils import timezone

    from memory_app.embeddings import document_text, get_backend
    from memory_app.hashing import GENESIS, chain_key_current, chain_sha256, sha256_text
    from memory_app.models import MemoryDocument, MemoryVersion

    started = time.perf_counter()
    backend = get_backend()
    key = chain_key_current()
    for offset in range(0, len(placements), BATCH):
        chunk = placements[offset : offset + BATCH]
        rows = [memory(rng, offset + i) for i in range(len(chunk))]
        vectors = (
            backend.embed([document_text(r["title"], r["recall_hint"], r["content"]) for r in rows])
            if embed
            else [None] * len(rows)
        )
        documents = MemoryDocument.objects.bulk_create(
            MemoryDocument(
                store=store,
                trust=trust,
                content_sha256=sha256_text(row["content"]),
                embedding=vector,
                embedding_model=backend.model_id if embed else "",
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
                    key=key,
                    previous_chain=GENESIS,
                    version=1,
                    change="create",
                    content_sha256=d.content_sha256,
                    author_name=author.username,
                    created_at=now,
                ),
                chain_key_id=key.id,
                author=author,
                author_name=author.username,
                created_at=now,
            )
            for d in documents
        )
        if offset // BATCH % 20 == 0:
            print(f"  loaded {offset + len(chunk)} / {len(placements)}", flush=True)
    return time.perf_counter() - started


def bulk_pending_promotions(drafts: Sequence, target, proposer) -> int:
    """One pending promotion per draft into `target`, as proposals leave them."""
    from memory_app.models import (
        DreamJob,
        DreamKind,
        DreamReviewItem,
        JobStatus,
        MemoryVersion,
        ReviewAction,
    )

    versions = {
        v.document_id: v for v in MemoryVersion.objects.filter(document__in=drafts, version=1)
    }
    job = DreamJob.objects.create(
        kind=DreamKind.PROMOTION, status=JobStatus.AWAITING_REVIEW, requested_by=proposer
    )
    DreamReviewItem.objects.bulk_create(
        DreamReviewItem(
            job=job,
            action=ReviewAction.PROMOTE,
            source_document=draft,
            source_version=versions[draft.pk],
            target_store=target,
            target_path=draft.path,
            proposed_title=draft.title,
            proposed_content=draft.content,
            rationale=f"Used in several runs; {draft.title.lower()} held each time.",
            proposed_by=proposer,
            run_id=f"run-{index}",
        )
        for index, draft in enumerate(drafts)
    )
    return len(drafts)

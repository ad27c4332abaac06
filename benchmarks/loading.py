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

    The model runs on every usable core (ParallelEmbedder, as memory_embed
    does) while the previous batch is inserted. `embed=False` leaves
    embeddings to the backfill, as a burst of writes whose background
    embedding has not caught up yet would.
    """
    from memory_app.embeddings import ParallelEmbedder, get_backend, usable_cores
    from memory_app.hashing import chain_key_current

    started = time.perf_counter()
    key = chain_key_current()
    backend = get_backend()
    model_id = backend.model_id if embed else ""
    done = 0
    with ParallelEmbedder(backend, usable_cores()) as embedder:
        batches = _batches(placements, rng, extra)
        following = next(batches, None)
        embedding = _embedding(embedder, following, embed)
        while following is not None:
            chunk, rows, extras = following
            vectors = embedding.result() if embed else [None] * len(rows)
            following = next(batches, None)
            embedding = _embedding(embedder, following, embed)
            _insert(chunk, rows, extras, vectors, author, model_id, key)
            if done // BATCH % 20 == 0:
                print(f"  loaded {done + len(chunk)} / {len(placements)}", flush=True)
            done += len(chunk)
    return time.perf_counter() - started


def _batches(placements, rng: random.Random, extra):
    """(placements, memories, extra fields) per batch, drawn from `rng` in
    the order the loader always drew them, so a seed loads the same data."""
    for offset in range(0, len(placements), BATCH):
        chunk = placements[offset : offset + BATCH]
        rows = [memory(rng, offset + i) for i in range(len(chunk))]
        yield chunk, rows, [extra() if extra else {} for _ in rows]


def _embedding(embedder, batch, embed: bool):
    from memory_app.embeddings import document_text

    if batch is None or not embed:
        return None
    return embedder.submit(
        [document_text(r["title"], r["recall_hint"], r["content"]) for r in batch[1]]
    )


def _insert(chunk, rows, extras, vectors, author, model_id: str, key) -> None:
    """The documents of one batch and their first versions, two statements."""
    from django.utils import timezone

    from memory_app.hashing import GENESIS, chain_sha256, record_sha256, sha256_text
    from memory_app.models import MemoryDocument, MemoryVersion

    documents = MemoryDocument.objects.bulk_create(
        MemoryDocument(
            store=store,
            trust=trust,
            content_sha256=sha256_text(row["content"]),
            embedding=vector,
            embedding_model=model_id,
            created_by=author,
            **row,
            **fields,
        )
        for (store, trust), row, fields, vector in zip(chunk, rows, extras, vectors, strict=True)
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
                record_sha256=record_sha256(
                    title=d.title,
                    recall_hint=d.recall_hint,
                    reason="",
                    run_id="",
                    metadata={},
                    source_refs=(),
                ),
            ),
            chain_key_id=key.id,
            author=author,
            author_name=author.username,
            created_at=now,
        )
        for d in documents
    )


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


def hnsw_index_sql(ef_construction: int | None = None) -> str:
    """The HNSW index as the models declare it (migrations build the same),
    or with another `ef_construction`."""
    from django.db import connection

    from memory_app.models import MemoryDocument

    (index,) = [i for i in MemoryDocument._meta.indexes if i.name == "document_embedding_hnsw"]
    if ef_construction is not None:
        index = index.clone()
        index.ef_construction = ef_construction
    with connection.schema_editor(collect_sql=True) as editor:
        return str(index.create_sql(MemoryDocument, editor))

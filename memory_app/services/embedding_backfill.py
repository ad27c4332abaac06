"""Filling in missing or outdated document embeddings.

Writes compute the embedding inline (dedup needs it anyway); this catches
what they could not: a write whose embedding failed, bulk imports, and every
document after a model change (`embedding_model` differs).
"""

from collections.abc import Callable

from django.db import connection
from django.db.models import Q

from memory_app.embeddings import ParallelEmbedder, document_text, get_backend
from memory_app.models import MemoryDocument

_READ = ("id", "title", "recall_hint", "content", "content_sha256")


def _stale() -> Q:
    return Q(embedding__isnull=True) | ~Q(embedding_model=get_backend().model_id)


def stale_embeddings():
    """Documents whose embedding is missing or from another model."""
    return MemoryDocument.objects.filter(_stale())


def document_embed(*, document_id) -> bool:
    """Embed one document if it still exists and needs it; True if written.

    Idempotent and safe to retry: the update only lands while the text is
    the one that was embedded.
    """
    document = MemoryDocument.objects.filter(pk=document_id).filter(_stale()).only(*_READ).first()
    if document is None:
        return False
    return _store(document, get_backend().embed([_text(document)])[0]) == 1


def embeddings_backfill(
    *,
    batch_size: int = 64,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
) -> int:
    """Embed every stale document, a batch at a time; returns how many.

    `progress(done, total)` after each batch, total as counted at the start.
    Batches walk the primary key upwards, so each read starts where the last
    one stopped instead of rescanning the rows already done, and a row whose
    write lost to a concurrent edit is not read again (that edit embeds it).

    The model runs on `workers` threads of its own (ParallelEmbedder) while
    this thread reads the next batch and writes the one before, so the
    database's round trips and the model's work overlap.
    """
    backend = get_backend()
    total = stale_embeddings().count() if progress else 0
    done = 0
    with ParallelEmbedder(backend, workers) as embedder:
        batch = _next_batch(None, batch_size, limit)
        embedding = embedder.submit([_text(d) for d in batch]) if batch else None
        while batch:
            following = _next_batch(batch[-1].pk, batch_size, _left(limit, done + len(batch)))
            vectors = embedding.result()
            if following:
                embedding = embedder.submit([_text(d) for d in following])
            embeddings_write(batch, vectors, backend.model_id)
            done += len(batch)
            if progress:
                progress(done, max(total, done))
            batch = following
    return done


def _left(limit: int | None, read: int) -> int | None:
    return None if limit is None else limit - read


def _next_batch(after, batch_size: int, limit: int | None) -> list[MemoryDocument]:
    """The next stale documents by primary key after `after`, at most
    `batch_size` and `limit` of them."""
    size = batch_size if limit is None else min(batch_size, limit)
    if size <= 0:
        return []
    pending = stale_embeddings() if after is None else stale_embeddings().filter(pk__gt=after)
    return list(pending.only(*_READ).order_by("id")[:size])


def _text(document: MemoryDocument) -> str:
    return document_text(document.title, document.recall_hint, document.content)


def embeddings_write(documents: list[MemoryDocument], vectors, model_id: str) -> int:
    """One UPDATE for the whole batch, so a re-embed costs one round trip per
    batch instead of one per document; rows whose text changed since they were
    read keep their (newer) state, as in `_store`."""
    table = MemoryDocument._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS d SET embedding = v.embedding::vector, embedding_model = %s "  # noqa: S608
            "FROM unnest(%s::uuid[], %s::text[], %s::text[]) AS v(id, sha, embedding) "
            "WHERE d.id = v.id AND d.content_sha256 = v.sha",
            [
                model_id,
                [d.pk for d in documents],
                [d.content_sha256 for d in documents],
                [str(vector.tolist()) for vector in vectors],
            ],
        )
        return cursor.rowcount


def _store(document: MemoryDocument, vector) -> int:
    return MemoryDocument.objects.filter(
        pk=document.pk, content_sha256=document.content_sha256
    ).update(embedding=vector.tolist(), embedding_model=get_backend().model_id)

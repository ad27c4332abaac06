"""Celery tasks: thin, take ids, re-fetch, call a service (STYLE.md)."""

from celery import shared_task

from memory_app.services.embedding_backfill import document_embed, embeddings_backfill


@shared_task(autoretry_for=(Exception,), retry_backoff=True, retry_backoff_max=300, max_retries=5)
def embed_document(document_id: str) -> bool:
    return document_embed(document_id=document_id)


@shared_task(autoretry_for=(Exception,), retry_backoff=True, max_retries=3)
def embed_missing(limit: int = 5000) -> int:
    return embeddings_backfill(limit=limit)

"""Celery tasks: thin, take ids, re-fetch, call a service (STYLE.md).

Every task is safe to run twice: messages are acknowledged only after the
task ends (CELERY_TASK_ACKS_LATE), so a worker that dies mid-task leaves the
message to be delivered again.
"""

from celery import shared_task
from django.conf import settings

from memory_app.dreams.runner import (
    dream_execute,
    dream_failed,
    dream_retrying,
    dream_start_unless_busy,
    dreams_stale,
)
from memory_app.services.embedding_backfill import document_embed, embeddings_backfill


@shared_task(autoretry_for=(Exception,), retry_backoff=True, retry_backoff_max=300, max_retries=5)
def embed_document(document_id: str) -> bool:
    return document_embed(document_id=document_id)


@shared_task(autoretry_for=(Exception,), retry_backoff=True, max_retries=3)
def embed_missing(limit: int = 5000) -> int:
    return embeddings_backfill(limit=limit)


@shared_task(bind=True, max_retries=3)
def run_dream(self, job_id: str) -> str | None:
    """Run one dream job; on error retry with backoff, then mark it failed."""
    try:
        job = dream_execute(job_id)
    except Exception as error:
        if self.request.retries >= self.max_retries:
            dream_failed(job_id, error)
            raise
        dream_retrying(job_id, error)
        delay = settings.MEMORY_DREAM_RETRY_SECONDS * 2**self.request.retries
        raise self.retry(exc=error, countdown=delay) from error
    return job.status if job else None


@shared_task
def start_dream(kind: str) -> str | None:
    """Beat's entry: start a run unless one of the same kind is still under way."""
    job = dream_start_unless_busy(kind=kind)
    return str(job.pk) if job else None


@shared_task
def requeue_stale_dreams() -> int:
    """Send again the jobs whose message or worker was lost (see dreams_stale)."""
    stale = dreams_stale()
    for job_id in stale:
        run_dream.delay(str(job_id))
    return len(stale)

"""Starting and running dream jobs; each run is a DreamJob row.

`dream_start` records the job and enqueues it once the transaction commits;
the worker calls `dream_execute`, which is safe to call again for the same
job (a retry, or a message redelivered after a worker died): finished jobs
are left alone and unfinished ones simply run again.
"""

import logging
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q
from django.utils import timezone

from memory_app.dreams.kinds import KINDS
from memory_app.dreams.progress import Progress
from memory_app.models import DreamJob, JobStatus
from memory_app.queueing import send_after_commit

logger = logging.getLogger(__name__)

FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.AWAITING_REVIEW, JobStatus.REJECTED)
TASK = "memory_app.tasks.run_dream"
STALE_MARGIN = 300


def dream_start(*, kind: str, requested_by: AbstractBaseUser | None = None) -> DreamJob:
    """Record a queued job and hand it to a worker after commit."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    job = DreamJob.objects.create(kind=kind, requested_by=requested_by)
    send_after_commit(
        lambda: current_app.send_task(TASK, args=[str(job.pk)]), what=f"dream job {job.pk}"
    )
    return job


def dream_execute(job_id) -> DreamJob | None:
    """Run a queued or interrupted job to the end; None if it no longer exists."""
    job = DreamJob.objects.filter(pk=job_id).first()
    if job is None or job.status in FINISHED:
        return job
    job.status, job.started_at, job.error = JobStatus.RUNNING, timezone.now(), ""
    job.progress_done = 0
    job.save(update_fields=["status", "started_at", "error", "progress_done"])
    stats = KINDS[job.kind](job, Progress(job))
    job.stats, job.status, job.finished_at = stats, JobStatus.SUCCEEDED, timezone.now()
    job.progress_done = max(job.progress_done, job.progress_total)
    job.save(update_fields=["stats", "status", "finished_at", "progress_done"])
    logger.info("dream job %s (%s) finished: %s", job.pk, job.kind, stats_summary(stats))
    return job


def dream_failed(job_id, error: BaseException) -> None:
    """Mark a job failed after its last retry, keeping what went wrong."""
    DreamJob.objects.filter(pk=job_id).exclude(status__in=FINISHED).update(
        status=JobStatus.FAILED,
        error=f"{type(error).__name__}: {error}"[:2000],
        finished_at=timezone.now(),
    )


def dream_retrying(job_id, error: BaseException) -> None:
    """Note the error of an attempt that will be retried."""
    DreamJob.objects.filter(pk=job_id).exclude(status__in=FINISHED).update(
        status=JobStatus.QUEUED, error=f"retrying after {type(error).__name__}: {error}"[:2000]
    )


def dreams_busy(kind: str) -> bool:
    return DreamJob.objects.filter(
        kind=kind, status__in=(JobStatus.QUEUED, JobStatus.RUNNING)
    ).exists()


def dreams_stale() -> list:
    """Jobs queued or running for longer than any task may run.

    A broker that acknowledges on delivery (the zero-setup filesystem
    transport does) loses the message of a task whose worker died; the job
    row remembers it, and beat sends it again. Running it twice is safe.
    """
    cutoff = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + STALE_MARGIN)
    return list(
        DreamJob.objects.filter(
            Q(status=JobStatus.QUEUED, created_at__lt=cutoff)
            | Q(status=JobStatus.RUNNING, started_at__lt=cutoff)
        ).values_list("pk", flat=True)
    )


def stats_summary(stats: dict) -> dict:
    """A run's figures without the bulky parts (the canary's result lists)."""
    return {name: value for name, value in stats.items() if name != "results"}

"""Starting and running dream jobs; each run is a DreamJob row.

`dream_start` records the job and enqueues it once the transaction commits;
the worker calls `dream_execute`, which is safe to call again for the same
job (a retry, a message redelivered after a worker died, or one the stale
requeue sent again):

- runs of one kind take turns: a run holds its kind's lock (a session
  advisory lock) from start to end, and a second run of the kind waits for
  it, then finds less or nothing left to do;
- a run claims its job with a conditional update, so two deliveries of one
  queued job run it once; finished jobs are left alone;
- a job found running while nobody holds its kind's lock was lost with its
  worker (hard time limit, out of memory): it runs again, up to ATTEMPTS
  runs in all, and then fails with "worker lost or time limit exceeded".
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from memory_app.dreams.kinds import KINDS
from memory_app.dreams.progress import Progress
from memory_app.models import DreamJob, JobStatus
from memory_app.queueing import send_after_commit

logger = logging.getLogger(__name__)

FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.AWAITING_REVIEW, JobStatus.REJECTED)
UNDER_WAY = (JobStatus.QUEUED, JobStatus.RUNNING)
TASK = "memory_app.tasks.run_dream"
STALE_MARGIN = 300
# Runs a job may start; a job whose runs keep dying (the worker killed by the
# time limit or out of memory) fails after this many instead of looping.
ATTEMPTS = 3
KIND_KEY = "hashtext('memory_dream'), hashtext(%s)"
LOST_GRACE = "5s"
LOCK_NOT_AVAILABLE = "55P03"
LOST = "Worker lost or time limit exceeded: the job did not finish in {attempts} attempt(s)."
# The parts of a run's stats kept for the next run, not for people to read.
BULKY = ("results", "fingerprints")


def dream_start(*, kind: str, requested_by: AbstractBaseUser | None = None) -> DreamJob:
    """Record a queued job and hand it to a worker after commit."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    job = DreamJob.objects.create(kind=kind, requested_by=requested_by)
    send_after_commit(lambda: dream_send(job.pk), what=f"dream job {job.pk}")
    return job


def dream_send(job_id) -> None:
    current_app.send_task(TASK, args=[str(job_id)])


@transaction.atomic
def dream_start_unless_busy(
    *, kind: str, requested_by: AbstractBaseUser | None = None
) -> DreamJob | None:
    """Start a run of `kind` unless one is under way; None if one is.

    Two requests at once (two clicks on "Run now", the schedule and a
    person) take turns on a transaction-level lock, so the second sees the
    first's job and starts none.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtext('memory_dream_start'), hashtext(%s))", [kind]
        )
    if dreams_busy(kind):
        return None
    return dream_start(kind=kind, requested_by=requested_by)


def dream_execute(job_id) -> DreamJob | None:
    """Run a queued or lost job to the end; None if it no longer exists.

    A running job is left to its run while its kind's lock is held; a
    queued one waits for the lock (see the module docstring).
    """
    job = DreamJob.objects.filter(pk=job_id).first()
    if job is None or job.status in FINISHED:
        return job
    with _kind_lock(job.kind, wait=job.status == JobStatus.QUEUED) as held:
        if not held:
            return job
        job = DreamJob.objects.filter(pk=job_id).first()
        if job is None or job.status in FINISHED:
            return job
        if job.status == JobStatus.RUNNING and job.attempts >= ATTEMPTS:
            return _give_up(job)
        if not _claim(job):
            return DreamJob.objects.filter(pk=job_id).first()
        return _run(job)


@contextmanager
def _kind_lock(kind: str, *, wait: bool) -> Iterator[bool]:
    """Hold the lock of one kind of dream for the whole run; yields whether held.

    Session-level, since a run spans many transactions. It lives with the
    database connection, so a worker killed mid-run frees it as its
    connection closes: a running job with its kind's lock free is lost.
    Without `wait`, it waits LOST_GRACE at most: the server may take a
    moment to notice a killed worker's connection is gone.
    """
    held = _lock(kind, timeout="0" if wait else LOST_GRACE)
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT pg_advisory_unlock({KIND_KEY})", [kind])


def _lock(kind: str, *, timeout: str) -> bool:
    """Take the kind's lock, waiting at most `timeout` ("0": as long as it takes)."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [timeout])
            cursor.execute(f"SELECT pg_advisory_lock({KIND_KEY})", [kind])
            # The setting is the transaction's; a test's outer one outlives this.
            cursor.execute("SET LOCAL lock_timeout TO DEFAULT")
    except OperationalError as error:
        if getattr(error.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
            raise
        return False
    return True


def _claim(job: DreamJob) -> bool:
    """Mark the job running for this run, unless another delivery got there first."""
    now = timezone.now()
    claimed = DreamJob.objects.filter(pk=job.pk, status=job.status, attempts=job.attempts).update(
        status=JobStatus.RUNNING,
        started_at=now,
        error="",
        progress_done=0,
        attempts=F("attempts") + 1,
    )
    if claimed:
        job.status, job.started_at, job.error = JobStatus.RUNNING, now, ""
        job.progress_done, job.attempts = 0, job.attempts + 1
    return claimed == 1


def _run(job: DreamJob) -> DreamJob:
    progress = Progress(job)
    try:
        stats = KINDS[job.kind](job, progress)
    except BaseException:
        # What was done before the error stays on the page.
        progress.flush()
        raise
    job.stats, job.status, job.finished_at = stats, JobStatus.SUCCEEDED, timezone.now()
    job.progress_done = max(job.progress_done, job.progress_total)
    job.save(update_fields=["stats", "status", "finished_at", "progress_done"])
    logger.info("dream job %s (%s) finished: %s", job.pk, job.kind, stats_summary(stats))
    return job


def _give_up(job: DreamJob) -> DreamJob:
    DreamJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(
        status=JobStatus.FAILED,
        error=LOST.format(attempts=job.attempts),
        finished_at=timezone.now(),
    )
    logger.warning("dream job %s (%s) lost %d times; failed", job.pk, job.kind, job.attempts)
    job.refresh_from_db()
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
    """A run of `kind` is under way; a stale one (see dreams_stale) is not."""
    return (
        DreamJob.objects.filter(kind=kind, status__in=UNDER_WAY)
        .exclude(_stale_q(_stale_cutoff()))
        .exists()
    )


def dream_stale(job: DreamJob) -> bool:
    """This job of the page has been under way for longer than any run may take."""
    cutoff = _stale_cutoff()
    if job.status == JobStatus.QUEUED:
        return job.created_at < cutoff
    started = job.started_at
    return job.status == JobStatus.RUNNING and started is not None and started < cutoff


def dreams_stale() -> list:
    """Jobs queued or running for longer than any task may run.

    A broker that acknowledges on delivery (the zero-setup filesystem
    transport does) loses the message of a task whose worker died; the job
    row remembers it, and beat sends it again: `dream_execute` runs a lost
    job again or, after ATTEMPTS runs, marks it failed.
    """
    return list(DreamJob.objects.filter(_stale_q(_stale_cutoff())).values_list("pk", flat=True))


def _stale_cutoff():
    return timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + STALE_MARGIN)


def _stale_q(cutoff) -> Q:
    return Q(status=JobStatus.QUEUED, created_at__lt=cutoff) | Q(
        status=JobStatus.RUNNING, started_at__lt=cutoff
    )


def stats_summary(stats: dict) -> dict:
    """A run's figures without the bulky parts (the canary's result lists)."""
    return {name: value for name, value in stats.items() if name not in BULKY}

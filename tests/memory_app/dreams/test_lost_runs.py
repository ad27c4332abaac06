"""A run lost with its worker (killed by the time limit, out of memory) is
run again, fails after a bounded number of attempts, and never blocks
"Run now"; a run that fails in the command keeps its end and progress."""

from datetime import timedelta

import pytest
from celery import current_app
from django.core.management import CommandError, call_command
from django.utils import timezone

from memory_app.dreams.kinds import KINDS
from memory_app.dreams.runner import ATTEMPTS, dream_execute
from memory_app.models import DreamJob
from memory_app.tasks import requeue_stale_dreams
from tests.review_app.test_inbox import inbox

pytestmark = pytest.mark.django_db


def lost(kind: str = "expire", *, attempts: int) -> DreamJob:
    """A job its worker left running an hour ago, its run gone with it."""
    return DreamJob.objects.create(
        kind=kind,
        status="running",
        attempts=attempts,
        started_at=timezone.now() - timedelta(hours=1),
        progress_done=2,
        progress_total=9,
    )


@pytest.fixture
def sent(monkeypatch) -> list:
    """The job ids sent to the workers (the broker is not ours to run here)."""
    ids: list = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, args=(), *rest, **options: ids.append(args[0])
    )
    return ids


def test_the_requeue_sends_a_lost_job_and_it_runs_again(sent):
    job = lost(attempts=1)
    assert requeue_stale_dreams() == 1 and sent == [str(job.pk)]
    job = dream_execute(job.pk)
    assert job.status == "succeeded" and job.attempts == 2 and job.finished_at


def test_a_job_lost_on_every_attempt_fails_and_waits_on_the_inbox(client, reviewer, sent):
    job = lost(attempts=ATTEMPTS)
    requeue_stale_dreams()
    job = dream_execute(sent[0])
    assert job.status == "failed" and job.finished_at is not None
    assert job.error.startswith("Worker lost or time limit exceeded")
    assert requeue_stale_dreams() == 0
    client.force_login(reviewer)
    assert inbox(client)["Failed dream jobs"][0] == "1"
    html = client.get("/dreams/").content.decode()
    assert "Worker lost or time limit exceeded" in html and "every 2s" not in html


def test_a_lost_run_does_not_refuse_run_now_or_keep_the_page_polling(
    client, reviewer, django_capture_on_commit_callbacks
):
    lost(attempts=1)
    client.force_login(reviewer)
    assert "every 2s" not in client.get("/dreams/").content.decode()
    with django_capture_on_commit_callbacks():
        response = client.post("/dreams/run", {"kind": "expire"}, follow=True)
    assert "Started a run of expire;" in response.content.decode()
    assert DreamJob.objects.filter(kind="expire", status="queued").count() == 1


def test_a_failure_in_the_command_records_its_end_and_progress(monkeypatch):
    def three_then_fail(job, progress):
        progress.total(5)
        for _ in range(3):
            progress.advance()
        raise RuntimeError("disk full")

    monkeypatch.setitem(KINDS, "expire", three_then_fail)
    with pytest.raises(CommandError):
        call_command("run_dreams", "--kind", "expire")
    job = DreamJob.objects.get(kind="expire")
    assert job.status == "failed" and job.error == "RuntimeError: disk full"
    assert job.finished_at is not None and job.progress_done == 3

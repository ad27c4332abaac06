"""Runs of one dream kind take turns, and a job runs once per claim, on
their own database connections as workers and the command do."""

import threading
import time

import pytest
from django.db import connection, connections

from memory_app.dreams.lifecycle import rotate
from memory_app.dreams.runner import _kind_lock, dream_execute
from memory_app.models import DreamJob, MemoryDocument
from memory_app.services.conversations import conversation_open
from tests.factories import UserFactory, make_document
from tests.memory_app.api.conftest import race

pytestmark = pytest.mark.django_db(transaction=True)

CAPACITY = 5


@pytest.fixture
def full_store(settings):
    """A conversation store holding fifteen drafts where five are allowed."""
    settings.MEMORY_CONVERSATION_CAPACITY = CAPACITY
    user = UserFactory(username="talker")
    store = conversation_open(user=user, external_id="crowded").store
    for n in range(15):
        make_document(store, f"notes/{n}", f"Finding number {n}.", embedding=None)
    return store


class KindHeld:
    """Another session holding a dream kind's lock, as a run of that kind does."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.holding, self.release = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold)

    def _hold(self) -> None:
        try:
            with _kind_lock(self.kind, wait=True):
                self.holding.set()
                self.release.wait(timeout=60)
        finally:
            connections.close_all()

    def __enter__(self) -> "KindHeld":
        self.thread.start()
        assert self.holding.wait(timeout=60)
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.thread.join()


def someone_waits_for_a_dream_lock() -> bool:
    """Poll the server until a session waits on an advisory lock (bounded)."""
    for _ in range(600):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            )
            if cursor.fetchone()[0]:
                return True
        time.sleep(0.05)
    return False


def active(store) -> int:
    return MemoryDocument.objects.filter(store=store, state="active").count()


def test_two_rotate_runs_at_once_leave_exactly_the_capacity(full_store):
    jobs = [DreamJob.objects.create(kind="rotate") for _ in range(2)]
    finished = race(2, lambda n: dream_execute(jobs[n].pk))
    assert [job.status for job in finished] == ["succeeded", "succeeded"]
    assert sum(job.stats["tombstoned"] for job in finished) == 10
    assert active(full_store) == CAPACITY


class _Together:
    """Progress that holds each rotation until all have listed their stores."""

    def __init__(self, barrier: threading.Barrier) -> None:
        self.barrier = barrier

    def total(self, n: int) -> None:
        self.barrier.wait(timeout=60)

    def advance(self, n: int = 1) -> None:
        pass


def test_rotations_that_counted_the_same_excess_still_stop_at_the_capacity(full_store):
    """Even past the runner's lock, each removal counts the store again."""
    job = DreamJob.objects.create(kind="rotate")
    barrier = threading.Barrier(2)
    race(2, lambda n: rotate(job, _Together(barrier)))
    assert active(full_store) == CAPACITY


def test_a_second_delivery_of_a_running_job_leaves_it_to_its_run():
    job = DreamJob.objects.create(kind="expire", status="running", attempts=1)
    with KindHeld("expire"):
        assert dream_execute(job.pk).status == "running"
    job.refresh_from_db()
    assert job.status == "running" and job.attempts == 1 and job.stats == {}


def test_a_queued_job_waits_for_the_run_of_its_kind_then_runs():
    job = DreamJob.objects.create(kind="expire")
    with KindHeld("expire"):
        waiter = threading.Thread(target=lambda: race(1, lambda n: dream_execute(job.pk)))
        waiter.start()
        assert someone_waits_for_a_dream_lock()
        job.refresh_from_db()
        assert job.status == "queued"
    waiter.join()
    job.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 1

"""Dream jobs and embeddings through a real worker, over Redis and over the
zero-setup filesystem transport: enqueued on commit, run, retried on error."""

import time

import pytest
import redis

from config.brokers import filesystem_broker
from memory_app.dreams import consolidate
from memory_app.dreams.runner import dream_start
from memory_app.models import DreamJob, DreamReviewItem, MemoryDocument
from memory_app.services.conversations import conversation_open
from memory_app.services.stores import store_workspace_ensure
from memory_app.tasks import embed_document
from tests.factories import UserFactory, make_document
from tests.integration.conftest import make_app, running_worker

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture(scope="module", params=["redis", "filesystem"])
def worker(request, tmp_path_factory, django_db_blocker):
    if request.param == "redis":
        redis.Redis.from_url(REDIS_URL).flushdb()
        app = make_app("memory-test-redis", broker_url=REDIS_URL)
    else:
        app = make_app("memory-test-fs", **filesystem_broker(tmp_path_factory.mktemp("fs")))
    # Celery's Django fix-up checks the database as the worker starts, which
    # happens here, outside any one test.
    with django_db_blocker.unblock(), running_worker(app):
        yield request.param


def wait_for(job: DreamJob, statuses=("succeeded", "failed"), timeout: float = 60) -> DreamJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in statuses:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job.kind} still {job.status} after {timeout} s")


@pytest.fixture
def drafts(db):
    store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    agent = UserFactory(username="dreamer", service_account=True)
    conversation = conversation_open(user=agent, external_id="worker-test").store
    return [
        make_document(conversation, f"facts/{n}", f"Fact number {n} matters.", importance=8)
        for n in range(3)
    ]


def test_a_dream_job_runs_on_the_worker(worker, drafts):
    job = wait_for(dream_start(kind="consolidate"))
    assert job.status == "succeeded", job.error
    assert job.stats["proposed"] == 3
    assert job.progress_done == job.progress_total == 3
    assert DreamReviewItem.objects.filter(job=job, status="pending").count() == 3


def test_a_failing_job_is_retried_and_ends_without_duplicates(
    worker, drafts, settings, monkeypatch
):
    settings.MEMORY_DREAM_RETRY_SECONDS = 0
    real_propose, calls = consolidate.propose, []

    def flaky(*args, **kwargs):
        calls.append(1)
        created = real_propose(*args, **kwargs)
        if len(calls) == 2:
            raise ConnectionError("database went away mid-run")
        return created

    monkeypatch.setattr(consolidate, "propose", flaky)
    job = wait_for(dream_start(kind="consolidate"))
    assert job.status == "succeeded", job.error
    assert DreamReviewItem.objects.filter(action="promote").count() == 3
    # The retry skipped the two drafts proposed before the failure.
    assert job.stats == {"candidates": 1, "proposed": 1}
    assert len(calls) == 3


def test_a_job_that_keeps_failing_ends_failed_with_its_error(worker, drafts, settings, monkeypatch):
    settings.MEMORY_DREAM_RETRY_SECONDS = 0

    def broken(*args, **kwargs):
        raise ValueError("malformed draft")

    monkeypatch.setattr(consolidate, "propose", broken)
    job = wait_for(dream_start(kind="consolidate"))
    assert job.status == "failed"
    assert "ValueError: malformed draft" in job.error


def test_the_embedding_task_runs_on_the_worker(worker, drafts):
    document = drafts[0]
    MemoryDocument.objects.filter(pk=document.pk).update(embedding=None, embedding_model="")
    embed_document.delay(str(document.pk))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        document.refresh_from_db()
        if document.embedding is not None:
            break
        time.sleep(0.1)
    assert document.embedding is not None and document.embedding_model

"""A worker killed in the middle of a job loses no work.

Messages are acknowledged only when a task ends (acks late), so Redis hands
the message of a killed worker to the next one once its visibility timeout
passes; the job, being idempotent, runs to the end there.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
import redis
from django.db import connection

from memory_app.dreams.runner import dream_start
from memory_app.models import DreamJob, MemoryDocument
from memory_app.services.stores import store_workspace_ensure
from tests.factories import make_document
from tests.integration.conftest import current, make_app

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_URL = "redis://127.0.0.1:6379/14"
ROOT = Path(__file__).resolve().parents[2]


def worker_process(tmp_path: Path) -> subprocess.Popen:
    """`celery worker` as production runs it, on this test's database."""
    params = connection.get_connection_params()
    host = quote(str(params["host"]), safe="")
    name = connection.settings_dict["NAME"]
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@{host}:{params['port']}/{name}",
        "CELERY_BROKER_URL": REDIS_URL,
        "CELERY_VISIBILITY_TIMEOUT": "3",
        "MEMORY_DATA_DIR": str(tmp_path),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "-l", "info"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def poll(job: DreamJob, done, timeout: float) -> DreamJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if done(job):
            return job
        time.sleep(0.2)
    raise AssertionError(f"{job.kind} job: {job.status} {job.progress_done}/{job.progress_total}")


def test_a_killed_worker_loses_no_work(tmp_path):
    redis.Redis.from_url(REDIS_URL).flushdb()
    store = store_workspace_ensure(slug="crash", name="Crash")
    # Enough batches that the job is still running when the poll looks,
    # even on a busy machine where the poll wakes rarely.
    for n in range(1500):
        make_document(store, f"notes/{n}", f"Note {n} about a service we run.", embedding=None)
    first = worker_process(tmp_path)
    try:
        with current(make_app("memory-test-crash", broker_url=REDIS_URL)):
            job = dream_start(kind="embed")
        poll(job, lambda j: j.status == "running" and j.progress_done > 0, timeout=90)
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        first.kill()
    job.refresh_from_db()
    assert job.status == "running"
    assert MemoryDocument.objects.filter(embedding__isnull=True).exists()

    second = worker_process(tmp_path)
    try:
        job = poll(job, lambda j: j.status in ("succeeded", "failed"), timeout=120)
    finally:
        second.terminate()
        second.wait(timeout=30)
    assert job.status == "succeeded", job.error
    assert not MemoryDocument.objects.filter(embedding__isnull=True).exists()

"""Real Celery workers for the integration tests: no eager mode anywhere.

Each broker gets an app of its own, made current for the test module, and a
worker thread consuming from it (the solo pool runs tasks in that thread,
against the same test database).
"""

from contextlib import contextmanager

import celery.contrib.testing.tasks  # noqa: F401  (registers the worker's ping task)
from celery import Celery
from celery.contrib.testing.worker import start_worker

from config.celery import app as default_app


def make_app(name: str, **conf) -> Celery:
    app = Celery(name)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(conf)
    app.autodiscover_tasks(["memory_app"])
    return app


@contextmanager
def current(app: Celery):
    """Tasks sent meanwhile go through `app`; then through the default app again."""
    app.set_current()
    app.set_default()
    try:
        yield app
    finally:
        default_app.set_current()
        default_app.set_default()


@contextmanager
def running_worker(app: Celery):
    with (
        current(app),
        start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=20),
    ):
        yield app

"""Deliveries through a real Celery worker over Redis (database 13)."""

import time
from datetime import timedelta

import pytest
import redis
from django.utils import timezone

from memory_app.models import DeliveryStatus, MemoryEvent, WebhookDelivery
from memory_app.webhooks.services import webhook_register, webhooks_dispatch
from memory_app.webhooks.signing import signature_valid
from memory_app.webhooks.tasks import dispatch_webhooks
from tests.integration.conftest import make_app, running_worker

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_URL = "redis://127.0.0.1:6379/13"


@pytest.fixture(scope="module")
def worker(django_db_blocker):
    redis.Redis.from_url(REDIS_URL).flushdb()
    app = make_app("memory-test-webhooks", broker_url=REDIS_URL)
    with django_db_blocker.unblock(), running_worker(app):
        yield app


def wait_for_status(status: str, timeout: float = 30) -> WebhookDelivery:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        delivery = WebhookDelivery.objects.first()
        if delivery is not None and delivery.status == status:
            return delivery
        time.sleep(0.1)
    raise AssertionError(f"no delivery reached {status}: {WebhookDelivery.objects.first()}")


def test_the_worker_retries_a_failing_endpoint_until_it_answers(
    worker, staff, owner, receiver, http_allowed, loopback_allowed, settings
):
    settings.MEMORY_WEBHOOK_RETRY_SECONDS = 0
    registered = webhook_register(user=staff, url=receiver.url, event_types=["memory.*"])
    receiver.answers.extend([500, 503])
    MemoryEvent.objects.create(type="memory.write.blocked", principal=owner)
    dispatch_webhooks.delay()
    delivery = wait_for_status(DeliveryStatus.DELIVERED)
    assert (delivery.attempts, delivery.response_status) == (3, 200)
    assert len(receiver.received) == 3
    assert all(
        signature_valid(registered.secret, r.headers["X-Memory-Signature"], r.body)
        for r in receiver.received
    )


def test_the_worker_gives_up_after_the_last_attempt(
    worker, staff, owner, receiver, http_allowed, loopback_allowed, settings
):
    settings.MEMORY_WEBHOOK_RETRY_SECONDS = 0
    settings.MEMORY_WEBHOOK_MAX_ATTEMPTS = 2
    webhook_register(user=staff, url=receiver.url, event_types=["*"])
    receiver.answers.extend([500, 500, 500])
    MemoryEvent.objects.create(type="memory.test", principal=owner)
    dispatch_webhooks.delay()
    delivery = wait_for_status(DeliveryStatus.FAILED)
    assert (delivery.attempts, delivery.error) == (2, "HTTP 500")


def test_the_dispatcher_sends_a_delivery_whose_task_was_never_queued(
    worker, staff, owner, receiver, http_allowed, loopback_allowed
):
    webhook_register(user=staff, url=receiver.url, event_types=["*"])
    MemoryEvent.objects.create(type="memory.test", principal=owner)
    webhooks_dispatch()  # committed, then the process stopped before queueing
    WebhookDelivery.objects.update(updated_at=timezone.now() - timedelta(minutes=5))
    dispatch_webhooks.delay()
    delivery = wait_for_status(DeliveryStatus.DELIVERED)
    assert (delivery.attempts, len(receiver.received)) == (1, 1)

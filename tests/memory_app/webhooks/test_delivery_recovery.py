"""Deliveries whose task was lost are found and sent again, once, and the
deliveries page says when each last changed."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memory_app.models import DeliveryStatus, MemoryEvent, WebhookDelivery
from memory_app.webhooks.services import (
    deliveries_overdue,
    delivery_attempt,
    delivery_give_up,
    webhook_register,
    webhook_set_active,
    webhooks_dispatch,
)

pytestmark = pytest.mark.django_db

LONG_AGO = datetime(2001, 1, 1, 12, tzinfo=UTC)


def one_delivery(staff, owner, url: str) -> WebhookDelivery:
    """A delivery created by the dispatcher, its task not (yet) run."""
    webhook_register(user=staff, url=url, event_types=["*"])
    MemoryEvent.objects.create(type="memory.test", principal=owner)
    [delivery_id] = webhooks_dispatch()
    return WebhookDelivery.objects.get(pk=delivery_id)


def age(seconds: float) -> None:
    """Let time pass for every delivery: it last changed `seconds` ago."""
    WebhookDelivery.objects.update(updated_at=timezone.now() - timedelta(seconds=seconds))


@pytest.fixture
def local_receiver(receiver, http_allowed, loopback_allowed, settings):
    settings.MEMORY_WEBHOOK_RETRY_SECONDS = 10
    settings.MEMORY_WEBHOOK_MAX_ATTEMPTS = 6
    return receiver


def test_a_delivery_never_queued_is_queued_again_by_a_later_dispatch(staff, owner, local_receiver):
    delivery = one_delivery(staff, owner, local_receiver.url)  # the broker refused its task
    assert deliveries_overdue() == []  # its task may still be on its way
    age(120)
    assert deliveries_overdue() == [(delivery.pk, 0)]
    assert deliveries_overdue() == []  # claimed: a second dispatcher does not queue it too
    assert delivery_attempt(delivery.pk, 0) is True
    assert len(local_receiver.received) == 1
    age(3600)
    assert deliveries_overdue() == []


def test_a_copy_of_a_delivery_message_sends_nothing(staff, owner, local_receiver):
    local_receiver.answers.append(500)
    delivery = one_delivery(staff, owner, local_receiver.url)
    assert delivery_attempt(delivery.pk, 0) is False
    assert delivery_attempt(delivery.pk, 0) is None  # the broker delivered it twice
    assert delivery_attempt(delivery.pk, 1) is True  # the retry
    assert delivery_attempt(delivery.pk, 1) is None
    assert len(local_receiver.received) == 2
    assert WebhookDelivery.objects.get().attempts == 2


def test_a_retry_whose_message_was_lost_is_queued_again_after_its_backoff(
    staff, owner, local_receiver
):
    local_receiver.answers.append(500)
    delivery = one_delivery(staff, owner, local_receiver.url)
    assert delivery_attempt(delivery.pk, 0) is False  # the retry is due in 10 s
    age(65)
    assert deliveries_overdue() == []
    age(75)
    assert deliveries_overdue() == [(delivery.pk, 1)]


def test_a_delivery_waiting_while_its_webhook_was_off_is_resumed_when_switched_on(
    staff, owner, local_receiver
):
    local_receiver.answers.append(500)
    delivery = one_delivery(staff, owner, local_receiver.url)
    assert delivery_attempt(delivery.pk, 0) is False
    webhook_set_active(user=staff, webhook=delivery.webhook, active=False)
    assert delivery_attempt(delivery.pk, 1) is None  # the retry finds it off
    age(3600)
    assert deliveries_overdue() == []
    webhook_set_active(user=staff, webhook=delivery.webhook, active=True)
    assert deliveries_overdue() == [(delivery.pk, 1)]
    assert delivery_attempt(delivery.pk, 1) is True
    delivered = WebhookDelivery.objects.get()
    assert (delivered.status, delivered.attempts) == (DeliveryStatus.DELIVERED, 2)


def test_a_delivery_cut_off_in_its_last_attempt_is_marked_failed(
    staff, owner, local_receiver, settings
):
    settings.MEMORY_WEBHOOK_MAX_ATTEMPTS = 1
    delivery = one_delivery(staff, owner, local_receiver.url)
    WebhookDelivery.objects.update(attempts=1)  # its worker died mid-attempt
    age(120)
    assert deliveries_overdue() == []
    assert delivery_attempt(delivery.pk) is None
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED
    assert local_receiver.received == []


def test_a_finished_delivery_is_left_as_it_is_however_many_attempts_it_took(
    staff, owner, local_receiver, settings
):
    settings.MEMORY_WEBHOOK_MAX_ATTEMPTS = 1
    delivered = one_delivery(staff, owner, local_receiver.url)
    assert delivery_attempt(delivered.pk, 0) is True  # its one attempt succeeded
    local_receiver.answers.append(500)
    MemoryEvent.objects.create(type="memory.test", principal=owner)
    [failed_id] = webhooks_dispatch()
    assert delivery_attempt(failed_id, 0) is False
    delivery_give_up(failed_id)
    age(3600)
    before = {d.pk: (d.status, d.updated_at) for d in WebhookDelivery.objects.all()}
    assert deliveries_overdue() == []
    after = {d.pk: (d.status, d.updated_at) for d in WebhookDelivery.objects.all()}
    assert after == before
    assert after[delivered.pk][0] == DeliveryStatus.DELIVERED
    assert after[failed_id][0] == DeliveryStatus.FAILED


def test_the_when_column_shows_the_last_attempt(client, staff, owner, local_receiver):
    local_receiver.answers.append(500)
    delivery = one_delivery(staff, owner, local_receiver.url)
    client.force_login(staff)
    for step in (lambda: delivery_attempt(delivery.pk, 0), lambda: delivery_give_up(delivery.pk)):
        WebhookDelivery.objects.update(updated_at=LONG_AGO)
        assert "2001-01-01" in client.get("/webhooks/").content.decode()
        step()
        assert "2001-01-01" not in client.get("/webhooks/").content.decode()
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED

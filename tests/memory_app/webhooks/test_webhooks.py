"""Registering, dispatching from the outbox, signing and delivering, with a local receiver."""

import json
import time

import pytest

from memory_app.errors import InvalidInput, PermissionDenied
from memory_app.models import DeliveryStatus, MemoryEvent, Webhook, WebhookDelivery
from memory_app.webhooks import services, tasks
from memory_app.webhooks.services import delivery_attempt, webhook_register, webhooks_dispatch
from memory_app.webhooks.signing import signature, signature_valid
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


def test_only_staff_register_and_only_https_by_default(staff, owner):
    with pytest.raises(PermissionDenied):
        webhook_register(user=owner, url="https://hooks.example.com/x", event_types=["*"])
    with pytest.raises(InvalidInput):
        webhook_register(user=staff, url="http://hooks.example.com/x", event_types=["*"])
    with pytest.raises(InvalidInput):
        webhook_register(user=staff, url="https://hooks.example.com/x", event_types=["Bad Type"])
    registered = webhook_register(
        user=staff, url="https://hooks.example.com/x", event_types=["memory.*", "*"]
    )
    assert registered.webhook.event_types == ["*", "memory.*"]
    assert len(registered.secret) == 64


def test_the_signature_binds_secret_timestamp_and_body():
    header = signature("s3cret", b'{"a":1}', timestamp=1_700_000_000)
    assert signature_valid("s3cret", header, b'{"a":1}', now=1_700_000_100)
    assert not signature_valid("other", header, b'{"a":1}', now=1_700_000_100)
    assert not signature_valid("s3cret", header, b'{"a":2}', now=1_700_000_100)
    assert not signature_valid("s3cret", header, b'{"a":1}', now=1_700_001_000)  # a replay
    assert not signature_valid("s3cret", "v1=abc", b'{"a":1}')


def test_matching_new_events_are_delivered_signed(
    staff, owner, receiver, http_allowed, loopback_allowed
):
    MemoryEvent.objects.create(type="memory.write.blocked", principal=owner)  # before: not sent
    registered = webhook_register(
        user=staff, url=receiver.url, event_types=["memory.write.blocked", "memory.promotion.*"]
    )
    blocked = MemoryEvent.objects.create(
        type="memory.write.blocked", principal=owner, payload={"findings": 1}
    )
    MemoryEvent.objects.create(type="memory.context.loaded", principal=owner)
    proposed = MemoryEvent.objects.create(type="memory.promotion.proposed", principal=owner)
    created = webhooks_dispatch()
    assert webhooks_dispatch() == []  # the cursor moved: nothing twice
    for delivery_id in created:
        assert delivery_attempt(delivery_id) is True
    bodies = [json.loads(r.body) for r in receiver.received]
    assert [b["event"]["id"] for b in bodies] == [blocked.id, proposed.id]
    assert bodies[0]["event"]["payload"] == {"findings": 1}
    first = receiver.received[0]
    assert first.headers["X-Memory-Event"] == "memory.write.blocked"
    assert signature_valid(registered.secret, first.headers["X-Memory-Signature"], first.body)
    assert set(WebhookDelivery.objects.values_list("status", "attempts", "response_status")) == {
        (DeliveryStatus.DELIVERED, 1, 200)
    }


def test_retries_back_off_exponentially(settings):
    settings.MEMORY_WEBHOOK_RETRY_SECONDS = 10
    assert [services.retry_delay(n) for n in range(4)] == [10, 20, 40, 80]


def test_an_unreachable_endpoint_ends_failed_after_the_last_attempt(
    staff, owner, http_allowed, loopback_allowed, settings
):
    settings.MEMORY_WEBHOOK_MAX_ATTEMPTS = 1
    webhook_register(user=staff, url="http://127.0.0.1:9/hook", event_types=["*"])
    MemoryEvent.objects.create(type="memory.test", principal=owner)
    [delivery_id] = webhooks_dispatch()
    assert tasks.deliver_webhook.run(delivery_id) is False
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.FAILED, 1)
    assert delivery.error == "ConnectError"


def test_writes_never_wait_for_a_webhook(staff, tools, http_allowed, loopback_allowed):
    # The scanner compiles its patterns on a process's first write (seconds on
    # a slow machine): a write before the webhook exists leaves only its share.
    tools.ok("memory_remember", remember_body(), status=201)
    webhook_register(user=staff, url="http://127.0.0.1:9/hook", event_types=["*"])
    started = time.perf_counter()
    tools.ok(
        "memory_remember",
        remember_body(title="Redis eviction storm", content="Redis evicted hot keys at noon."),
        status=201,
    )
    assert time.perf_counter() - started < 2
    assert not WebhookDelivery.objects.exists()  # only the worker's dispatcher sends


def test_a_switched_off_webhook_gets_nothing(
    staff, owner, receiver, http_allowed, loopback_allowed
):
    registered = webhook_register(user=staff, url=receiver.url, event_types=["*"])
    MemoryEvent.objects.create(type="memory.test", principal=owner)
    [delivery_id] = webhooks_dispatch()
    Webhook.objects.filter(pk=registered.webhook.pk).update(active=False)
    assert delivery_attempt(delivery_id) is None
    assert receiver.received == []


def test_the_page_registers_shows_the_secret_once_and_lists_deliveries(
    client, staff, owner, http_allowed
):
    client.force_login(staff)
    response = client.post(
        "/webhooks/",
        {"url": "https://hooks.example.com/in", "event_types": "memory.*, *"},
        follow=True,
    )
    assert response.redirect_chain == [("/webhooks/", 302)]
    webhook = Webhook.objects.get()
    assert webhook.secret in response.content.decode()
    MemoryEvent.objects.create(type="memory.<b>", principal=owner)
    webhooks_dispatch()
    page = client.get("/webhooks/").content.decode()
    assert webhook.secret not in page
    assert "memory.&lt;b&gt;" in page and "pending" in page
    # A refused delivery's answer is said once.
    WebhookDelivery.objects.update(response_status=500, error="HTTP 500", status="retrying")
    assert "<td>HTTP 500</td>" in client.get("/webhooks/").content.decode()
    client.post(f"/webhooks/{webhook.pk}/toggle")
    assert Webhook.objects.get().active is False


def test_the_page_is_for_staff_only(client, owner):
    client.force_login(owner)
    assert client.get("/webhooks/").status_code == 403
    assert (
        client.post("/webhooks/", {"url": "https://x.example", "event_types": "*"}).status_code
        == 403
    )
    assert not Webhook.objects.exists()


def test_the_page_queries_stay_flat_with_many_deliveries(
    client, staff, owner, http_allowed, django_assert_max_num_queries
):
    for n in range(3):
        webhook_register(user=staff, url=f"https://hooks.example.com/{n}", event_types=["*"])
    for _ in range(40):
        MemoryEvent.objects.create(type="memory.test", principal=owner)
    webhooks_dispatch()
    client.force_login(staff)
    with django_assert_max_num_queries(8):
        assert client.get("/webhooks/").status_code == 200

"""Registering webhooks, queueing deliveries from the outbox, and one delivery attempt."""

import json
import re
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max

from memory_app.errors import InvalidInput, PermissionDenied
from memory_app.models import DeliveryStatus, MemoryEvent, Webhook, WebhookDelivery
from memory_app.permissions import can_administer
from memory_app.webhooks.signing import HEADER, signature

ALL_EVENTS = "*"
_EVENT_TYPE = re.compile(r"^(\*|[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?)$")
DISPATCH_BATCH = 500
TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class Registered:
    webhook: Webhook
    secret: str  # shown once: only its holder can check signatures


def _check_url(url: str) -> str:
    parts = urlsplit(url.strip())
    allowed = {"https", "http"} if settings.MEMORY_WEBHOOK_ALLOW_HTTP else {"https"}
    if parts.scheme not in allowed or not parts.hostname:
        raise InvalidInput("The URL must be https://host/...", fields={"url": ["Use https."]})
    return url.strip()


def _check_types(event_types: list[str]) -> list[str]:
    cleaned = sorted({t.strip() for t in event_types if t.strip()})
    if not cleaned or not all(_EVENT_TYPE.match(t) for t in cleaned):
        raise InvalidInput(
            "Name event types like memory.write.blocked, memory.* or *.",
            fields={"event_types": ["Event types like memory.write.blocked, memory.* or *."]},
        )
    return cleaned


@transaction.atomic
def webhook_register(*, user: AbstractBaseUser, url: str, event_types: list[str]) -> Registered:
    """Staff only. The webhook receives matching events from now on (not the backlog)."""
    if not can_administer(user):
        raise PermissionDenied("Webhooks are managed by staff.")
    secret = secrets.token_hex(32)
    newest = MemoryEvent.objects.aggregate(newest=Max("id"))["newest"] or 0
    webhook = Webhook.objects.create(
        url=_check_url(url),
        event_types=_check_types(event_types),
        secret=secret,
        cursor=newest,
        created_by=user,
    )
    return Registered(webhook, secret)


def webhook_set_active(*, user: AbstractBaseUser, webhook: Webhook, active: bool) -> None:
    if not can_administer(user):
        raise PermissionDenied("Webhooks are managed by staff.")
    Webhook.objects.filter(pk=webhook.pk).update(active=active)


def _matches(event_type: str, patterns: list[str]) -> bool:
    return any(
        p in (ALL_EVENTS, event_type) or (p.endswith(".*") and event_type.startswith(p[:-1]))
        for p in patterns
    )


def webhooks_dispatch() -> list[int]:
    """Queue a delivery for each new matching event of each active webhook;
    returns the new delivery ids (the caller sends them). Safe to run twice
    at once: a webhook row is locked while its cursor moves."""
    created: list[int] = []
    for webhook_id in Webhook.objects.filter(active=True).values_list("id", flat=True):
        with transaction.atomic():
            webhook = (
                Webhook.objects.select_for_update(skip_locked=True)
                .filter(pk=webhook_id, active=True)
                .first()
            )
            if webhook is None:
                continue
            events = list(
                MemoryEvent.objects.filter(id__gt=webhook.cursor)
                .order_by("id")
                .values_list("id", "type")[:DISPATCH_BATCH]
            )
            if not events:
                continue
            deliveries = WebhookDelivery.objects.bulk_create(
                [
                    WebhookDelivery(webhook=webhook, event_id=event_id)
                    for event_id, event_type in events
                    if _matches(event_type, webhook.event_types)
                ]
            )
            Webhook.objects.filter(pk=webhook.pk).update(cursor=events[-1][0])
            created.extend(d.pk for d in deliveries)
    return created


def _body(event: MemoryEvent, delivery: WebhookDelivery) -> bytes:
    return json.dumps(
        {
            "delivery_id": delivery.pk,
            "event": {
                "id": event.id,
                "type": event.type,
                "created_at": event.created_at.isoformat(),
                "payload": event.payload,
            },
        }
    ).encode()


def delivery_attempt(delivery_id: int) -> bool | None:
    """POST the event once. True: delivered (2xx). False: failed, worth a
    retry. None: nothing to do (gone, done, or its webhook switched off)."""
    delivery = (
        WebhookDelivery.objects.select_related("webhook", "event").filter(pk=delivery_id).first()
    )
    if delivery is None or delivery.status in (DeliveryStatus.DELIVERED, DeliveryStatus.FAILED):
        return None
    if not delivery.webhook.active:
        return None
    body = _body(delivery.event, delivery)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "agent-memory-webhooks/1",
        "X-Memory-Event": delivery.event.type,
        "X-Memory-Delivery": str(delivery.pk),
        HEADER: signature(delivery.webhook.secret, body),
    }
    code, error = None, ""
    try:
        response = httpx.post(
            delivery.webhook.url, content=body, headers=headers, timeout=TIMEOUT_SECONDS
        )
        code = response.status_code
        if not 200 <= code < 300:
            error = f"HTTP {code}"
    except httpx.HTTPError as failure:
        error = type(failure).__name__
    delivered = not error
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=delivery.attempts + 1,
        response_status=code,
        error=error,
        status=DeliveryStatus.DELIVERED if delivered else DeliveryStatus.RETRYING,
    )
    return delivered


def delivery_give_up(delivery_id: int) -> None:
    WebhookDelivery.objects.filter(pk=delivery_id).exclude(status=DeliveryStatus.DELIVERED).update(
        status=DeliveryStatus.FAILED
    )

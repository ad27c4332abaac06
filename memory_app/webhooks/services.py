"""Registering webhooks, queueing deliveries from the outbox, and one delivery attempt."""

import difflib
import ipaddress
import json
import re
import secrets
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

from memory_app.errors import InvalidInput, PermissionDenied
from memory_app.models import DeliveryStatus, MemoryEvent, Webhook, WebhookDelivery
from memory_app.permissions import can_administer
from memory_app.services.events import EVENT_TYPES
from memory_app.webhooks.signing import HEADER, signature

ALL_EVENTS = "*"
_EVENT_TYPE = re.compile(r"^(\*|[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?)$")
PORT_RANGE = "A port is a number from 1 to 65535."
DISPATCH_BATCH = 500
TIMEOUT_SECONDS = 5.0
ERROR_LENGTH = WebhookDelivery._meta.get_field("error").max_length
WAITING = (DeliveryStatus.PENDING, DeliveryStatus.RETRYING)
# How late a delivery's next attempt may be before its task counts as lost.
OVERDUE_AFTER = timedelta(seconds=60)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Registered:
    webhook: Webhook
    secret: str  # shown once: only its holder can check signatures


@dataclass(frozen=True)
class Retry:
    attempts: int  # made so far; the retry's message claims the next one
    countdown: int


class _Unresolved(InvalidInput):
    """The host has no address: refused at registration, retried at delivery
    (a name may come back)."""


def resolve_host(host: str) -> list[IPAddress]:
    """Every address the system resolver gives for `host`; socket.gaierror
    when it gives none."""
    found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in found))


def _refused_kind(address: IPAddress) -> str | None:
    """What keeps webhooks from `address`, or None when they may go there.
    Only public addresses are open by default: anything else would let staff
    make the worker probe services inside the network (cloud metadata at
    169.254.169.254 included). MEMORY_WEBHOOK_ALLOWED_NETWORKS opens more,
    and only what it lists: admitting 10.0.0.0/8 leaves loopback shut."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    if any(address in network for network in settings.MEMORY_WEBHOOK_ALLOWED_NETWORKS):
        return None
    for refused, kind in (
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_unspecified, "the unspecified address"),
        (address.is_multicast, "a multicast address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
        (not address.is_global, "not a public address"),
    ):
        if refused:
            return kind
    return None


def _checked_addresses(host: str) -> list[IPAddress]:
    """The addresses `host` stands for, every one of them admitted: a name
    with one internal address among public ones is refused too, since the
    connection could go to any of them."""
    try:
        addresses, literal = [ipaddress.ip_address(host)], True
    except ValueError:
        try:
            addresses, literal = resolve_host(host), False
        except socket.gaierror:
            message = f"{host} does not resolve."
            raise _Unresolved(message, fields={"url": [message]}) from None
    for address in addresses:
        kind = _refused_kind(address)
        if kind is not None:
            where = f"{host} is {kind}" if literal else f"{host} resolves to {address}, {kind}"
            message = f"{where}: webhooks are not sent there."
            raise InvalidInput(message, fields={"url": [message]})
    return addresses


def _check_url(url: str) -> str:
    """The URL, stripped, once its host passes the address check. It is read
    by the same parser the delivery uses: two parsers can disagree on the
    host of a crafted URL, and the checked host must be the one connected to."""
    url = url.strip()
    allowed = {"https", "http"} if settings.MEMORY_WEBHOOK_ALLOW_HTTP else {"https"}
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL as error:
        if str(error).startswith("Invalid port"):  # "host:80a"
            message = f"That is not a port. {PORT_RANGE}"
            raise InvalidInput(message, fields={"url": [message]}) from None
        target = None
    if target is not None and target.port is not None and not 0 < target.port < 65536:
        message = f"There is no port {target.port}. {PORT_RANGE}"
        raise InvalidInput(message, fields={"url": [message]})
    if target is None or target.scheme not in allowed or not target.raw_host:
        raise InvalidInput("The URL must be https://host/...", fields={"url": ["Use https."]})
    if target.userinfo:
        message = (
            "Leave the user name and password out of the URL: "
            "receivers tell our deliveries by their X-Memory-Signature."
        )
        raise InvalidInput(message, fields={"url": [message]})
    _checked_addresses(target.raw_host.decode("ascii"))
    return url


def _check_types(event_types: list[str]) -> list[str]:
    """The patterns, each naming a known type or matching one: a typo
    (memory.promotion.aproved) would otherwise subscribe to nothing, silently."""
    cleaned = sorted({t.strip() for t in event_types if t.strip()})
    if not cleaned or not all(_EVENT_TYPE.match(t) for t in cleaned):
        raise InvalidInput(
            "Name event types like memory.write.blocked, memory.* or *.",
            fields={"event_types": ["Event types like memory.write.blocked, memory.* or *."]},
        )
    unknown = [t for t in cleaned if not any(_matches(known, [t]) for known in EVENT_TYPES)]
    if unknown:
        messages = [_unknown_type(t) for t in unknown]
        raise InvalidInput(" ".join(messages), fields={"event_types": messages})
    return cleaned


def _unknown_type(pattern: str) -> str:
    what = "matches no event type" if pattern.endswith(".*") else "is not an event type"
    close = difflib.get_close_matches(pattern, EVENT_TYPES, n=1)
    hint = f" Did you mean {close[0]}?" if close else ""
    return f"{pattern} {what}.{hint}"


def webhook_register(*, user: AbstractBaseUser, url: str, event_types: list[str]) -> Registered:
    """Staff only. The webhook receives matching events from now on (not the
    backlog). Refused: a URL registered already (switched off or not), and a
    host that does not resolve or has an address the worker may not send to
    (see _refused_kind); the name is resolved here, outside the transaction."""
    if not can_administer(user):
        raise PermissionDenied("Webhooks are managed by staff.")
    url = _check_url(url)
    event_types = _check_types(event_types)
    secret = secrets.token_hex(32)
    with transaction.atomic():
        with connection.cursor() as cursor:
            # Two submissions of one form at once must not both pass the check below.
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"webhook:{url}"])
        if Webhook.objects.filter(url=url).exists():
            message = "This URL is already registered; switch that webhook on or off instead."
            raise InvalidInput(message, fields={"url": [message]})
        newest = MemoryEvent.objects.aggregate(newest=Max("id"))["newest"] or 0
        webhook = Webhook.objects.create(
            url=url, event_types=event_types, secret=secret, cursor=newest, created_by=user
        )
    return Registered(webhook, secret)


def webhook_set_active(*, user: AbstractBaseUser, webhook: Webhook, active: bool) -> bool:
    """Staff only. Switch the webhook on or off; True if that changed its
    state (the same request twice, a double click, changes it once). Off,
    its deliveries wait; switched on, the periodic dispatch resumes them
    (deliveries_overdue) along with the events that came meanwhile."""
    if not can_administer(user):
        raise PermissionDenied("Webhooks are managed by staff.")
    return Webhook.objects.filter(pk=webhook.pk).exclude(active=active).update(active=active) > 0


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


def _post(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """POST to an address checked just now. DNS may have changed since
    registration (rebinding), so the name is resolved and checked again, and
    the connection goes to that checked address, never to a second lookup's
    answer; the name still travels as Host, SNI and the name the certificate
    must match. Redirects are not followed (each hop would be an unchecked
    destination; a 3xx counts as a failed attempt), and proxies named in the
    environment are not used, since a proxy would resolve the name itself."""
    target = httpx.URL(url)
    host = target.raw_host.decode("ascii")
    address = _checked_addresses(host)[0]
    with httpx.Client(trust_env=False, follow_redirects=False, timeout=TIMEOUT_SECONDS) as client:
        return client.post(
            target.copy_with(host=str(address)),
            content=body,
            headers={**headers, "Host": target.netloc.decode("ascii")},
            extensions={"sni_hostname": host},
        )


def _claim(delivery: WebhookDelivery, attempts: int | None) -> bool:
    """Take the delivery's next attempt; True for one caller only. A message
    carries the number of attempts made when it was queued, so a copy of it
    (the broker delivering it again, the overdue sweep queueing it again)
    finds that attempt taken and sends nothing. No delivery gets more than
    MEMORY_WEBHOOK_MAX_ATTEMPTS attempts."""
    made = delivery.attempts if attempts is None else attempts
    if made >= settings.MEMORY_WEBHOOK_MAX_ATTEMPTS:
        return False
    claimed = WebhookDelivery.objects.filter(pk=delivery.pk, status__in=WAITING, attempts=made)
    return claimed.update(attempts=made + 1, updated_at=timezone.now()) == 1


def _record(delivery: WebhookDelivery, status: str, code: int | None, error: str) -> None:
    """The outcome of the attempt just claimed. QuerySet.update() skips
    auto_now, so the time of the change is set here."""
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        response_status=code,
        error=error[:ERROR_LENGTH],
        status=status,
        updated_at=timezone.now(),
    )


def delivery_attempt(delivery_id: int, attempts: int | None = None) -> bool | None:
    """POST the event once, as attempt number `attempts` + 1 (the next one
    when None). True: delivered (2xx). False: failed, worth a retry. None:
    nothing (more) to do: gone, done, its webhook switched off (the overdue
    sweep resumes it once switched on), that attempt made already, or its
    destination refused now (recorded as failed, nothing sent)."""
    delivery = (
        WebhookDelivery.objects.select_related("webhook", "event").filter(pk=delivery_id).first()
    )
    if delivery is None or delivery.status not in WAITING or not delivery.webhook.active:
        return None
    if not _claim(delivery, attempts):
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
        response = _post(delivery.webhook.url, body, headers)
        code = response.status_code
        if not 200 <= code < 300:
            error = f"HTTP {code}"
    except _Unresolved as failure:
        error = failure.detail
    except InvalidInput as refused:
        _record(delivery, DeliveryStatus.FAILED, None, f"Refused: {refused.detail}")
        return None
    except httpx.HTTPError as failure:
        error = type(failure).__name__
    delivered = not error
    _record(
        delivery, DeliveryStatus.DELIVERED if delivered else DeliveryStatus.RETRYING, code, error
    )
    return delivered


def retry_delay(retries: int) -> int:
    """Seconds before the next attempt: 10, 20, 40, ... by default."""
    return settings.MEMORY_WEBHOOK_RETRY_SECONDS * 2**retries


def delivery_retry(delivery_id: int) -> Retry | None:
    """When a failed delivery is tried again; None when it is not waiting
    for a retry, or when that was its last attempt (it is marked failed)."""
    delivery = (
        WebhookDelivery.objects.filter(pk=delivery_id, status=DeliveryStatus.RETRYING)
        .only("attempts")
        .first()
    )
    if delivery is None:
        return None
    if delivery.attempts >= settings.MEMORY_WEBHOOK_MAX_ATTEMPTS:
        delivery_give_up(delivery_id)
        return None
    return Retry(delivery.attempts, retry_delay(delivery.attempts - 1))


def delivery_give_up(delivery_id: int) -> None:
    WebhookDelivery.objects.filter(pk=delivery_id, status__in=WAITING).update(
        status=DeliveryStatus.FAILED, updated_at=timezone.now()
    )


def _overdue(now: datetime) -> Q:
    """Waiting past the time its next attempt was due, by OVERDUE_AFTER:
    queued (or cut off mid-attempt) that long ago, or failed longer ago than
    its backoff. Those out of attempts count once that long has passed.
    Only waiting deliveries are read with it (deliveries_overdue): a
    delivered or failed one is done, whatever its attempts."""
    late = now - OVERDUE_AFTER
    limit = settings.MEMORY_WEBHOOK_MAX_ATTEMPTS
    overdue = Q(updated_at__lt=late) & (Q(status=DeliveryStatus.PENDING) | Q(attempts__gte=limit))
    for made in range(1, limit):
        backoff = timedelta(seconds=retry_delay(made - 1))
        overdue |= Q(status=DeliveryStatus.RETRYING, attempts=made, updated_at__lt=late - backoff)
    return overdue


def deliveries_overdue() -> list[tuple[int, int]]:
    """The waiting deliveries of active webhooks whose task was lost: never
    queued (the broker refused it, or the process stopped between the
    commit and the queueing), its worker died, or it found its webhook
    switched off (switched on since). Returns (id, attempts made) of each to
    queue again, and marks failed those with no attempt left.

    Each row is claimed by moving its updated_at, under a lock other sweeps
    skip, so two sweeps at once queue it once; and a late copy of the lost
    message finds its attempt taken (see _claim)."""
    now = timezone.now()
    with transaction.atomic():
        overdue = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(_overdue(now), status__in=WAITING, webhook__active=True)
            .order_by("updated_at")
            .values_list("id", "attempts")[:DISPATCH_BATCH]
        )
        limit = settings.MEMORY_WEBHOOK_MAX_ATTEMPTS
        spent = [pk for pk, made in overdue if made >= limit]
        resent = [(pk, made) for pk, made in overdue if made < limit]
        WebhookDelivery.objects.filter(pk__in=spent).update(
            status=DeliveryStatus.FAILED, updated_at=now
        )
        WebhookDelivery.objects.filter(pk__in=[pk for pk, _ in resent]).update(updated_at=now)
    return resent

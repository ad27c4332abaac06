"""Where webhooks may be sent: public addresses, plus the networks a
deployment admits; checked at registration and again before each delivery."""

import ipaddress

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings import env_networks
from memory_app.errors import InvalidInput
from memory_app.models import DeliveryStatus, MemoryEvent, Webhook, WebhookDelivery
from memory_app.webhooks import tasks
from memory_app.webhooks.services import (
    delivery_attempt,
    resolve_host,
    webhook_register,
    webhooks_dispatch,
)
from tests.memory_app.webhooks.conftest import PUBLIC_ADDRESS

pytestmark = pytest.mark.django_db


def refusal(staff, url: str) -> str:
    with pytest.raises(InvalidInput) as refused:
        webhook_register(user=staff, url=url, event_types=["*"])
    assert not Webhook.objects.exists()
    [message] = refused.value.extra["fields"]["url"]
    return message


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://127.0.0.1/hook", "127.0.0.1 is a loopback address"),
        ("https://[::1]/hook", "::1 is a loopback address"),
        ("https://[::ffff:127.0.0.1]/hook", "is a loopback address"),
        ("https://169.254.169.254/latest", "169.254.169.254 is a link-local address"),
        ("https://[fe80::1]/hook", "fe80::1 is a link-local address"),
        ("https://0.0.0.0/hook", "0.0.0.0 is the unspecified address"),
        ("https://[::]/hook", ":: is the unspecified address"),
        ("https://224.0.0.1/hook", "224.0.0.1 is a multicast address"),
        ("https://[ff02::1]/hook", "ff02::1 is a multicast address"),
        ("https://240.0.0.1/hook", "240.0.0.1 is a reserved address"),
        ("https://10.1.2.3/hook", "10.1.2.3 is a private address"),
        ("https://192.168.1.10/hook", "192.168.1.10 is a private address"),
        ("https://[fd00::1]/hook", "fd00::1 is a private address"),
        ("https://100.64.0.1/hook", "100.64.0.1 is not a public address"),
    ],
)
def test_it_refuses_to_register_an_address_that_is_not_public(staff, url, why):
    assert why in refusal(staff, url)


def test_it_refuses_a_name_that_resolves_to_loopback(staff, dns):
    dns.names["internal.example.com"] = ["127.0.0.1"]
    assert refusal(staff, "https://internal.example.com/hook") == (
        "internal.example.com resolves to 127.0.0.1, a loopback address: "
        "webhooks are not sent there."
    )


def test_it_refuses_a_name_when_any_of_its_addresses_is_refused(staff, dns):
    dns.names["mixed.example.com"] = [PUBLIC_ADDRESS, "169.254.169.254"]
    assert "169.254.169.254, a link-local address" in refusal(staff, "https://mixed.example.com/")


def test_it_refuses_a_name_that_does_not_resolve(staff):
    assert refusal(staff, "https://nowhere.example.com/hook") == (
        "nowhere.example.com does not resolve."
    )


def test_the_system_resolver_answers_for_localhost():
    addresses = resolve_host("localhost")
    assert addresses and all(address.is_loopback for address in addresses)


def test_the_allowed_networks_admit_private_addresses_but_nothing_else(staff, settings, dns):
    settings.MEMORY_WEBHOOK_ALLOWED_NETWORKS = [
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("fd00::/8"),
    ]
    dns.names["intranet.example.com"] = ["10.20.30.40"]
    webhook_register(user=staff, url="https://10.1.2.3/hook", event_types=["*"])
    webhook_register(user=staff, url="https://[fd00::1]/hook", event_types=["*"])
    webhook_register(user=staff, url="https://intranet.example.com/hook", event_types=["*"])
    assert Webhook.objects.count() == 3
    for url in ("https://192.168.1.10/hook", "https://127.0.0.1/hook", "https://169.254.169.254/"):
        with pytest.raises(InvalidInput):
            webhook_register(user=staff, url=url, event_types=["*"])
    assert Webhook.objects.count() == 3


def test_loopback_is_admitted_only_when_listed_itself(staff, settings):
    settings.MEMORY_WEBHOOK_ALLOWED_NETWORKS = [ipaddress.ip_network("127.0.0.0/8")]
    webhook_register(user=staff, url="https://127.0.0.1/hook", event_types=["*"])
    assert Webhook.objects.count() == 1


def test_the_allowed_networks_setting_reads_cidrs_and_fails_loudly(monkeypatch):
    monkeypatch.setenv("MEMORY_WEBHOOK_ALLOWED_NETWORKS", " 10.0.0.0/8, fc00::/7,192.168.1.5 ")
    assert env_networks("MEMORY_WEBHOOK_ALLOWED_NETWORKS") == [
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("fc00::/7"),
        ipaddress.ip_network("192.168.1.5/32"),
    ]
    monkeypatch.setenv("MEMORY_WEBHOOK_ALLOWED_NETWORKS", "")
    assert env_networks("MEMORY_WEBHOOK_ALLOWED_NETWORKS") == []
    for bad in ("10.0.0.1/8", "intranet", "10.0.0.0/33"):
        monkeypatch.setenv("MEMORY_WEBHOOK_ALLOWED_NETWORKS", bad)
        with pytest.raises(ImproperlyConfigured, match="MEMORY_WEBHOOK_ALLOWED_NETWORKS"):
            env_networks("MEMORY_WEBHOOK_ALLOWED_NETWORKS")


def test_the_same_url_is_not_registered_twice(staff):
    first = webhook_register(user=staff, url="https://hooks.example.com/in", event_types=["*"])
    Webhook.objects.filter(pk=first.webhook.pk).update(active=False)
    with pytest.raises(InvalidInput) as refused:
        webhook_register(user=staff, url=" https://hooks.example.com/in ", event_types=["*"])
    assert refused.value.extra["fields"]["url"] == [
        "This URL is already registered; switch that webhook on or off instead."
    ]
    assert Webhook.objects.count() == 1


def one_delivery(owner) -> int:
    MemoryEvent.objects.create(type="memory.test", principal=owner)
    [delivery_id] = webhooks_dispatch()
    return delivery_id


def test_a_name_that_now_resolves_to_a_refused_address_gets_nothing(
    staff, owner, receiver, http_allowed, dns
):
    port = receiver.url.split(":")[2].split("/")[0]
    dns.names["rebind.example.com"] = [PUBLIC_ADDRESS]
    webhook_register(user=staff, url=f"http://rebind.example.com:{port}/hook", event_types=["*"])
    delivery_id = one_delivery(owner)
    dns.names["rebind.example.com"] = ["127.0.0.1"]  # where the receiver listens
    assert tasks.deliver_webhook.run(delivery_id) is None  # no retry either
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_status) == (
        DeliveryStatus.FAILED,
        1,
        None,
    )
    assert delivery.error == (
        "Refused: rebind.example.com resolves to 127.0.0.1, a loopback address: "
        "webhooks are not sent there."
    )
    assert receiver.received == []


def test_a_literal_address_refused_since_registration_gets_nothing(
    staff, owner, receiver, http_allowed, loopback_allowed, settings
):
    webhook_register(user=staff, url=receiver.url, event_types=["*"])
    delivery_id = one_delivery(owner)
    settings.MEMORY_WEBHOOK_ALLOWED_NETWORKS = []
    assert delivery_attempt(delivery_id) is None
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.error == (
        "Refused: 127.0.0.1 is a loopback address: webhooks are not sent there."
    )
    assert receiver.received == []


def test_a_name_that_stops_resolving_is_retried_later(staff, owner, http_allowed, dns):
    dns.names["flaky.example.com"] = [PUBLIC_ADDRESS]
    webhook_register(user=staff, url="http://flaky.example.com/hook", event_types=["*"])
    delivery_id = one_delivery(owner)
    del dns.names["flaky.example.com"]
    assert delivery_attempt(delivery_id) is False
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.error) == (
        DeliveryStatus.RETRYING,
        "flaky.example.com does not resolve.",
    )


def test_the_delivery_goes_to_the_address_that_was_checked(
    staff, owner, receiver, http_allowed, loopback_allowed, dns
):
    port = receiver.url.split(":")[2].split("/")[0]
    # Real DNS sends this name elsewhere (or nowhere, offline): the receiver
    # is reached only through the address the check resolved.
    dns.names["hooks.example.com"] = ["127.0.0.1"]
    webhook_register(user=staff, url=f"http://hooks.example.com:{port}/hook", event_types=["*"])
    assert delivery_attempt(one_delivery(owner)) is True
    [received] = receiver.received
    assert received.headers["Host"] == f"hooks.example.com:{port}"


def test_a_redirect_from_the_receiver_is_not_followed(
    staff, owner, receiver, second_receiver, http_allowed, loopback_allowed
):
    receiver.location = second_receiver.url
    receiver.answers.append(307)
    webhook_register(user=staff, url=receiver.url, event_types=["*"])
    assert delivery_attempt(one_delivery(owner)) is False
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.response_status, delivery.error) == (
        DeliveryStatus.RETRYING,
        307,
        "HTTP 307",
    )
    assert len(receiver.received) == 1
    assert second_receiver.received == []

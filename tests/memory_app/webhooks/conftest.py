import ipaddress
import socket

import pytest

from memory_app.webhooks import services
from tests.memory_app.api.conftest import agent, caller_for, tools  # noqa: F401 (fixtures)
from tests.memory_app.webhooks.receiver import Receiver

PUBLIC_ADDRESS = "93.184.215.14"


class FakeDNS:
    """The names a test's webhooks use, answering as public DNS would; a
    test changes `names` to move a name elsewhere (DNS rebinding)."""

    def __init__(self) -> None:
        self.names: dict[str, list[str]] = {"hooks.example.com": [PUBLIC_ADDRESS]}

    def __call__(self, host: str) -> list:
        if host not in self.names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [ipaddress.ip_address(address) for address in self.names[host]]


@pytest.fixture(autouse=True)
def dns(monkeypatch) -> FakeDNS:
    """Registration and delivery never ask the real DNS in tests."""
    fake = FakeDNS()
    monkeypatch.setattr(services, "resolve_host", fake)
    return fake


def _serve():
    receiver = Receiver()
    server = receiver.serve()
    return receiver, server


@pytest.fixture
def receiver():
    receiver, server = _serve()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def second_receiver():
    receiver, server = _serve()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def http_allowed(settings):
    """The local receiver speaks plain HTTP; production accepts only HTTPS."""
    settings.MEMORY_WEBHOOK_ALLOW_HTTP = True


@pytest.fixture
def loopback_allowed(settings):
    """The local receiver listens on loopback, which a deployment must admit
    explicitly (MEMORY_WEBHOOK_ALLOWED_NETWORKS)."""
    settings.MEMORY_WEBHOOK_ALLOWED_NETWORKS = [ipaddress.ip_network("127.0.0.1/32")]

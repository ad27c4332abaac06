"""Whose address a login lockout counts, and what a success clears."""

import pytest

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def _login(client, password, username, address="10.0.0.1", forwarded=None):
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    return client.post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=address,
        headers=headers,
    )


def test_logging_into_another_account_does_not_clear_failures_against_this_one(client, settings):
    settings.AXES_FAILURE_LIMIT = 5
    UserFactory(username="bob")
    UserFactory(username="alice")
    for _ in range(4):
        assert _login(client, "wrong", "bob").status_code == 200
    assert _login(client, PASSWORD, "alice").status_code == 302
    client.post("/accounts/logout/")
    assert _login(client, "wrong", "bob").status_code == 429  # the fifth
    assert _login(client, PASSWORD, "bob").status_code == 429


def test_behind_a_proxy_each_client_is_counted_on_its_own(client, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}  # MEMORY_PROXY_COUNT=1
    settings.AXES_FAILURE_LIMIT = 2
    UserFactory(username="carol")
    UserFactory(username="dave")
    for _ in range(2):
        _login(client, "wrong", "nobody", address="10.0.0.5", forwarded="203.0.113.9")
    other_client = _login(client, PASSWORD, "carol", address="10.0.0.5", forwarded="198.51.100.7")
    assert other_client.status_code == 302
    same_client = _login(client, PASSWORD, "dave", address="10.0.0.5", forwarded="203.0.113.9")
    assert same_client.status_code == 429


def test_without_a_proxy_a_clients_own_forwarded_header_is_ignored(client, settings):
    settings.AXES_FAILURE_LIMIT = 2
    UserFactory(username="erin")
    for n in range(2):
        _login(client, "wrong", "nobody", forwarded=f"192.0.2.{n}")
    assert _login(client, PASSWORD, "erin", forwarded="192.0.2.99").status_code == 429

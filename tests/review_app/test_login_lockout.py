"""Failed logins lock the sign-in out for a while (django-axes)."""

import re
from datetime import timedelta

import pytest

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def _login(client, password, username="owner", address="10.0.0.1"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_after_the_limit_even_the_right_password_gets_429(client, owner, settings):
    settings.AXES_FAILURE_LIMIT = 3
    assert [_login(client, "wrong").status_code for _ in range(2)] == [200, 200]
    locked = _login(client, "wrong")
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert _login(client, PASSWORD).status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_lockout_follows_the_username_across_addresses(client, owner, settings):
    settings.AXES_FAILURE_LIMIT = 2
    for address in ("10.0.0.1", "10.0.0.2"):
        _login(client, "wrong", address=address)
    assert _login(client, PASSWORD, address="10.0.0.3").status_code == 429


def test_the_lockout_follows_the_address_across_usernames(client, owner, settings):
    settings.AXES_FAILURE_LIMIT = 2
    for username in ("someone", "another"):
        _login(client, "wrong", username=username)
    assert _login(client, PASSWORD).status_code == 429
    assert _login(client, PASSWORD, address="10.0.0.9").status_code == 302


def _alert(response) -> str:
    return re.search(r'role="alert">(.*?)</p>', response.content.decode(), re.S).group(1)


def test_an_address_lockout_says_the_address_is_paused_in_words(client, owner, settings):
    UserFactory(username="carol")
    for _ in range(5):
        _login(client, "wrong", username="carol")
    locked = _login(client, PASSWORD, username="owner")
    assert locked.status_code == 429
    assert _alert(locked) == (
        "After 5 failed attempts, logins from this address are paused for 15 minutes."
        " Try again later, or ask an administrator to lift the pause."
    )


def test_an_account_lockout_names_neither_the_user_nor_the_address(client, owner, settings):
    settings.AXES_FAILURE_LIMIT = 2
    settings.AXES_COOLOFF_TIME = timedelta(hours=1)
    for address in ("10.0.0.1", "10.0.0.2"):
        _login(client, "wrong", address=address)
    locked = _login(client, PASSWORD, address="10.0.0.3")
    assert locked.status_code == 429
    assert _alert(locked).startswith(
        "After 2 failed attempts, logins to this account are paused for 1 hour."
    )


def test_a_success_before_the_limit_resets_the_count(client, owner, settings):
    settings.AXES_FAILURE_LIMIT = 3
    _login(client, "wrong")
    _login(client, "wrong")
    assert _login(client, PASSWORD).status_code == 302
    client.logout()
    _login(client, "wrong")
    _login(client, "wrong")
    assert _login(client, PASSWORD).status_code == 302


def test_a_username_longer_than_any_account_is_a_plain_failed_login(client, owner):
    response = _login(client, "wrong", username="U" * 256)
    assert response.status_code == 200
    assert "Your username and password didn" in response.content.decode()
    assert _login(client, PASSWORD).status_code == 302

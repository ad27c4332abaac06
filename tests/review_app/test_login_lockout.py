"""Failed logins lock the sign-in out for a while (django-axes)."""

import pytest

from tests.factories import PASSWORD

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

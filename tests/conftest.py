"""The test world: a throwaway embedded PostgreSQL and a fixed cast of users.

With no DATABASE_URL the suite starts its own embedded server in a
temporary folder (deleted at exit), so it never touches the development
data in MEMORY_DATA_DIR.
"""

import psycopg
import pytest
from django.core.cache import cache
from django.db import connections
from rest_framework.test import APIClient

from memory_app.selectors import term_statistics
from memory_app.services.principals import api_key_issue
from tests.factories import UserFactory

TEST_POOL_SIZE = 40


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    for connection in connections.all(initialized_only=False):
        if "EMBEDDED_DATA_DIR" in connection.settings_dict:
            data_dir = tmp_path_factory.mktemp("embedded-postgres") / "data"
            connection.settings_dict["EMBEDDED_DATA_DIR"] = str(data_dir)
            connection.settings_dict["EMBEDDED_CLEANUP"] = "delete"
        pool = connection.settings_dict.get("OPTIONS", {}).get("pool")
        if pool:
            # Tests start threads of their own (racing writers, live servers),
            # each holding a pooled connection while it runs: a server process
            # needs far fewer than the suite does at its busiest.
            pool["max_size"] = TEST_POOL_SIZE


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Production hashing takes ~0.5 s a password by design; tests make many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_term_statistics():
    # Kept a minute per process; a test's ANALYZE is rolled back with it.
    term_statistics.forget()


@pytest.fixture
def spare():
    """A connection of its own to the test database, as the pool holds them."""
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as spare:
        yield spare


@pytest.fixture(autouse=True)
def _fresh_throttle_counters():
    # The API throttles count in the cache, which outlives a test's transaction.
    cache.clear()


@pytest.fixture
def owner(db):
    return UserFactory(username="owner")


@pytest.fixture
def teammate(db):
    return UserFactory(username="teammate")


@pytest.fixture
def outsider(db):
    return UserFactory(username="outsider")


@pytest.fixture
def reviewer(db):
    return UserFactory(username="reviewer", reviewer=True)


@pytest.fixture
def staff(db):
    """A staff member (Django's is_staff), who manages webhooks and teams."""
    user = UserFactory(username="staff")
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


@pytest.fixture
def api_client_for():
    """An API client authenticated with a fresh key of the given user."""

    def make(user, scheme: str = "Token") -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"{scheme} {api_key_issue(user=user).raw}")
        return client

    return make


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker):
    """uvicorn serving config.asgi (Django and /mcp); tests using it need
    `transactional_db` so the server's connections see their data."""
    from tests.live_asgi import LiveAsgiServer, server_connections_close

    server = LiveAsgiServer()
    server.start()
    yield server
    server.stop()
    with django_db_blocker.unblock():
        server_connections_close()

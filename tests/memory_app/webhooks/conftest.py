import pytest

from tests.factories import UserFactory
from tests.memory_app.api.conftest import agent, caller_for, tools  # noqa: F401 (fixtures)
from tests.memory_app.webhooks.receiver import Receiver


@pytest.fixture
def receiver():
    receiver = Receiver()
    server = receiver.serve()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def staff(db):
    user = UserFactory(username="staff")
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


@pytest.fixture
def http_allowed(settings):
    """The local receiver speaks plain HTTP; production accepts only HTTPS."""
    settings.MEMORY_WEBHOOK_ALLOW_HTTP = True

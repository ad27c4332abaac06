import pytest

from memory_app.models import Trust
from memory_app.services.conversations import conversation_open
from memory_app.services.stores import store_workspace_ensure
from tests.factories import make_document


@pytest.fixture
def contradiction(owner):
    shared = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    reviewed = make_document(
        shared,
        "services/payments/pool",
        "The payments connection pool size is 20 in production.",
        title="payments connection pool",
        trust=Trust.ADMIN_APPROVED,
    )
    conversation = conversation_open(user=owner, external_id="pool-talk").store
    draft = make_document(
        conversation,
        "notes/pool",
        "The payments connection pool size is 50 in production now.",
        title="payments connection pool",
    )
    """A reviewed document and a conversation draft that disagrees with it."""
    return reviewed, draft

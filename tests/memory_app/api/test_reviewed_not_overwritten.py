"""An agent's write never replaces reviewed or person-written memory
(DESIGN §9): it is refused at the document's path, and a near-duplicate of it
elsewhere becomes a new draft rather than an update of the reviewed text."""

import pytest

from memory_app.models import MemoryDocument, MemoryEvent, System, Trust
from memory_app.services.stores import store_for_system, store_for_user
from tests.factories import UserFactory, make_document

pytestmark = pytest.mark.django_db

POOL = "The payments connection pool size is 20 in production; raise it only with a DBA."


@pytest.fixture
def manager(payments):
    return UserFactory(username="payments-bot", service_account=True, teams=["payments-owners"])


@pytest.fixture
def reviewed(payments):
    store = store_for_system(system=System.objects.get(slug="payments"))
    return make_document(
        store, "db/pool", POOL, title="Connection pool", trust=Trust.ADMIN_APPROVED
    )


def _unchanged(document: MemoryDocument) -> None:
    now = MemoryDocument.objects.get(pk=document.pk)
    assert (now.trust, now.version, now.content) == (Trust.ADMIN_APPROVED, 1, POOL)


@pytest.mark.parametrize("tool", ["memory_remember", "memory_patch"])
def test_a_write_to_the_path_of_reviewed_memory_is_refused(caller_for, manager, reviewed, tool):
    body = {"store": "system:payments", "path": "db/pool", "content": "Pool size is 50 now."}
    if tool == "memory_patch":
        body["expected_sha256"] = reviewed.content_sha256
    response = caller_for(manager)(tool, body)
    assert response.status_code == 403
    assert (response.json()["error"], response.json()["reason"]) == (
        "policy_denied",
        "document_reviewed",
    )
    assert "memory_propose_promotion" in response.json()["detail"]
    _unchanged(reviewed)
    assert MemoryEvent.objects.filter(type="memory.policy.denied").count() == 1


def test_a_near_duplicate_of_reviewed_memory_is_a_new_draft(caller_for, manager, reviewed):
    body = {"store": "system:payments", "path": "db/pool-again", "content": POOL}
    written = caller_for(manager).ok("memory_remember", body, status=201)
    assert (written["outcome"], written["trust"]) == ("created", "agent_draft")
    assert written["id"] != str(reviewed.pk)
    _unchanged(reviewed)


def test_an_agent_may_not_replace_what_its_user_wrote_in_their_own_store(caller_for, owner):
    store = store_for_user(user=owner)
    mine = make_document(
        store,
        "prefs/editor",
        "Uses helix.",
        doc_type="user_preference",
        trust=Trust.USER_AUTHORED,
    )
    body = {
        "store": "user",
        "path": "prefs/editor",
        "doc_type": "user_preference",
        "content": "Uses vim.",
    }
    response = caller_for(owner)("memory_remember", body)
    assert (response.status_code, response.json()["reason"]) == (403, "document_reviewed")
    assert MemoryDocument.objects.get(pk=mine.pk).content == "Uses helix."

"""memory_delete asks; a human with the right confirms or declines."""

import pytest

from memory_app.errors import PermissionDenied
from memory_app.models import DreamReviewItem, MemoryDocument, MemoryEvent
from memory_app.services.delete import deletion_decide
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def requested(caller_for, owner):
    tools = caller_for(owner)
    document = tools.ok("memory_remember", remember_body(), status=201)
    body = tools.ok("memory_delete", {"id": document["id"], "reason": "obsolete"}, status=202)
    return document, DreamReviewItem.objects.get(pk=body["review_item_id"])


def test_a_request_changes_nothing_until_confirmed(requested):
    document, item = requested
    assert MemoryDocument.objects.get(pk=document["id"]).state == "active"
    assert item.status == "pending" and item.action == "tombstone"
    assert item.rationale == "obsolete"
    assert MemoryEvent.objects.filter(type="memory.deletion.requested").count() == 1


def test_asking_twice_returns_the_same_request(caller_for, owner, requested):
    document, item = requested
    again = caller_for(owner).ok("memory_delete", {"id": document["id"]}, status=202)
    assert again["review_item_id"] == str(item.pk)


def test_the_owner_confirms_and_the_document_is_tombstoned_with_a_version(owner, requested):
    document, item = requested
    deletion_decide(user=owner, item=item, confirm=True, note="agreed")
    stored = MemoryDocument.objects.get(pk=document["id"])
    assert stored.state == "tombstoned" and stored.version == 2
    assert stored.versions.get(version=2).change == "tombstone"
    item.refresh_from_db()
    assert (item.status, item.decided_by, item.decision_note) == ("approved", owner, "agreed")
    assert MemoryEvent.objects.filter(type="memory.document.tombstoned").exists()


def test_asking_to_delete_a_tombstoned_document_is_a_recorded_denial(caller_for, owner, requested):
    document, item = requested
    deletion_decide(user=owner, item=item, confirm=True)
    response = caller_for(owner)("memory_delete", {"id": document["id"]})
    assert response.status_code == 403
    assert response.json()["event"] == "memory.policy.denied"
    denied = MemoryEvent.objects.get(type="memory.policy.denied")
    assert denied.payload["reason"] == response.json()["reason"]


def test_declining_keeps_the_document(owner, requested):
    document, item = requested
    deletion_decide(user=owner, item=item, confirm=False, note="still useful")
    assert MemoryDocument.objects.get(pk=document["id"]).state == "active"
    item.refresh_from_db()
    assert item.status == "rejected"


def test_an_outsider_cannot_decide(requested):
    _, item = requested
    with pytest.raises(PermissionDenied):
        deletion_decide(user=UserFactory(username="mallory"), item=item, confirm=True)


def test_a_service_account_cannot_decide_even_as_reviewer(requested):
    _, item = requested
    bot = UserFactory(username="bot-reviewer", reviewer=True, service_account=True)
    with pytest.raises(PermissionDenied):
        deletion_decide(user=bot, item=item, confirm=True)


def test_a_reviewer_may_decide(requested, reviewer):
    document, item = requested
    deletion_decide(user=reviewer, item=item, confirm=True)
    assert MemoryDocument.objects.get(pk=document["id"]).state == "tombstoned"


def test_a_tombstoned_document_leaves_listings_but_keeps_history(caller_for, owner, requested):
    document, item = requested
    deletion_decide(user=owner, item=item, confirm=True)
    tools = caller_for(owner)
    assert tools.ok("memory_list", {"store": "conversation"})["documents"] == []
    listed = tools.ok("memory_list", {"store": "conversation", "include_inactive": True})
    assert [d["state"] for d in listed["documents"]] == ["tombstoned"]
    assert len(tools.ok("memory_history", {"id": document["id"]})["versions"]) == 2
    patch = tools(
        "memory_patch",
        {"id": document["id"], "expected_sha256": document["sha256"], "content": "revive"},
    )
    assert patch.status_code == 403
    assert patch.json()["reason"] == "document_not_active"

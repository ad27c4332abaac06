"""The pages' decisions go through the same note scan as the API: a secret
in a note or reason is a message on the page, and nothing is decided."""

import pytest

from memory_app.models import DreamReviewItem, MemoryEvent
from tests.factories import UserFactory
from tests.review_app.test_deletions import request_deletion
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db

SECRET = "AKIAIOSFODNN7EXAMPLQ"


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


@pytest.mark.parametrize("action", ["approve", "reject", "defer"])
def test_a_secret_in_a_decision_note_is_refused_on_the_page(client, reviewer, agent, action):
    item_id = propose(agent)
    client.force_login(reviewer)
    response = client.post(f"/queue/{item_id}/decide", {"action": action, "note": f"x {SECRET}"})
    assert response.status_code == 302
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    page = client.get("/queue/").content.decode()
    assert "safety scanner refused" in page and SECRET not in page
    assert MemoryEvent.objects.filter(type="memory.write.blocked").count() == 1
    assert not any(SECRET in str(event.payload) for event in MemoryEvent.objects.all())


def test_a_secret_note_in_a_bulk_decision_decides_none_of_the_items(client, reviewer, agent):
    ids = [propose(agent, n) for n in range(2)]
    client.force_login(reviewer)
    client.post("/queue/bulk", {"action": "reject", "note": SECRET, "items": ids})
    assert set(DreamReviewItem.objects.values_list("status", flat=True)) == {"pending"}


def test_a_secret_in_a_deletion_decision_note_decides_nothing(client, owner):
    document, item_id = request_deletion(owner)
    client.force_login(owner)
    client.post(f"/deletions/{item_id}/decide", {"action": "confirm", "note": SECRET})
    document.refresh_from_db()
    assert document.state == "active"
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    assert MemoryEvent.objects.filter(type="memory.write.blocked").count() == 1
    assert not any(SECRET in str(event.payload) for event in MemoryEvent.objects.all())


@pytest.mark.parametrize(
    ("form", "tool"),
    [
        ({"action": "rollback", "version": 1}, "document_rollback"),
        ({"action": "tombstone", "confirm": "on"}, "document_state_set"),
    ],
)
def test_a_secret_in_a_curate_reason_changes_nothing(client, owner, form, tool):
    document, _ = request_deletion(owner, path="notes/reasoned")
    client.force_login(owner)
    response = client.post(
        f"/documents/{document.pk}/curate", {**form, "reason": f"see {SECRET}"}, follow=True
    )
    assert "safety scanner refused" in response.content.decode()
    document.refresh_from_db()
    assert (document.state, document.version) == ("active", 1)
    blocked = MemoryEvent.objects.get(type="memory.write.blocked")
    assert blocked.payload["tool"] == tool
    assert not any(SECRET in str(event.payload) for event in MemoryEvent.objects.all())
    assert not any(SECRET in v.reason for v in document.versions.all())

"""The queue page's decisions go through the same note scan as the API: a
secret in a note is a message on the page, and nothing is decided."""

import pytest

from memory_app.models import DreamReviewItem, MemoryEvent
from tests.factories import UserFactory
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

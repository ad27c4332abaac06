"""An approval whose edited content is only whitespace publishes nothing,
through the API or the review queue page."""

import pytest
from rest_framework.test import APIClient

from memory_app.models import DreamReviewItem, MemoryDocument
from memory_app.services.principals import api_key_issue
from tests.factories import UserFactory
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db

BLANK = "   \n  "


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


def _nothing_published(item_id: str) -> None:
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    assert not MemoryDocument.objects.filter(store__slug="workspace_runbooks").exists()


def test_the_api_refuses_a_blank_edit_and_names_the_content(reviewer, agent):
    item_id = propose(agent)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=reviewer).raw}")
    response = client.post(
        f"/api/v1/promotions/{item_id}/approve", {"content": "  \n"}, format="json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_input"
    assert "content" in response.json()["fields"]
    _nothing_published(item_id)


@pytest.mark.parametrize("content", [BLANK, ""])
def test_the_queue_page_refuses_a_blank_edit_and_says_why(client, reviewer, agent, content):
    """The card's box is sent with every approval from it: emptied, it is
    an edit to nothing, not the proposal approved unedited."""
    item_id = propose(agent)
    client.force_login(reviewer)
    response = client.post(
        f"/queue/{item_id}/decide", {"action": "approve", "content": content}, follow=True
    )
    page = response.content.decode()
    assert "Not decided: “Fix 0”" in page
    assert "An approved memory needs some content" in page
    assert "Item approved." not in page
    _nothing_published(item_id)


def test_an_approval_without_the_box_publishes_the_proposal(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "approve"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "approved"
    published = MemoryDocument.objects.get(store__slug="workspace_runbooks", path="fix/0")
    assert published.content == "Roll back the configmap, then verify."


def test_a_bulk_approval_applies_no_posted_content(client, reviewer, agent):
    ids = [propose(agent, n) for n in range(2)]
    client.force_login(reviewer)
    client.post("/queue/bulk", {"action": "approve", "items": ids, "content": "One for all."})
    contents = MemoryDocument.objects.filter(store__slug="workspace_runbooks")
    assert (
        sorted(contents.values_list("content", flat=True))
        == ["Roll back the configmap, then verify."] * 2
    )

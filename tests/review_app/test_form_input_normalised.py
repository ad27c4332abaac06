"""What a browser sends is read as the person meant it: a text box's CRLF
line breaks are not an edit, an item ticked twice is decided once."""

import pytest

from memory_app.models import DreamReviewItem, MemoryDocument, MemoryEvent
from tests.factories import UserFactory
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db

PROPOSED = "Roll back the configmap.\nThen verify the pods.\n"


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


@pytest.mark.parametrize("breaks", ["\r\n", "\r"])
def test_approving_an_untouched_proposal_without_javascript_is_not_an_edit(
    client, reviewer, agent, breaks
):
    item_id = propose(agent, content=PROPOSED)
    client.force_login(reviewer)
    # Without JavaScript the approve form sends its "Edit before approving"
    # box as it stands, line breaks as the browser writes them.
    sent = {"action": "approve", "content": PROPOSED.replace("\n", breaks)}
    assert client.post(f"/queue/{item_id}/decide", sent).status_code == 302
    document = MemoryDocument.objects.get(store__slug="workspace_runbooks", path="fix/0")
    assert document.content == PROPOSED
    event = MemoryEvent.objects.get(type="memory.promotion.approved")
    assert event.payload["edited"] is False


def test_an_edit_before_approving_keeps_its_line_breaks_as_lf(client, reviewer, agent):
    item_id = propose(agent, content=PROPOSED)
    client.force_login(reviewer)
    sent = {"action": "approve", "content": "Roll back.\r\nVerify.\r\n"}
    client.post(f"/queue/{item_id}/decide", sent)
    document = MemoryDocument.objects.get(store__slug="workspace_runbooks", path="fix/0")
    assert document.content == "Roll back.\nVerify.\n"
    assert MemoryEvent.objects.get(type="memory.promotion.approved").payload["edited"] is True


@pytest.mark.parametrize("htmx", [False, True])
def test_an_item_sent_twice_in_a_bulk_decision_counts_once(client, reviewer, agent, htmx):
    first, second = propose(agent, 1), propose(agent, 2)
    client.force_login(reviewer)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    sent = {"action": "reject", "note": "Seen.", "items": [first, first.upper(), second]}
    response = client.post("/queue/bulk", sent, follow=True, **headers)
    html = response.content.decode()
    assert "2 item(s) rejected." in html
    assert "no longer open" not in html
    assert set(DreamReviewItem.objects.values_list("status", flat=True)) == {"rejected"}

"""The deletion-requests page: who sees which requests, and deciding them."""

import pytest

from memory_app.actors import Actor
from memory_app.models import DreamReviewItem, MemoryDocument
from memory_app.services.conversations import conversation_open
from memory_app.services.delete import memory_delete_request
from memory_app.services.remember import RememberInput, memory_remember
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def request_deletion(user, path="old/note") -> tuple[MemoryDocument, str]:
    actor = Actor(
        user=user, agent=user, conversation=conversation_open(user=user, external_id=f"d-{user.pk}")
    )
    document = memory_remember(
        actor=actor, data=RememberInput(store="conversation", path=path, content="stale <b>x</b>")
    ).document
    item, _ = memory_delete_request(actor=actor, document=document, reason="outdated")
    return document, str(item.pk)


def test_the_owner_sees_and_confirms_their_request(client, owner):
    document, item_id = request_deletion(owner)
    client.force_login(owner)
    html = client.get("/deletions/").content.decode()
    assert "old/note" in html and "outdated" in html
    client.post(f"/deletions/{item_id}/decide", {"action": "confirm", "note": "yes"})
    document.refresh_from_db()
    assert document.state == "tombstoned"
    assert DreamReviewItem.objects.get(pk=item_id).status == "approved"


def test_declining_keeps_the_document(client, owner):
    document, item_id = request_deletion(owner)
    client.force_login(owner)
    client.post(f"/deletions/{item_id}/decide", {"action": "decline"})
    document.refresh_from_db()
    assert document.state == "active"


def test_others_see_nothing_and_cannot_decide(client, owner, outsider):
    document, item_id = request_deletion(owner)
    client.force_login(outsider)
    assert "No deletion requests waiting for you" in client.get("/deletions/").content.decode()
    assert client.post(f"/deletions/{item_id}/decide", {"action": "confirm"}).status_code == 404
    document.refresh_from_db()
    assert document.state == "active"


def test_reviewers_see_every_request(client, owner, reviewer):
    request_deletion(owner)
    client.force_login(reviewer)
    assert "old/note" in client.get("/deletions/").content.decode()


def test_service_accounts_never_decide(client, owner):
    _, item_id = request_deletion(owner)
    bot = UserFactory(username="bot", reviewer=True, service_account=True)
    client.force_login(bot)
    assert client.post(f"/deletions/{item_id}/decide", {"action": "confirm"}).status_code == 404


def test_a_bad_form_is_a_message(client, owner):
    _, item_id = request_deletion(owner)
    client.force_login(owner)
    response = client.post(f"/deletions/{item_id}/decide", {"action": "explode"}, follow=True)
    assert response.status_code == 200
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_the_page_is_bounded_in_queries(client, reviewer, django_assert_max_num_queries):
    for n in range(20):
        request_deletion(UserFactory(username=f"u{n}"), path=f"p/{n}")
    client.force_login(reviewer)
    with django_assert_max_num_queries(10):
        response = client.get("/deletions/")
    assert response.content.decode().count("/decide") == 20

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


def test_a_bad_form_is_said_on_the_page_again(client, owner):
    _, item_id = request_deletion(owner)
    client.force_login(owner)
    response = client.post(f"/deletions/{item_id}/decide", {"action": "explode"})
    assert response.status_code == 400
    assert "Action: Select a valid choice." in response.content.decode()
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_the_page_is_bounded_in_queries(client, reviewer, django_assert_max_num_queries):
    for n in range(20):
        request_deletion(UserFactory(username=f"u{n}"), path=f"p/{n}")
    client.force_login(reviewer)
    with django_assert_max_num_queries(10):
        response = client.get("/deletions/")
    assert response.content.decode().count("/decide") == 20


def test_a_request_decided_meanwhile_is_said_to_be_no_longer_open(client, owner, reviewer):
    document, item_id = request_deletion(owner)
    client.force_login(reviewer)
    client.post(f"/deletions/{item_id}/decide", {"action": "decline"})
    # The owner's page was drawn before the reviewer decided.
    client.force_login(owner)
    response = client.post(f"/deletions/{item_id}/decide", {"action": "confirm"}, follow=True)
    assert response.status_code == 200
    assert "This request is no longer open: decided by someone else, or withdrawn." in (
        response.content.decode()
    )
    document.refresh_from_db()
    assert document.state == "active"
    assert DreamReviewItem.objects.get(pk=item_id).status == "rejected"


def test_a_decided_request_of_a_store_one_may_not_curate_is_still_404(client, owner, outsider):
    _, item_id = request_deletion(owner)
    client.force_login(owner)
    client.post(f"/deletions/{item_id}/decide", {"action": "decline"})
    client.force_login(outsider)
    assert client.post(f"/deletions/{item_id}/decide", {"action": "confirm"}).status_code == 404


def test_a_note_over_its_limit_is_shown_again_in_its_row(client, owner, reviewer):
    document, item_id = request_deletion(owner)
    _, other_id = request_deletion(UserFactory(username="other"))
    client.force_login(reviewer)
    assert f'id="note-{other_id}"' in client.get("/deletions/").content.decode()
    note = "superseded by <the> runbook " + "x" * 2000
    response = client.post(
        f"/deletions/{item_id}/decide", {"action": "confirm", "note": note, "page": "1"}
    )
    html = response.content.decode()
    assert response.status_code == 400
    kept = note.replace("<", "&lt;").replace(">", "&gt;")
    assert (
        f'id="note-{item_id}" name="note" maxlength="2000" placeholder="note" value="{kept}"'
        in html
    )
    assert f'<p class="field-error" id="note-{item_id}-error">Note: ' in html
    assert f'id="note-{other_id}-error"' not in html
    document.refresh_from_db()
    assert document.state == "active"
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_a_credential_in_a_refused_note_is_not_sent_back(client, owner):
    _, item_id = request_deletion(owner)
    client.force_login(owner)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    note = f"token {token} " + "x" * 2000
    html = client.post(f"/deletions/{item_id}/decide", {"action": "confirm", "note": note})
    assert token not in html.content.decode()
    assert "token [removed secret] xxx" in html.content.decode()

"""Reviewers open what they decide: the draft behind a proposal and the
document behind a deletion request. Everyone else still gets 404."""

import pytest

from memory_app.actors import Actor
from memory_app.services.conversations import conversation_open
from memory_app.services.delete import memory_delete_request
from memory_app.services.promote import memory_propose_promotion
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

XSS = "<script>alert(1)</script>"


def draft(user, path: str, content: str = "Restart the worker <b>gently</b>."):
    actor = Actor(
        user=user, agent=user, conversation=conversation_open(user=user, external_id=f"c-{path}")
    )
    document = memory_remember(
        actor=actor, data=RememberInput(store="conversation", path=path, content=content)
    ).document
    return actor, document


@pytest.fixture
def proposed(owner):
    store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    actor, document = draft(owner, "worker/restart")
    memory_propose_promotion(
        actor=actor, document=document, target_store="workspace_runbooks", rationale="works"
    )
    return document


@pytest.fixture
def doomed(owner):
    actor, document = draft(owner, "old/doomed", content=f"stale {XSS}")
    memory_delete_request(actor=actor, document=document, reason="outdated")
    return document


def superuser():
    return UserFactory(username="root", is_superuser=True)


@pytest.mark.parametrize("who", ["reviewer", "superuser"])
def test_reviewers_open_the_draft_behind_a_proposal(client, proposed, reviewer, who):
    client.force_login(reviewer if who == "reviewer" else superuser())
    response = client.get(f"/documents/{proposed.pk}/")
    assert response.status_code == 200
    assert "Restart the worker &lt;b&gt;gently&lt;/b&gt;." in response.content.decode()


@pytest.mark.parametrize("who", ["reviewer", "superuser"])
def test_reviewers_open_the_document_behind_a_deletion_request(client, doomed, reviewer, who):
    client.force_login(reviewer if who == "reviewer" else superuser())
    assert client.get(f"/documents/{doomed.pk}/").status_code == 200


def test_a_plain_user_still_gets_404_for_both(client, proposed, doomed, outsider):
    client.force_login(outsider)
    assert client.get(f"/documents/{proposed.pk}/").status_code == 404
    assert client.get(f"/documents/{doomed.pk}/").status_code == 404


def test_a_reviewer_still_gets_404_for_a_draft_nobody_proposed(client, owner, reviewer):
    _, private = draft(owner, "just/mine")
    client.force_login(reviewer)
    assert client.get(f"/documents/{private.pk}/").status_code == 404


def test_a_reviewing_service_account_gets_404(client, proposed):
    client.force_login(UserFactory(username="bot", reviewer=True, service_account=True))
    assert client.get(f"/documents/{proposed.pk}/").status_code == 404


def test_the_api_does_not_widen_for_reviewers(api_client_for, proposed, reviewer):
    response = api_client_for(reviewer).post(
        "/api/v1/tools/memory_read", {"id": str(proposed.pk)}, format="json"
    )
    assert response.status_code == 404


def test_the_deletions_page_shows_the_content_to_be_removed_as_text(client, doomed, reviewer):
    client.force_login(reviewer)
    html = client.get("/deletions/").content.decode()
    assert "stale &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert XSS not in html

"""A person whose group revokes "read memory" but keeps "manage memory" sees
no memory on the deletions and queue pages either, and decides nothing
there: those pages show a document's text, which the document and system
pages already hide from them (404)."""

import pytest
from django.contrib.auth.models import Group

from memory_app.actors import Actor
from memory_app.models import DreamReviewItem, MemoryDocument, System
from memory_app.services.conversations import conversation_open
from memory_app.services.delete import memory_delete_request
from memory_app.services.principals import group_memory_policy_set, system_grant_set
from memory_app.services.stores import store_for_system, store_workspace_ensure
from tests.factories import UserFactory, make_document
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db

SECRET = "TOPSECRET: the master key is rotated with vault-rotate --force"
CURRENT = "CURRENT-RUNBOOK: restart the ingress pods one at a time"
PROPOSED = "PROPOSED-RUNBOOK: roll back the configmap, then verify"


def revoke_read(team: str) -> None:
    group_memory_policy_set(team=Group.objects.get(name=team), read=False, manage=True)


# Deletion requests ---------------------------------------------------------------


@pytest.fixture
def vault(db):
    """A system document an agent asked to delete, and its system's manager,
    who is also in a team of contractors."""
    system_grant_set(system_slug="vault-svc", team="vault-owners", level="manage")
    Group.objects.get_or_create(name="contractors")
    manager = UserFactory(username="mgr", teams=["vault-owners", "contractors"])
    carol = UserFactory(username="carol", teams=["vault-owners"])
    store = store_for_system(system=System.objects.get(slug="vault-svc"))
    document = make_document(store, path="runbooks/rotate-master-key", content=SECRET)
    actor = Actor(
        user=carol, agent=carol, conversation=conversation_open(user=carol, external_id="c-1")
    )
    item, _ = memory_delete_request(actor=actor, document=document, reason="outdated")
    return manager, document, str(item.pk)


def test_the_manager_sees_the_request_while_reading_is_allowed(client, vault):
    manager, _, _ = vault
    client.force_login(manager)
    assert SECRET in client.get("/deletions/").content.decode()


def test_without_read_memory_the_deletions_page_shows_nothing(
    client, vault, django_assert_max_num_queries
):
    manager, document, _ = vault
    revoke_read("contractors")
    client.force_login(manager)
    with django_assert_max_num_queries(6):
        response = client.get("/deletions/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "No deletion requests waiting for you" in html
    for shown in (SECRET, document.path, document.title):
        assert shown not in html
    assert client.get(f"/documents/{document.pk}/").status_code == 404
    assert client.get("/systems/vault-svc/").status_code == 404


@pytest.mark.parametrize("action", ["confirm", "decline"])
def test_without_read_memory_a_deletion_cannot_be_decided(client, vault, action):
    manager, document, item_id = vault
    revoke_read("contractors")
    client.force_login(manager)
    response = client.post(f"/deletions/{item_id}/decide", {"action": action, "note": "ok"})
    assert response.status_code == 404
    assert SECRET not in response.content.decode()
    document.refresh_from_db()
    assert (document.state, document.version) == ("active", 1)
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_without_read_memory_no_deletion_is_waiting_or_linked(client, vault):
    manager, _, _ = vault
    revoke_read("contractors")
    client.force_login(manager)
    assert client.get("/deletions/count").content == b""
    home = client.get("/").content.decode()
    assert "Deletion requests" not in home
    assert 'href="/deletions/"' not in home


# The review queue -------------------------------------------------------------


@pytest.fixture
def proposal(db):
    """A pending proposal to replace a workspace runbook, and a reviewer who
    is also in a team of contractors."""
    Group.objects.get_or_create(name="contractors")
    reviewer = UserFactory(username="rev", reviewer=True, teams=["contractors"])
    store = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    current = make_document(store, "fix/0", CURRENT, trust="admin_approved")
    agent = UserFactory(username="agent", service_account=True)
    return reviewer, current, propose(agent, content=PROPOSED)


def test_the_reviewer_sees_the_proposal_while_reading_is_allowed(client, proposal):
    reviewer, _, item_id = proposal
    client.force_login(reviewer)
    assert item_id in client.get("/queue/").content.decode()
    assert PROPOSED in client.get(f"/queue/{item_id}/content").content.decode()


@pytest.mark.parametrize("page", ["/queue/", "/queue/?status=approved", "/queue/{}/content"])
def test_without_read_memory_the_queue_pages_are_refused(
    client, proposal, page, django_assert_max_num_queries
):
    reviewer, _, item_id = proposal
    revoke_read("contractors")
    client.force_login(reviewer)
    with django_assert_max_num_queries(8):
        response = client.get(page.format(item_id))
    html = response.content.decode()
    assert response.status_code == 403
    assert "needs read memory, which one of your groups revokes" in html
    for shown in (PROPOSED, CURRENT, item_id):
        assert shown not in html


@pytest.mark.parametrize("action", ["approve", "reject", "defer"])
def test_without_read_memory_a_proposal_cannot_be_decided(client, proposal, action):
    reviewer, current, item_id = proposal
    revoke_read("contractors")
    client.force_login(reviewer)
    decision = {"action": action, "note": "ok"}
    assert client.post(f"/queue/{item_id}/decide", decision).status_code == 403
    bulk = client.post("/queue/bulk", {**decision, "items": [item_id]}, HTTP_HX_REQUEST="true")
    assert bulk.status_code == 403
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    current.refresh_from_db()
    assert (current.content, current.version) == (CURRENT, 1)
    assert not MemoryDocument.objects.filter(content=PROPOSED, store=current.store).exists()


def test_without_read_memory_no_proposal_is_waiting_or_linked(client, proposal):
    reviewer, _, _ = proposal
    revoke_read("contractors")
    client.force_login(reviewer)
    home = client.get("/").content.decode()
    assert "Promotion proposals" not in home
    assert 'href="/queue/"' not in home

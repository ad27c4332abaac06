"""The review endpoints refuse a reviewer whose group revokes "read memory"
(and keeps "manage memory"): the promotions list holds the proposed texts,
and deciding needs reading what is decided. Deleting a document a person
may not read is refused too. Refusals keep API.md's error shape and change
nothing."""

import pytest
from django.contrib.auth.models import Group

from memory_app.errors import PermissionDenied
from memory_app.models import DreamReviewItem, MemoryDocument, MemoryEvent, System
from memory_app.services.delete import deletion_decide
from memory_app.services.principals import group_memory_policy_set, system_grant_set
from memory_app.services.stores import store_for_system
from tests.factories import UserFactory, make_document
from tests.memory_app.api.conftest import remember_body
from tests.review_app.test_read_memory_revoked_pages import CURRENT, PROPOSED, SECRET, revoke_read

pytestmark = pytest.mark.django_db


def refused(response) -> dict:
    body = response.json()
    assert (response.status_code, body["error"]) == (403, "permission_denied")
    assert "read memory" in body["detail"]
    return body


@pytest.fixture
def rev(db):
    """A reviewer who is also in a team of contractors."""
    Group.objects.get_or_create(name="contractors")
    return UserFactory(username="rev", reviewer=True, teams=["contractors"])


@pytest.fixture
def proposal(caller_for, agent, runbooks):
    """An agent's pending proposal to replace a reviewed runbook."""
    current = make_document(runbooks, "fix/lag", CURRENT, trust="admin_approved")
    tools = caller_for(agent)
    draft = tools.ok("memory_remember", remember_body(path="fix/lag", content=PROPOSED), status=201)
    body = tools.ok(
        "memory_propose_promotion",
        {"id": draft["id"], "target_store": "workspace_runbooks", "rationale": "Worked twice."},
        status=None,
    )
    return current, body["review_item_id"]


def test_the_reviewer_lists_proposals_while_reading_is_allowed(api_client_for, rev, proposal):
    _, item_id = proposal
    items = api_client_for(rev).get("/api/v1/promotions").json()["items"]
    assert [item["id"] for item in items] == [item_id]


@pytest.mark.parametrize("status", ["pending", "approved", "rejected"])
def test_without_read_memory_the_promotions_list_is_refused(
    api_client_for, rev, proposal, status, django_assert_max_num_queries
):
    _, item_id = proposal
    revoke_read("contractors")
    client = api_client_for(rev)
    with django_assert_max_num_queries(4):
        response = client.get(f"/api/v1/promotions?status={status}")
    body = refused(response)
    assert PROPOSED not in str(body) and item_id not in str(body)


@pytest.mark.parametrize(
    ("decision", "body"), [("approve", {"note": "ok"}), ("reject", {"note": "no"})]
)
def test_without_read_memory_a_proposal_cannot_be_decided(
    api_client_for, rev, proposal, decision, body
):
    current, item_id = proposal
    revoke_read("contractors")
    response = api_client_for(rev).post(
        f"/api/v1/promotions/{item_id}/{decision}", body, format="json"
    )
    refused(response)
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    current.refresh_from_db()
    assert (current.content, current.version) == (CURRENT, 1)
    assert not MemoryEvent.objects.filter(
        type__in=["memory.promotion.approved", "memory.promotion.rejected"]
    ).exists()


def test_with_read_memory_restored_the_reviewer_approves(api_client_for, rev, proposal):
    current, item_id = proposal
    revoke_read("contractors")
    group_memory_policy_set(team=Group.objects.get(name="contractors"), read=True, manage=True)
    response = api_client_for(rev).post(f"/api/v1/promotions/{item_id}/approve", {}, format="json")
    assert response.status_code == 200, response.content
    current.refresh_from_db()
    assert current.content == PROPOSED


@pytest.fixture
def vault_deletion(caller_for):
    """A system document an agent in the owning team asked to delete, and
    the system's manager, who is also in a team of contractors."""
    system_grant_set(system_slug="vault-svc", team="vault-owners", level="manage")
    Group.objects.get_or_create(name="contractors")
    manager = UserFactory(username="mgr", teams=["vault-owners", "contractors"])
    carol = UserFactory(username="carol", teams=["vault-owners"])
    store = store_for_system(system=System.objects.get(slug="vault-svc"))
    document = make_document(store, path="runbooks/rotate-master-key", content=SECRET)
    body = caller_for(carol).ok("memory_delete", {"id": str(document.pk)}, status=202)
    return manager, document, DreamReviewItem.objects.get(pk=body["review_item_id"])


def test_without_read_memory_the_manager_cannot_confirm_a_deletion(vault_deletion):
    manager, document, item = vault_deletion
    revoke_read("contractors")
    with pytest.raises(PermissionDenied):
        deletion_decide(user=manager, item=item, confirm=True, note="gone")
    document.refresh_from_db()
    item.refresh_from_db()
    assert (document.state, document.version, item.status) == ("active", 1, "pending")


def test_the_manager_confirms_a_deletion_while_reading_is_allowed(vault_deletion):
    manager, document, item = vault_deletion
    deletion_decide(user=manager, item=item, confirm=True, note="gone")
    assert MemoryDocument.objects.get(pk=document.pk).state == "tombstoned"


def test_an_unknown_item_is_refused_alike(api_client_for, rev):
    """The refusal comes before the item is looked up, so it tells nothing
    of which items exist."""
    revoke_read("contractors")
    missing = "00000000-0000-0000-0000-000000000000"
    client = api_client_for(rev)
    refused(client.post(f"/api/v1/promotions/{missing}/approve", {}, format="json"))

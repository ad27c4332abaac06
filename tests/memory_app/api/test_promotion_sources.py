"""What a promotion may carry into shared memory: only a live draft, and
beside it only memory that is still in the target store."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_app.models import EMBEDDING_DIMENSIONS, DreamReviewItem, MemoryDocument
from memory_app.services.delete import deletion_decide
from memory_app.services.stores import store_workspace_ensure
from tests.factories import make_document
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db

TARGET = "workspace_runbooks"


@pytest.fixture
def person(owner, caller_for):
    return caller_for(owner)


@pytest.fixture
def draft(person):
    return person.ok("memory_remember", remember_body(path="nginx/crashloop"), status=201)


def propose(caller, draft: dict):
    return caller(
        "memory_propose_promotion",
        {"id": draft["id"], "target_store": TARGET, "rationale": "Hit twice this month."},
    )


def delete_confirmed(caller, reviewer, draft: dict) -> None:
    """The draft's owner asks for its deletion and a reviewer confirms it."""
    caller.ok("memory_delete", {"id": draft["id"]}, status=202)
    item = DreamReviewItem.objects.get(source_document=draft["id"], action="tombstone")
    deletion_decide(user=reviewer, item=item, confirm=True)


def test_a_tombstoned_draft_cannot_be_proposed(person, reviewer, draft):
    delete_confirmed(person, reviewer, draft)
    response = propose(person, draft)
    assert response.status_code == 403, response.content
    body = response.json()
    assert (body["error"], body["reason"]) == ("policy_denied", "document_not_active")
    assert not DreamReviewItem.objects.filter(action="promote").exists()


def test_a_superseded_draft_cannot_be_proposed(person, draft):
    MemoryDocument.objects.filter(pk=draft["id"]).update(state="superseded")
    response = propose(person, draft)
    assert response.status_code == 403, response.content
    assert response.json()["reason"] == "document_not_active"


def test_a_constrained_draft_may_still_be_proposed(person, draft):
    MemoryDocument.objects.filter(pk=draft["id"]).update(state="constrained")
    assert propose(person, draft).status_code == 202


def test_approving_a_proposal_whose_draft_was_deleted_since_is_refused(
    person, reviewer, api_client_for, draft
):
    proposal = propose(person, draft).json()
    delete_confirmed(person, reviewer, draft)
    response = api_client_for(reviewer).post(
        f"/api/v1/promotions/{proposal['review_item_id']}/approve", {}, format="json"
    )
    assert response.status_code == 403, response.content
    body = response.json()
    assert (body["error"], body["reason"]) == ("policy_denied", "document_not_active")
    assert "tombstoned" in body["detail"] and "reject" in body["detail"]
    assert not MemoryDocument.objects.filter(store__slug=TARGET).exists()
    assert DreamReviewItem.objects.get(pk=proposal["review_item_id"]).status == "pending"


def unit(*head: float) -> list[float]:
    """A normalised vector of the model's dimension starting with `head`."""
    vector = [*head, *[0.0] * (EMBEDDING_DIMENSIONS - len(head))]
    norm = sum(v * v for v in vector) ** 0.5
    return [v / norm for v in vector]


def test_expired_memory_does_not_crowd_out_similar_memory_shown_to_the_reviewer(
    person, draft, client, reviewer
):
    store = store_workspace_ensure(slug=TARGET, name="Runbooks")
    past = timezone.now() - timedelta(hours=1)
    for n in range(3):
        vector = unit(0.95, 0.05 * (n + 1))
        make_document(store, f"ops/expired-{n}", "Gone.", embedding=vector, expires_at=past)
    make_document(store, "ops/still-here", "Close.", embedding=unit(0.8, 0.6))
    MemoryDocument.objects.filter(pk=draft["id"]).update(embedding=unit(1.0))
    assert propose(person, draft).status_code == 202
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    related = html.split('<ul class="related">')[1].split("</ul>")[0]
    assert f"{TARGET}/ops/still-here" in related
    assert "expired" not in related

"""A reviewer's note is stored and repeated in events, so it is scanned like
every other text a write keeps: a secret is a 422 and nothing is decided."""

import pytest

from memory_app.models import DreamReviewItem, MemoryDocument, MemoryEvent
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db

SECRET = "AKIAIOSFODNN7EXAMPLQ"


@pytest.fixture
def item_url(tools):
    draft = tools.ok("memory_remember", remember_body(path="nginx/crashloop"), status=201)
    proposal = tools.ok(
        "memory_propose_promotion",
        {"id": draft["id"], "target_store": "workspace_runbooks", "rationale": "Worked twice."},
        status=202,
    )
    return f"/api/v1/promotions/{proposal['review_item_id']}"


def _nothing_holds_the_secret() -> None:
    assert not any(SECRET in str(event.payload) for event in MemoryEvent.objects.all())
    assert not any(SECRET in item.decision_note for item in DreamReviewItem.objects.all())


@pytest.mark.parametrize("decision", ["reject", "approve"])
def test_a_secret_in_the_note_is_blocked_and_nothing_is_decided(
    reviewer, item_url, decision, api_client_for
):
    response = api_client_for(reviewer).post(
        f"{item_url}/{decision}", {"note": f"nope {SECRET}"}, format="json"
    )
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "write_blocked" and body["event"] == "memory.write.blocked"
    assert [f["field"] for f in body["findings"]] == ["note"]
    assert SECRET not in response.content.decode()
    assert DreamReviewItem.objects.get().status == "pending"
    assert not MemoryDocument.objects.filter(store__slug="workspace_runbooks").exists()
    blocked = MemoryEvent.objects.get(type="memory.write.blocked")
    assert blocked.principal == reviewer
    assert blocked.payload["tool"] == f"promotion_{decision}"
    _nothing_holds_the_secret()


def test_a_clean_note_still_rejects(reviewer, item_url, api_client_for):
    response = api_client_for(reviewer).post(
        f"{item_url}/reject", {"note": "too specific to one cluster"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["status"] == "rejected"
    rejected = MemoryEvent.objects.get(type="memory.promotion.rejected")
    assert rejected.payload["note"] == "too specific to one cluster"


def test_a_clean_note_still_approves(reviewer, item_url, api_client_for):
    response = api_client_for(reviewer).post(f"{item_url}/approve", {"note": "good"}, format="json")
    assert response.status_code == 200
    assert DreamReviewItem.objects.get().status == "approved"


def test_an_item_without_a_target_store_still_has_its_note_scanned(
    reviewer, item_url, api_client_for
):
    # Items imported from another installation may name no target store.
    DreamReviewItem.objects.update(target_store=None)
    response = api_client_for(reviewer).post(f"{item_url}/reject", {"note": SECRET}, format="json")
    assert response.status_code == 422
    assert DreamReviewItem.objects.get().status == "pending"
    _nothing_holds_the_secret()

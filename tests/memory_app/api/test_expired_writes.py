"""A document past its expiry is gone to every read before the expiry job
tombstones it; writes and promotions treat it as gone too, instead of
answering "updated" for text no read serves or promoting it born expired."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_app.models import DreamReviewItem, MemoryDocument
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db

PROPOSE = {"target_store": "workspace_runbooks", "rationale": "Hit twice; the fix holds."}


@pytest.fixture
def draft(tools, runbooks):
    later = (timezone.now() + timedelta(hours=1)).isoformat()
    return tools.ok("memory_remember", remember_body(expires_at=later), status=201)


def expire(document_id: str) -> None:
    past = timezone.now() - timedelta(seconds=1)
    MemoryDocument.objects.filter(pk=document_id).update(expires_at=past)


def assert_refused_as_gone(response) -> None:
    assert response.status_code == 403, response.content
    body = response.json()
    assert (body["error"], body["reason"]) == ("policy_denied", "document_not_active")
    assert "expired" in body["detail"]


def test_a_write_to_an_expired_path_is_refused_and_changes_nothing(tools, draft):
    expire(draft["id"])
    update = remember_body(content="Roll the configmap back, then restart the ingress pods.")
    assert_refused_as_gone(tools("memory_remember", update))
    document = MemoryDocument.objects.get(pk=draft["id"])
    assert (document.version, document.content) == (1, remember_body()["content"])


def test_a_patch_of_an_expired_document_is_refused(tools, draft):
    expire(draft["id"])
    patch = {"id": draft["id"], "expected_sha256": draft["sha256"], "content": "Restart it."}
    assert_refused_as_gone(tools("memory_patch", patch))
    assert MemoryDocument.objects.get(pk=draft["id"]).version == 1


def test_an_expired_draft_cannot_be_proposed(tools, draft):
    expire(draft["id"])
    assert_refused_as_gone(tools("memory_propose_promotion", {"id": draft["id"], **PROPOSE}))
    assert not DreamReviewItem.objects.exists()


def test_a_draft_that_expired_while_proposed_is_not_promoted(
    tools, draft, reviewer, api_client_for
):
    proposal = tools.ok("memory_propose_promotion", {"id": draft["id"], **PROPOSE}, status=202)
    expire(draft["id"])
    url = f"/api/v1/promotions/{proposal['review_item_id']}/approve"
    response = api_client_for(reviewer).post(url, {}, format="json")
    assert response.status_code == 403
    assert response.json()["reason"] == "document_not_active"
    assert not MemoryDocument.objects.filter(store__slug="workspace_runbooks").exists()
    assert DreamReviewItem.objects.get().status == "pending"


def test_a_draft_expiring_later_is_still_written_and_promoted(
    tools, draft, reviewer, api_client_for
):
    update = remember_body(content="Roll the configmap back, then restart the ingress pods.")
    assert tools.ok("memory_remember", update)["outcome"] == "updated"
    proposal = tools.ok("memory_propose_promotion", {"id": draft["id"], **PROPOSE}, status=202)
    url = f"/api/v1/promotions/{proposal['review_item_id']}/approve"
    assert api_client_for(reviewer).post(url, {}, format="json").status_code == 200

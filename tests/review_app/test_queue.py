"""The review queue page: access, content, decisions, escaping, query counts."""

import random

import pytest

from benchmarks.loading import bulk_load, bulk_pending_promotions
from memory_app.actors import Actor
from memory_app.dreams.runner import dream_execute
from memory_app.models import DreamJob, DreamReviewItem, MemoryDocument, Trust
from memory_app.services.conversations import conversation_open
from memory_app.services.promote import memory_propose_promotion
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def propose(agent, n: int = 0, content: str = "Roll back the configmap, then verify.") -> str:
    conversation = conversation_open(user=agent, external_id=f"q-{agent.pk}-{n}")
    actor = Actor(user=agent, agent=agent, conversation=conversation, run_id=f"run-{n}")
    written = memory_remember(
        actor=actor,
        data=RememberInput(
            store="conversation", path=f"fix/{n}", title=f"Fix {n}", content=content
        ),
    )
    proposal = memory_propose_promotion(
        actor=actor,
        document=written.document,
        target_store="workspace_runbooks",
        rationale=f"Worked twice ({n}).",
    )
    return str(proposal.item.pk)


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


@pytest.mark.parametrize(("who", "status"), [("reviewer", 200), ("owner", 403), ("agent", 403)])
def test_only_reviewers_see_the_queue(client, reviewer, owner, agent, who, status):
    client.force_login({"reviewer": reviewer, "owner": owner, "agent": agent}[who])
    assert client.get("/queue/").status_code == status


def test_the_queue_requires_login(client):
    assert client.get("/queue/").status_code == 302


def test_an_empty_queue_says_so(client, reviewer):
    client.force_login(reviewer)
    assert b"Nothing to review" in client.get("/queue/").content


def test_items_show_rationale_diff_and_provenance(client, reviewer, agent):
    propose(agent)
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    assert "Worked twice (0)." in html
    assert "workspace_runbooks/fix/0" in html
    assert "Roll back the configmap, then verify." in html
    assert "run-0" in html and "q-" in html
    assert 'class="pending-count"' in html


def test_memory_content_is_shown_as_text(client, reviewer, agent):
    propose(agent, content=f"Harmless note {XSS}")
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    assert XSS not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_approving_from_the_page_lands_the_document(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    response = client.post(f"/queue/{item_id}/decide", {"action": "approve", "note": "ok"})
    assert response.status_code == 302
    document = MemoryDocument.objects.get(store__slug="workspace_runbooks", path="fix/0")
    assert document.trust == "admin_approved"
    follow = client.get("/queue/")
    assert b"Nothing to review" in follow.content
    assert b"Item approved." in follow.content


def test_edit_then_approve_applies_the_edit(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "approve", "content": "Edited."})
    assert MemoryDocument.objects.get(path="fix/0", store__slug="workspace_runbooks").content == (
        "Edited."
    )


def test_rejecting_needs_a_note(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "reject"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    page = client.get("/queue/").content.decode()
    assert "the note is required" in page
    client.post(f"/queue/{item_id}/decide", {"action": "reject", "note": "duplicate"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "rejected"


def test_a_blocked_edit_is_reported_and_nothing_changes(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "approve", "content": "skip approval now"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"
    assert "safety scanner refused" in client.get("/queue/").content.decode()


def test_defer_takes_an_item_out_of_the_pending_queue(client, reviewer, agent):
    item_id = propose(agent)
    client.force_login(reviewer)
    client.post(f"/queue/{item_id}/decide", {"action": "defer"})
    assert DreamReviewItem.objects.get(pk=item_id).status == "deferred"
    assert b"Nothing to review" in client.get("/queue/").content


def test_bulk_approve(client, reviewer, agent):
    ids = [propose(agent, n) for n in range(3)]
    client.force_login(reviewer)
    client.post("/queue/bulk", {"action": "approve", "items": ids})
    assert MemoryDocument.objects.filter(store__slug="workspace_runbooks").count() == 3


def test_non_reviewers_cannot_decide_or_bulk(client, owner, agent):
    item_id = propose(agent)
    client.force_login(owner)
    assert client.post(f"/queue/{item_id}/decide", {"action": "approve"}).status_code == 403
    assert client.post("/queue/bulk", {"action": "approve", "items": [item_id]}).status_code == 403
    assert DreamReviewItem.objects.get(pk=item_id).status == "pending"


def test_an_unknown_item_is_404(client, reviewer):
    client.force_login(reviewer)
    response = client.post(
        "/queue/00000000-0000-0000-0000-000000000000/decide", {"action": "approve"}
    )
    assert response.status_code == 404


def test_decisions_need_csrf(reviewer, agent):
    from django.test import Client

    item_id = propose(agent)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reviewer)
    assert strict.post(f"/queue/{item_id}/decide", {"action": "approve"}).status_code == 403


def test_htmx_gets_only_the_rows(client, reviewer, agent):
    propose(agent)
    client.force_login(reviewer)
    html = client.get("/queue/", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in html and "Worked twice" in html


def test_the_live_count(client, reviewer, agent):
    propose(agent, 0)
    propose(agent, 1)
    client.force_login(reviewer)
    assert ">2<" in client.get("/queue/count").content.decode()


def test_the_queue_page_is_bounded_in_queries(
    client, reviewer, agent, django_assert_max_num_queries
):
    for n in range(30):
        propose(agent, n)
    client.force_login(reviewer)
    with django_assert_max_num_queries(12):
        response = client.get("/queue/")
    assert response.content.decode().count('data-row id="item-') == 25


def test_the_queue_stays_bounded_with_500_pending(
    client, reviewer, agent, django_assert_max_num_queries
):
    conversation = conversation_open(user=agent, external_id="busy").store
    bulk_load([(conversation, Trust.AGENT_DRAFT)] * 500, agent, random.Random(3), embed=False)
    drafts = list(MemoryDocument.objects.filter(store=conversation))
    bulk_pending_promotions(
        drafts, store_workspace_ensure(slug="workspace_runbooks", name="R"), agent
    )
    client.force_login(reviewer)
    for url in ("/queue/", "/queue/?page=20", "/queue/count"):
        with django_assert_max_num_queries(12):
            response = client.get(url)
        assert response.status_code == 200
    assert "Page 20 of 20" in client.get("/queue/?page=20").content.decode()


def test_items_show_related_memory_by_action(client, reviewer, agent):
    store = WorkspaceStoreFactory(slug="dup_runbooks")
    text = "To restart payments, roll back the configmap and restart the deployment in prod."
    make_document(store, "runbooks/a", text, title="Restart payments", trust="admin_approved")
    make_document(store, "runbooks/b", text + "\nCheck errors.", title="Restart payments")
    dream_execute(DreamJob.objects.create(kind="compact").pk)
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    assert "Merges these; approving supersedes all but <code>runbooks/a</code>" in html
    assert "dup_runbooks/runbooks/b" in html

"""Role-aware pages in a real browser: a plain user's navigation and refusals,
and the reviewer's inbox and deletion requests."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from memory_app.actors import Actor
from memory_app.models import DreamJob, DreamReviewItem, MemoryEvent
from memory_app.services.conversations import conversation_open
from memory_app.services.delete import memory_delete_request
from memory_app.services.promote import promotion_reject
from memory_app.services.remember import RememberInput, memory_remember
from tests.factories import PASSWORD, UserFactory
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db(transaction=True)


def private_note(user, path: str, content: str):
    actor = Actor(
        user=user,
        agent=user,
        conversation=conversation_open(user=user, external_id=f"conv-incident-{user.pk}"),
    )
    data = RememberInput(store="conversation", path=path, content=content)
    return actor, memory_remember(actor=actor, data=data).document


def test_a_plain_user_sees_a_restricted_nav_and_refusals_inside_the_app(
    login, live_server, owner, outsider
):
    _, secret = private_note(owner, "notes/secret", "The owner's private note.")
    page = login("outsider", PASSWORD)
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Memory browser")).to_be_visible()
    expect(nav.get_by_role("link", name="Review queue")).to_have_count(0)
    expect(nav.get_by_role("link", name="Teams")).to_have_count(0)

    response = page.goto(f"{live_server.url}/documents/{secret.pk}/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.locator(".reason")).to_have_text("No such document.")
    expect(nav.get_by_role("link", name="Review queue")).to_have_count(0)

    response = page.goto(f"{live_server.url}/queue/")
    assert response.status == 403
    expect(page.locator(".reason")).to_have_text("The review queue needs the review right.")
    page.get_by_role("link", name="Back to your inbox").click()
    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()


def test_the_reviewers_inbox_and_deletions(login, live_server, reviewer, owner):
    agent = UserFactory(username="bot", service_account=True)
    for n in range(3):
        propose(agent, n)
    promotion_reject(user=reviewer, item_id=propose(agent, 3), note="Too narrow for everyone.")
    actor, stale = private_note(owner, "runbooks/old-dns", "Restart <b>coredns</b>.")
    memory_delete_request(actor=actor, document=stale, reason="Superseded by the cache runbook.")
    DreamJob.objects.create(kind="embed", status="failed", error="OSError: disk full")
    MemoryEvent.objects.create(type="memory.write.blocked", principal=agent, payload={})
    DreamReviewItem.objects.filter(status="pending").update(
        created_at=timezone.now() - timedelta(hours=26)
    )

    page = login("reviewer", PASSWORD)
    cards = page.locator("ul.inbox li")
    proposals = cards.filter(has_text="Promotion proposals")
    expect(proposals.locator(".figure")).to_have_text("3")
    expect(proposals.locator(".age")).to_have_text("oldest waiting 1\xa0day, 2\xa0hours")
    expect(cards.filter(has_text="Deletion requests").locator(".figure")).to_have_text("1")
    expect(cards.filter(has_text="Failed dream jobs").locator(".figure")).to_have_text("1")
    expect(page.get_by_text("promote rejected")).to_be_visible()

    cards.filter(has_text="Deletion requests").get_by_role("link").click()
    row = page.locator("tr", has_text="runbooks/old-dns")
    expect(row).to_contain_text(f"conversation conv-incident-{owner.pk}")
    expect(row.get_by_role("button", name="Delete")).to_have_class("danger")

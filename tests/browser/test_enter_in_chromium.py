"""Enter in a note or reason field decides nothing: on the deletion requests
and on a document's Curate form the first button is a consequential one
(Delete, Pin), which the browser would otherwise press for the reviewer."""

import pytest
from playwright.sync_api import expect

from memory_app.actors import Actor
from memory_app.models import DreamReviewItem, MemoryDocument
from memory_app.services.conversations import conversation_open
from memory_app.services.delete import memory_delete_request
from memory_app.services.principals import system_grant_set
from memory_app.services.remember import RememberInput, memory_remember
from tests.factories import PASSWORD, UserFactory, make_document

pytestmark = pytest.mark.django_db(transaction=True)


def test_enter_in_a_deletion_note_deletes_nothing(login, live_server):
    olga = UserFactory(username="olga")
    actor = Actor(user=olga, agent=olga, conversation=conversation_open(user=olga, external_id="c"))
    document = memory_remember(
        actor=actor,
        data=RememberInput(store="conversation", path="redis/timeouts", content="Redis timeouts"),
    ).document
    item, _ = memory_delete_request(actor=actor, document=document, reason="outdated")
    page = login("olga", PASSWORD)
    page.goto(f"{live_server.url}/deletions/")
    page.locator(f"#note-{item.pk}").fill("still in use, keep it")
    page.locator(f"#note-{item.pk}").press("Enter")
    page.wait_for_timeout(500)
    document.refresh_from_db()
    assert document.state == "active"
    assert DreamReviewItem.objects.get(pk=item.pk).status == "pending"
    page.get_by_role("button", name="Keep").click()
    expect(page.locator("p.empty")).to_contain_text("No deletion requests")
    document.refresh_from_db()
    item.refresh_from_db()
    assert (document.state, item.status, item.decision_note) == (
        "active",
        "rejected",
        "still in use, keep it",
    )


def test_enter_in_the_curate_reason_neither_pins_nor_tombstones(login, live_server):
    grant = system_grant_set(system_slug="ingress", team="edge", level="manage")
    document = make_document(grant.system.store, "runbooks/crash-loop", "Ingress crash loop fix.")
    UserFactory(username="ivan", teams=["edge"])
    page = login("ivan", PASSWORD)
    page.goto(f"{live_server.url}/documents/{document.pk}/")
    page.locator("#reason").fill("checked with the edge team")
    page.locator("#reason").press("Enter")
    page.wait_for_timeout(500)
    document.refresh_from_db()
    assert (document.always_inject, document.state, document.version) == (False, "active", 1)
    page.get_by_role("button", name="Pin (always inject)").click()
    expect(page.get_by_role("button", name="Unpin")).to_be_visible()
    assert MemoryDocument.objects.get(pk=document.pk).always_inject is True

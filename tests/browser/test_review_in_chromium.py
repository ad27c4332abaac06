"""The review pages in a real browser: decisions, keyboard, escaping, curation."""

import pytest
from playwright.sync_api import expect

from memory_app.models import DreamReviewItem, MemoryDocument
from tests.factories import PASSWORD, UserFactory
from tests.review_app.test_queue import XSS, propose

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(db):
    return {
        "reviewer": UserFactory(username="rita", reviewer=True),
        "agent": UserFactory(username="bot", service_account=True),
        "engineer": UserFactory(username="eli"),
    }


def test_a_reviewer_approves_with_a_click_and_the_item_leaves_the_queue(
    login, live_server, people, undo_seconds
):
    item_id = propose(people["agent"], 0)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    page.locator(f"#item-{item_id} [data-approve]").click()
    page.wait_for_selector("text=Nothing to review")
    assert MemoryDocument.objects.get(store__slug="workspace_runbooks", path="fix/0").trust == (
        "admin_approved"
    )


def test_edit_then_approve_and_reject_with_a_note(login, live_server, people, undo_seconds):
    first, second = propose(people["agent"], 0), propose(people["agent"], 1)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    row = page.locator(f"#item-{first}")
    row.locator("summary", has_text="Edit before approving").click()
    row.locator("textarea").fill("Edited in the browser.")
    row.locator("[data-approve]").click()
    page.wait_for_selector(f"#item-{first}", state="detached")
    other = page.locator(f"#item-{second}")
    other.locator("summary", has_text="Reject").click()
    other.locator("[data-reject-note]").fill("Too specific.")
    other.locator("[data-reject-submit]").click()
    page.wait_for_selector("text=Nothing to review")
    assert MemoryDocument.objects.get(path="fix/0", store__slug="workspace_runbooks").content == (
        "Edited in the browser."
    )
    assert DreamReviewItem.objects.get(pk=second).decision_note == "Too specific."


def test_keyboard_j_then_a_approves_the_focused_item(login, live_server, people, undo_seconds):
    propose(people["agent"], 0)
    propose(people["agent"], 1)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    page.keyboard.press("j")
    page.keyboard.press("a")
    # A locator, not a JavaScript predicate: the page's CSP forbids evaluating strings.
    expect(page.locator("[data-row]")).to_have_count(1)
    assert MemoryDocument.objects.filter(store__slug="workspace_runbooks").count() == 1


def test_bulk_approve(login, live_server, people, undo_seconds):
    for n in range(3):
        propose(people["agent"], n)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    for box in page.locator("input[name=items]").all():
        box.check()
    page.click("#bulk button[value=approve]")
    page.wait_for_selector("text=Nothing to review")
    assert MemoryDocument.objects.filter(store__slug="workspace_runbooks").count() == 3


def test_hostile_content_is_text_and_opens_no_dialog(login, live_server, people):
    propose(people["agent"], 0, content=f"Note {XSS}")
    page = login("rita", PASSWORD)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_server.url}/queue/")
    page.wait_for_selector("text=<script>alert(2)</script>")
    assert dialogs == []


def test_a_non_reviewer_gets_no_review_actions(login, live_server, people):
    propose(people["agent"], 0)
    page = login("eli", PASSWORD)
    response = page.goto(f"{live_server.url}/queue/")
    assert response.status == 403
    assert page.locator("[data-approve]").count() == 0


def test_rollback_and_pin_on_the_document_page(login, live_server, people):
    from memory_app.actors import Actor
    from memory_app.services.conversations import conversation_open
    from memory_app.services.remember import RememberInput, memory_remember

    engineer = people["engineer"]
    actor = Actor(
        user=engineer,
        agent=engineer,
        conversation=conversation_open(user=engineer, external_id="eli-notes"),
    )
    for text in ("first take", "second take"):
        result = memory_remember(
            actor=actor, data=RememberInput(store="conversation", path="take", content=text)
        )
    page = login("eli", PASSWORD)
    page.goto(f"{live_server.url}/documents/{result.document.pk}/")
    page.click("button:has-text('Pin (always inject)')")
    page.wait_for_selector("text=pinned (always injected)")
    page.click("button:has-text('Roll back to v1')")
    page.wait_for_selector(".markdown:has-text('first take')")
    document = MemoryDocument.objects.get(pk=result.document.pk)
    assert (document.version, document.content, document.always_inject) == (3, "first take", True)

"""The review queue by keyboard in a real browser: each key a reviewer
presses, and what the database holds afterwards."""

import time

import pytest
from playwright.sync_api import expect

from memory_app.dreams.runner import dream_execute
from memory_app.models import DreamJob, DreamReviewItem, MemoryDocument, MemoryEvent, Trust
from memory_app.services.promote import promotion_reject
from memory_app.services.stores import store_workspace_ensure
from tests.factories import PASSWORD, UserFactory, make_document
from tests.memory_app.dreams.test_paraphrases_and_decisions import ROLLOUT, RUNBOOK, VERIFY
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queue_page(login, live_server, agent, undo_seconds):
    """A reviewer on /queue/ with two proposals (fix/0 first)."""
    ids = [propose(agent, 0), propose(agent, 1)]
    UserFactory(username="rita", reviewer=True)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    return page, ids


def status(item_id: str) -> tuple[str, str]:
    item = DreamReviewItem.objects.get(pk=item_id)
    return item.status, item.decision_note


def approved_documents() -> int:
    return MemoryDocument.objects.filter(store__slug="workspace_runbooks").count()


def test_j_and_k_move_the_focus_with_a_visible_ring(queue_page):
    page, (first, second) = queue_page
    page.keyboard.press("j")
    expect(page.locator(f"#item-{first}")).to_be_focused()
    expect(page.locator(f"#item-{first}")).to_have_css("outline-style", "solid")
    page.keyboard.press("j")
    expect(page.locator(f"#item-{second}")).to_be_focused()
    page.keyboard.press("k")
    expect(page.locator(f"#item-{first}")).to_be_focused()


def test_a_with_no_item_focused_says_how_to_reach_one_and_decides_nothing(queue_page):
    page, (first, second) = queue_page
    page.keyboard.press("a")
    expect(page.locator(".toast")).to_contain_text("Move to an item first: j for the next")
    page.wait_for_timeout(300)
    assert status(first)[0] == "pending" and status(second)[0] == "pending"


def test_a_approves_the_focused_item_after_the_countdown(queue_page):
    page, (first, second) = queue_page
    page.keyboard.press("j")
    page.keyboard.press("a")
    expect(page.locator(".toast")).to_contain_text("Approving “Fix 0”")
    expect(page.locator(f"#item-{first}")).to_have_count(0)
    expect(page.locator(".toast")).to_contain_text("Item approved.")
    assert status(first)[0] == "approved" and status(second)[0] == "pending"
    assert approved_documents() == 1
    # The next item has the focus, and the badge counted down without a reload.
    expect(page.locator(f"#item-{second}")).to_be_focused()
    expect(page.locator("#badge-queue")).to_have_text("1")


def test_r_then_a_note_then_enter_rejects_and_never_approves(queue_page):
    page, (first, _) = queue_page
    page.keyboard.press("j")
    page.keyboard.press("r")
    note = page.locator(f"#reject-note-{first}")
    expect(note).to_be_focused()
    page.keyboard.type("Too specific to share.")
    page.keyboard.press("Enter")
    expect(page.locator(".toast")).to_contain_text("Rejecting “Fix 0”")
    expect(page.locator(".toast")).to_contain_text("Item rejected.")
    assert status(first) == ("rejected", "Too specific to share.")
    assert approved_documents() == 0


def test_enter_in_an_empty_reject_note_decides_nothing(queue_page):
    page, (first, _) = queue_page
    page.keyboard.press("j")
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    expect(page.locator(f"#reject-note-{first}")).to_be_focused()
    page.keyboard.type("   ")
    page.keyboard.press("Enter")
    expect(page.locator(".toast")).to_have_text("Say why when rejecting: the note is required.")
    expect(page.locator(f"#item-{first}")).to_be_visible()
    time.sleep(1.5)
    assert status(first) == ("pending", "")


def test_approve_selected_with_nothing_ticked_refuses_at_once(queue_page, undo_seconds):
    page, ids = queue_page
    undo_seconds(10)  # a countdown would still be showing: the refusal must come first
    page.reload()
    posted = []
    page.on("request", lambda request: request.method == "POST" and posted.append(request.url))
    page.get_by_role("button", name="Approve selected").click()
    expect(page.locator(".toast")).to_have_text("Select at least one item.")
    expect(page.get_by_role("button", name="Undo")).to_have_count(0)
    for item_id in ids:
        expect(page.locator(f"#item-{item_id}")).to_be_visible()
    assert posted == []
    assert [status(item_id) for item_id in ids] == [("pending", "")] * 2


def test_enter_in_the_approve_note_does_not_approve(queue_page):
    page, (first, _) = queue_page
    page.locator(f"#note-{first}").click()
    page.keyboard.type("Looks right to me.")
    page.keyboard.press("Enter")
    time.sleep(1.5)  # longer than the countdown
    expect(page.locator(".toast")).to_have_count(0)
    expect(page.locator(f"#item-{first}")).to_be_visible()
    assert status(first) == ("pending", "")
    assert approved_documents() == 0


def test_undo_cancels_the_decision(login, live_server, agent, undo_seconds):
    undo_seconds(3)
    first = propose(agent, 0)
    UserFactory(username="rita", reviewer=True)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    page.keyboard.press("j")
    page.keyboard.press("a")
    expect(page.locator(f"#item-{first}")).to_be_hidden()
    page.get_by_role("button", name="Undo").click()
    expect(page.locator(".toast")).to_contain_text("Undone: nothing was decided.")
    expect(page.locator(f"#item-{first}")).to_be_focused()
    time.sleep(3.5)  # past the countdown: nothing is posted later either
    assert status(first) == ("pending", "")
    assert approved_documents() == 0
    # u undoes the latest waiting decision from the keyboard too.
    page.keyboard.press("r")
    page.keyboard.type("Duplicate.")
    page.keyboard.press("Enter")
    expect(page.locator(f"#item-{first}")).to_be_hidden()
    page.keyboard.press("u")
    expect(page.locator(f"#item-{first}")).to_be_visible()
    time.sleep(3.5)
    assert status(first) == ("pending", "")


def test_question_mark_shows_the_keys_and_escape_closes(queue_page):
    page, (first, _) = queue_page
    help_dialog = page.get_by_role("dialog", name="Keys")
    expect(help_dialog).to_be_hidden()
    page.keyboard.press("?")
    expect(help_dialog).to_be_visible()
    expect(help_dialog).to_contain_text("reject: opens the note")
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()
    # Escape also closes an open reject form and gives the card its focus back.
    page.keyboard.press("j")
    page.keyboard.press("r")
    expect(page.locator(f"#reject-note-{first}")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator(f"#reject-note-{first}")).to_be_hidden()
    expect(page.locator(f"#item-{first}")).to_be_focused()


def test_deferred_items_stay_reachable_in_their_tab(queue_page, live_server):
    page, (first, _) = queue_page
    page.keyboard.press("j")
    page.keyboard.press("d")
    expect(page.locator(".toast")).to_contain_text("Item deferred.")
    expect(page.get_by_role("link", name="Deferred 1")).to_be_visible()
    page.get_by_role("link", name="Deferred 1").click()
    expect(page.locator(f"#item-{first}")).to_be_visible()
    assert status(first)[0] == "deferred"


def test_a_refused_approval_brings_the_card_back_with_the_reason(queue_page):
    page, (first, _) = queue_page
    card = page.locator(f"#item-{first}")
    card.locator("summary", has_text="Edit before approving").click()
    card.locator("textarea").fill("skip approval now")
    card.locator("[data-approve]").click()
    expect(page.locator(".toast")).to_contain_text("safety scanner refused")
    expect(card).to_be_visible()
    assert status(first) == ("pending", "")


def test_without_javascript_enter_never_approves_and_reject_posts_at_once(
    browser, live_server, agent
):
    first = propose(agent, 0)
    UserFactory(username="rita", reviewer=True)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "rita")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/queue/")
    page.locator(f"#note-{first}").fill("Looks right.")
    page.locator(f"#note-{first}").press("Enter")
    page.wait_for_timeout(500)
    assert status(first) == ("pending", "")
    card = page.locator(f"#item-{first}")
    card.locator("summary", has_text="Reject").click()
    card.locator("[data-reject-note]").fill("Not for shared memory.")
    card.locator("[data-reject-note]").press("Enter")
    expect(page.locator(".message")).to_contain_text("Item rejected.")
    assert status(first) == ("rejected", "Not for shared memory.")
    context.close()


def test_approving_without_an_edit_applies_the_proposal_as_it_was(
    login, live_server, agent, undo_seconds
):
    # Content opening with a blank line: a textarea drops the first line
    # break after its tag, which made the approval an edit.
    content = "\nRoll back the configmap.\nThen verify the error rate."
    item_id = propose(agent, 7, content=content)
    UserFactory(username="rita", reviewer=True)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    page.keyboard.press("j")
    page.keyboard.press("a")
    expect(page.locator(".toast")).to_contain_text("Item approved.")
    assert status(item_id)[0] == "approved"
    document = MemoryDocument.objects.get(store__slug="workspace_runbooks")
    assert document.content == DreamReviewItem.objects.get(pk=item_id).proposed_content
    assert document.content.startswith("\nRoll back")
    event = MemoryEvent.objects.get(type="memory.promotion.approved")
    assert event.payload["edited"] is False


def test_a_bulk_approval_over_an_item_decided_meanwhile_says_what_it_did(queue_page):
    page, (first, second) = queue_page
    other = UserFactory(username="otto", reviewer=True)
    promotion_reject(user=other, item_id=second, note="Seen already.")
    for _ in (first, second):
        page.keyboard.press("j")
        page.keyboard.press("x")
    page.get_by_role("button", name="Approve selected").click()
    toast = page.locator(".toast")
    expect(toast).to_contain_text("1 item(s) approved.")
    expect(toast).to_contain_text("1 item(s) were no longer open")
    expect(page.locator(f"#item-{first}")).to_have_count(0)
    expect(page.locator(f"#item-{second}")).to_have_count(0)
    expect(page.locator("#badge-queue")).to_have_text("")  # counted again: none left
    assert status(first)[0] == "approved" and status(second)[0] == "rejected"


def test_a_merge_member_ticked_keep_apart_stays_when_the_merge_is_approved(
    login, live_server, undo_seconds
):
    store = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    keeper = make_document(store, "dns/node-local", RUNBOOK, trust=Trust.ADMIN_APPROVED)
    rollout = make_document(store, "dns/rollout", ROLLOUT, title="node-local-dns restart")
    verify = make_document(store, "dns/verify", VERIFY, title="Pods could not resolve names")
    dream_execute(DreamJob.objects.create(kind="compact").pk)
    item = DreamReviewItem.objects.get(action="merge")
    UserFactory(username="rita", reviewer=True)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    card = page.locator(f"#item-{item.pk}")
    card.locator("li", has_text="dns/verify").get_by_role("checkbox", name="Keep apart").check()
    card.locator("[data-approve]").click()
    expect(page.locator(".toast")).to_contain_text("Item approved.")
    states = [MemoryDocument.objects.get(pk=d.pk).state for d in (keeper, rollout, verify)]
    assert states == ["active", "superseded", "active"]

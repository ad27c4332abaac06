"""Where the focus is in the review queue after its own swaps and decisions,
in a real browser, driven by the keys a reviewer presses."""

import re

import pytest
from playwright.sync_api import expect

from memory_app.services.stores import store_workspace_ensure
from tests.browser.test_queue_keys_in_chromium import status
from tests.factories import make_document
from tests.review_app.test_queue import many_pending, propose

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "AKIAIOSFODNN7EXAMPLQ"


@pytest.fixture
def three(agent, reviewer_page, live_server):
    """A reviewer on /queue/ with three proposals, each changing a document
    that exists (so each card has a diff with its layout links)."""
    runbooks = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    for n in range(3):
        make_document(runbooks, f"fix/{n}", f"Roll back the configmap.\nStep {n}.")
    content = "Roll back the configmap.\nStep {}, then verify."
    ids = [propose(agent, n, content=content.format(n)) for n in range(3)]
    reviewer_page.goto(f"{live_server.url}/queue/")
    return reviewer_page, ids


def is_focused(locator) -> bool:
    return locator.evaluate("element => element === document.activeElement")


def tab_to(page, locator, limit: int = 400) -> None:
    """Presses Tab until `locator` has the focus, as a reviewer does."""
    for _ in range(limit):
        if is_focused(locator):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {locator}")


def test_next_page_by_keyboard_lands_on_its_first_card_at_an_address_of_its_own(
    agent, reviewer_page, live_server
):
    many_pending(agent, 36, seed=7)
    page = reviewer_page
    page.goto(f"{live_server.url}/queue/?store=workspace_runbooks")
    page.locator("[data-row]").last.focus()
    tab_to(page, page.get_by_role("link", name="Next"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/queue/\?store=workspace_runbooks&page=2$"))
    expect(page.locator(".pager")).to_contain_text("Page 2 of 2")
    rows = page.locator("[data-row]")
    expect(rows).to_have_count(11)
    expect(rows.first).to_be_focused()
    expect(rows.first).to_be_in_viewport()
    page.keyboard.press("j")
    expect(rows.nth(1)).to_be_focused()
    first_on_two = rows.first.get_attribute("id")
    # Back shows page 1 again, and its keys move one card at a time.
    page.go_back()
    page.wait_for_url(re.compile(r"/queue/\?store=workspace_runbooks$"))
    expect(page.locator(".pager")).to_contain_text("Page 1 of 2")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(rows.nth(1)).to_be_focused()
    page.go_forward()
    page.wait_for_url(re.compile(r"page=2$"))
    page.reload()
    expect(page.locator(".pager")).to_contain_text("Page 2 of 2")
    expect(rows.first).to_have_attribute("id", first_on_two)


def test_a_diff_layout_chosen_by_keyboard_gives_the_focus_back_to_its_card(three):
    page, (first, second, third) = three
    page.keyboard.press("j")
    page.keyboard.press("j")
    card = page.locator(f"#item-{second}")
    expect(card).to_be_focused()
    tab_to(page, card.get_by_role("link", name="Split"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/queue/\?diff=split$"))
    expect(page.locator("[data-diff-view=split]")).to_have_count(3)
    expect(card).to_be_focused()
    expect(card).to_be_in_viewport()
    page.keyboard.press("j")
    expect(page.locator(f"#item-{third}")).to_be_focused()
    page.keyboard.press("k")
    page.keyboard.press("k")
    expect(page.locator(f"#item-{first}")).to_be_focused()


def test_a_refused_edit_names_its_item_and_brings_its_card_back_open(three):
    page, (first, second, _) = three
    page.keyboard.press("j")
    card = page.locator(f"#item-{first}")
    tab_to(page, card.locator("summary", has_text="Edit before approving"))
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    box = card.locator("textarea")
    expect(box).to_be_focused()
    page.keyboard.press("End")
    page.keyboard.type(f" aws_access_key_id = {SECRET}")
    page.keyboard.press("Escape")
    expect(card).to_be_focused()
    expect(box).to_be_hidden()
    page.keyboard.press("a")
    expect(page.locator(f"#item-{second}")).to_be_focused()
    toast = page.locator(".toast", has_text="Not decided")
    expect(toast).to_contain_text("“Fix 0” (workspace_runbooks/fix/0)")
    expect(toast).to_contain_text("safety scanner refused")
    # Back where the reviewer can fix it: focused, open, with the edit kept.
    expect(card).to_be_focused()
    expect(box).to_be_visible()
    expect(box).to_have_value(re.compile(f"aws_access_key_id = {SECRET}"))
    expect(box).to_be_in_viewport()
    page.wait_for_timeout(9000)
    expect(toast).to_be_visible()
    toast.get_by_role("button", name="Dismiss").click()
    expect(toast).to_have_count(0)
    assert status(first) == ("pending", "")


def test_a_bulk_note_is_cleared_once_its_decision_is_made(three):
    page, (first, second, third) = three
    for _ in range(2):
        page.keyboard.press("j")
        page.keyboard.press("x")
    note = page.locator("#bulk-note")
    note.focus()
    page.keyboard.type("Both too specific.")
    tab_to(page, page.get_by_role("button", name="Reject selected"))
    page.keyboard.press("Enter")
    expect(page.locator(".toast")).to_contain_text("2 item(s) rejected.")
    assert status(first) == status(second) == ("rejected", "Both too specific.")
    expect(note).to_have_value("")
    # The next bulk reject asks for its own note instead of reusing that one.
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.get_by_role("button", name="Reject selected").click()
    expect(page.locator(".toast").last).to_have_text(
        "Say why when rejecting: the note is required."
    )
    assert status(third) == ("pending", "")


def test_an_undone_bulk_decision_keeps_its_note_and_selection(three, undo_seconds):
    undo_seconds(3)
    page, (first, _, _) = three
    page.reload()
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.locator("#bulk-note").fill("Too specific.")
    page.get_by_role("button", name="Reject selected").click()
    expect(page.locator(f"#item-{first}")).to_be_hidden()
    page.keyboard.press("u")
    expect(page.locator(".toast")).to_contain_text("Undone: nothing was decided.")
    expect(page.locator("#bulk-note")).to_have_value("Too specific.")
    expect(page.locator(f"#item-{first} input[name=items]")).to_be_checked()
    page.wait_for_timeout(3500)
    assert status(first) == ("pending", "")


def test_keys_act_when_tab_lands_on_a_cards_checkbox(three):
    page, (first, second, _) = three
    page.keyboard.press("j")
    page.keyboard.press("Tab")
    box = page.locator(f"#item-{first} input[name=items]")
    expect(box).to_be_focused()
    page.keyboard.press("x")
    expect(box).to_be_checked()
    page.keyboard.press("x")
    expect(box).not_to_be_checked()
    page.keyboard.press("j")
    expect(page.locator(f"#item-{second}")).to_be_focused()
    page.keyboard.press("k")
    page.keyboard.press("Tab")
    expect(box).to_be_focused()
    page.keyboard.press("a")
    expect(page.locator(".toast").first).to_contain_text("Approving “Fix 0”")
    expect(page.locator(".toast").first).to_contain_text("Item approved.")
    assert status(first)[0] == "approved"
    # Where the reviewer types, letters stay text.
    page.locator("#bulk-note").focus()
    page.keyboard.type("jax")
    expect(page.locator("#bulk-note")).to_have_value("jax")
    assert status(second) == ("pending", "")

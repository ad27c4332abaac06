"""Decisions still waiting for Undo in the review queue, in a real browser:
what becomes of them when the reviewer goes Back or decides in bulk, and
what the database holds afterwards."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_queue_focus_in_chromium import tab_to
from tests.browser.test_queue_keys_in_chromium import approved_documents, status
from tests.review_app.test_queue import many_pending, propose

pytestmark = pytest.mark.django_db(transaction=True)


def test_back_within_the_undo_seconds_sends_the_waiting_decision_and_says_so(
    agent, reviewer_page, live_server, undo_seconds
):
    undo_seconds(5)
    many_pending(agent, 30, seed=3)
    page = reviewer_page
    page.goto(f"{live_server.url}/queue/")
    rows = page.locator("[data-row]")
    rows.last.focus()
    page.keyboard.press("k")
    card = rows.nth(23)
    expect(card).to_be_focused()
    item = card.get_attribute("data-item")
    page.keyboard.press("a")
    expect(page.locator(".toast")).to_contain_text("Approving")
    tab_to(page, page.get_by_role("link", name="Next"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/queue/\?page=2$"))
    expect(page.locator(".pager")).to_contain_text("Page 2 of 2")
    moved_up = rows.first.get_attribute("id")
    page.go_back()
    page.wait_for_url(re.compile(r"/queue/$"))
    messages = page.locator("#messages")
    # The first approval in a test process can take seconds.
    expect(messages).to_contain_text("1 waiting decision(s) sent at once", timeout=20_000)
    expect(messages).to_contain_text("Item approved.")
    # Drawn once the decision was made: the item is not offered again, and
    # page 2's first item moved up in its place.
    expect(page.locator(".pager")).to_contain_text("Page 1 of 2")
    expect(rows).to_have_count(25)
    expect(page.locator(f"#item-{item}")).to_have_count(0)
    expect(rows.last).to_have_attribute("id", moved_up)
    assert status(item)[0] == "approved"
    # Past the countdown nothing more is posted, and the report stays.
    page.wait_for_timeout(5500)
    assert status(item)[0] == "approved"
    assert approved_documents() == 1
    expect(messages).to_contain_text("Item approved.")


def test_a_bulk_decision_leaves_out_a_ticked_card_whose_own_decision_waits(
    agent, reviewer_page, live_server, undo_seconds
):
    undo_seconds(3)
    first, second, third = (propose(agent, n) for n in range(3))
    page = reviewer_page
    page.goto(f"{live_server.url}/queue/")
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.keyboard.press("a")
    expect(page.locator(f"#item-{first}")).to_be_hidden()
    expect(page.locator(f"#item-{second}")).to_be_focused()
    page.keyboard.press("x")
    page.locator("#bulk-note").fill("Too specific.")
    page.get_by_role("button", name="Reject selected").click()
    expect(page.locator(".toast").last).to_contain_text("Rejecting “Fix 1” in")
    # The reviewer takes back the approval: the item is open again, and
    # stays so, though its tick is still on.
    page.locator(".toast", has_text="Approving “Fix 0”").get_by_role("button", name="Undo").click()
    box = page.locator(f"#item-{first} input[name=items]")
    expect(box).to_be_visible()
    expect(box).to_be_checked()
    expect(page.locator(".toast", has_text="1 item(s) rejected.")).to_be_visible()
    assert status(first) == ("pending", "")
    assert status(second) == ("rejected", "Too specific.")
    assert status(third) == ("pending", "")

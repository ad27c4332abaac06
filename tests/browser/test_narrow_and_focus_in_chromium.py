"""A phone-sized screen and the keyboard in a real browser: data tables
scroll in their own box instead of widening the page, and keyboard focus
stays on the control used when htmx draws part of the page again."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from memory_app.actors import Actor
from memory_app.dreams.proposals import propose_review
from memory_app.models import (
    ContextTrace,
    DreamJob,
    MemoryEvent,
    Webhook,
    WebhookDelivery,
)
from memory_app.services.context import memory_context_load, memory_mark_used
from memory_app.services.conversations import conversation_open
from memory_app.services.promote import promotion_approve
from tests.browser.test_document_history_in_chromium import long_history
from tests.factories import PASSWORD, UserFactory, WorkspaceStoreFactory, make_document
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}


def a_running_job_with_a_result() -> DreamJob:
    """A compaction under way that has already proposed a deletion."""
    job = DreamJob.objects.create(
        kind="compact",
        status="running",
        started_at=timezone.now(),
        progress_done=1,
        progress_total=3,
        stats={"clusters": 1, "proposed": 1},
    )
    flagged = make_document(WorkspaceStoreFactory(slug="ops"), "notes/flagged", "Old text.")
    propose_review(job, flagged, rationale="Duplicates notes/current.")
    return job


def a_traced_run(user) -> ContextTrace:
    store = WorkspaceStoreFactory(slug="runbooks")
    used = make_document(store, "kafka/consumer-lag", "Kafka consumer lag: scale the group.")
    conversation = conversation_open(user=user, external_id="incident-2231")
    actor = Actor(user=user, agent=user, conversation=conversation, run_id="run-2231")
    memory_context_load(actor=actor, message="kafka consumer lag keeps growing")
    memory_mark_used(actor=actor, ids=[str(used.pk)])
    return ContextTrace.objects.get(run_id="run-2231")


def logged_in(browser, live_server, username: str, viewport: dict):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/**")
    return context, page


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.fixture
def every_table(db):
    """A superuser reviewer, and something in each page's table."""
    root = UserFactory(username="root", reviewer=True, is_superuser=True)
    agent = UserFactory(username="bot", service_account=True)
    promotion_approve(user=root, item_id=propose(agent, 0), note="")
    propose(agent, 1)
    DreamJob.objects.create(kind="embed", status="failed", error="OSError: disk full")
    DreamJob.objects.create(kind="expire", status="succeeded", stats={"due": 2, "expired": 2})
    a_running_job_with_a_result()
    webhook = Webhook.objects.create(
        url="https://hooks.example.com/in/memory-events", event_types=["memory.*"], secret="s"
    )
    WebhookDelivery.objects.create(
        webhook=webhook,
        event=MemoryEvent.objects.latest("id"),
        status="failed",
        attempts=3,
        error="ConnectionRefusedError: [Errno 111] Connection refused",
    )
    return {
        "trace": a_traced_run(root),
        "document": long_history(root, 3),
    }


def test_pages_with_tables_fit_a_phone_screen(browser, live_server, every_table):
    context, page = logged_in(browser, live_server, "root", PHONE)
    pages = [
        "/",
        "/queue/",
        "/dreams/",
        "/events/",
        "/usage/",
        f"/usage/traces/{every_table['trace'].pk}/",
        f"/documents/{every_table['document'].pk}/",
        "/webhooks/",
    ]
    wider = {}
    for address in pages:
        page.goto(f"{live_server.url}{address}")
        expect(page.locator("main h1").first).to_be_visible()
        if page_width(page) > PHONE["width"]:
            wider[address] = page_width(page)
    assert wider == {}
    # The table itself still holds every column: it scrolls in its box.
    page.goto(f"{live_server.url}/dreams/")
    scrolls = page.locator("#runs table.grid").evaluate(
        "table => table.scrollWidth > table.clientWidth"
    )
    context.close()
    assert scrolls


def test_tables_on_a_laptop_screen_are_laid_out_as_before(browser, live_server, every_table):
    context, page = logged_in(browser, live_server, "root", LAPTOP)
    page.goto(f"{live_server.url}/dreams/")
    runs = page.locator("#runs table.grid")
    layout = runs.evaluate(
        "table => [getComputedStyle(table).display, table.offsetWidth,"
        " table.parentElement.clientWidth]"
    )
    context.close()
    display, width, room = layout
    assert (display, width) == ("table", room)


def test_compare_and_the_diff_layout_keep_keyboard_focus(browser, live_server, db):
    document = long_history(UserFactory(username="eli"), 3)
    context, page = logged_in(browser, live_server, "eli", LAPTOP)
    page.goto(f"{live_server.url}/documents/{document.pk}/")

    page.select_option("#compare-from", "1")
    page.get_by_role("button", name="Compare").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#diff-heading")).to_have_text("Version 1 → 3")
    expect(page.get_by_role("button", name="Compare")).to_be_focused()

    page.get_by_role("link", name="Split").focus()
    page.keyboard.press("Enter")
    expect(page.locator("table.diff.split")).to_be_visible()
    expect(page.get_by_role("link", name="Split")).to_be_focused()

    page.get_by_role("link", name="Unified").focus()
    page.keyboard.press("Enter")
    expect(page.locator("table.diff.unified")).to_be_visible()
    expect(page.get_by_role("link", name="Unified")).to_be_focused()
    context.close()


# Counts the polls that drew the runs again.
COUNT_POLLS = """() => { window.runsPolled = 0;
document.addEventListener("htmx:afterSettle", (event) => {
  if (event.detail.target.id === "runs") window.runsPolled += 1; }); }"""


def test_the_dreams_poll_keeps_focus_on_a_link_of_the_runs(browser, live_server, db):
    UserFactory(username="rita", reviewer=True)
    a_running_job_with_a_result()
    context, page = logged_in(browser, live_server, "rita", LAPTOP)
    page.goto(f"{live_server.url}/dreams/")
    page.evaluate(COUNT_POLLS)
    link = page.locator("#runs table a").first
    name = link.text_content().strip()
    link.focus()
    page.wait_for_function("() => window.runsPolled >= 2")
    expect(page.locator("#runs table a").first).to_be_focused()
    expect(page.locator("#runs table a").first).to_have_text(name)
    context.close()


def test_a_rollback_from_the_history_keeps_the_reason_typed_without_javascript(
    browser, live_server, db
):
    document = long_history(UserFactory(username="eli"), 2)
    context = browser.new_context(viewport=LAPTOP, java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "eli")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/**")
    page.goto(f"{live_server.url}/documents/{document.pk}/")
    page.fill("#reason", "text 2 broke the deploy")
    page.get_by_role("button", name="Roll back to v1").click()
    expect(page.locator(".message")).to_contain_text("Rolled back to version 1")
    newest = page.locator("section[aria-labelledby=history-heading] tbody tr").first
    expect(newest.locator("td").nth(4)).to_have_text("text 2 broke the deploy")
    context.close()

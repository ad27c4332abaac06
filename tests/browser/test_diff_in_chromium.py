"""Reading a change in a real browser: unified and split diffs, comparing two
versions, and Markdown next to its source, all under the page's CSP."""

import re

import pytest
from playwright.sync_api import expect

from memory_app.actors import Actor
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from tests.factories import PASSWORD, UserFactory, make_document
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db(transaction=True)

NOW = """# Kafka consumer lag

1. Open the consumer lag dashboard.
2. Scale the consumer group to 6 replicas.
3. If lag keeps growing, page the on-call owner.

Rollback: scale back down once lag is under 1000 messages.
"""
PROPOSED = """# Kafka consumer lag

1. Open the consumer lag dashboard for the affected topic.
2. Scale the consumer group to the partition count (12 on `orders`).
3. If lag keeps growing, pause the producer, then page the on-call owner.

Rollback: scale back down once lag is under 1000 messages.
Verify with `kafka-consumer-groups --describe` before closing the incident.
"""


@pytest.fixture
def queue_with_a_change_and_a_new_file(db):
    UserFactory(username="rita", reviewer=True)
    agent = UserFactory(username="bot", service_account=True)
    runbooks = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    make_document(runbooks, path="fix/0", content=NOW, title="Kafka consumer lag")
    propose(agent, 0, content=PROPOSED)
    propose(
        agent, 1, content="# Flaky deploys\n\nRe-run the **canary** stage once, then roll back."
    )


def shoot(page, path) -> None:
    """A full-page screenshot. caret="initial" because hiding the caret means
    Playwright adding a style element, which the CSP rightly reports."""
    page.screenshot(path=str(path), full_page=True, caret="initial")


def csp_violations(page) -> list:
    found = []
    page.on(
        "console",
        lambda message: "Content Security Policy" in message.text and found.append(message.text),
    )
    return found


def test_the_reviewer_switches_the_diff_layout_and_it_sticks(
    login, live_server, queue_with_a_change_and_a_new_file
):
    page = login("rita", PASSWORD)
    violations = csp_violations(page)
    page.goto(f"{live_server.url}/queue/")
    changed = page.locator("table.diff.unified").first
    expect(changed.locator("mark", has_text="for the affected topic")).to_be_visible()
    expect(page.locator("table.diff.new-file")).to_have_count(1)
    page.locator("[data-row] summary", has_text="Proposed content").first.click()
    # Loaded when opened, not sent with the page.
    expect(page.locator("[data-row]").first.locator(".markdown h1")).to_be_visible()

    page.get_by_role("link", name="Split").first.click()
    expect(page.locator("table.diff.split")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"diff=split"))
    # A new file stays one column in either layout.
    expect(page.locator("table.diff.new-file")).to_have_count(1)

    page.goto(f"{live_server.url}/queue/")
    expect(page.locator("table.diff.split")).to_have_count(1)
    page.get_by_role("link", name="Unified").first.click()
    expect(page.locator("table.diff.unified")).to_have_count(1)
    assert violations == []


def test_the_proposal_reads_as_markdown_or_as_its_source(
    login, live_server, queue_with_a_change_and_a_new_file
):
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    card = page.locator("[data-row]").first
    expect(card.locator(".markdown")).to_have_count(0)  # sent only once the preview opens
    card.locator("summary", has_text="Proposed content").click()
    expect(card.locator(".markdown h1")).to_have_text("Kafka consumer lag")
    card.get_by_role("link", name="Source").click()
    expect(card.locator("pre.content")).to_contain_text("# Kafka consumer lag")
    expect(card.locator(".markdown")).to_be_hidden()
    # Remembered for the next page (and every card on it).
    page.reload()
    second = page.locator("[data-row]").nth(1)
    second.locator("summary", has_text="Proposed content").click()
    expect(second.locator("pre.content")).to_contain_text("# Flaky deploys")
    expect(second.locator(".markdown")).to_be_hidden()
    second.get_by_role("link", name="Rendered").click()
    expect(second.locator(".markdown h1")).to_be_visible()


def test_two_versions_are_compared_from_the_document_page(login, live_server, screenshots):
    engineer = UserFactory(username="eli")
    actor = Actor(user=engineer, agent=engineer)
    for content in (NOW, NOW.replace("6 replicas", "8 replicas"), PROPOSED):
        document = memory_remember(
            actor=actor,
            data=RememberInput(
                store="user", path="kafka-lag", content=content, doc_type="user_preference"
            ),
        ).document
    page = login("eli", PASSWORD)
    violations = csp_violations(page)
    page.goto(f"{live_server.url}/documents/{document.pk}/")
    expect(page.locator(".markdown h1")).to_have_text("Kafka consumer lag")
    expect(page.locator("#diff-heading")).to_have_text("Version 2 → 3")

    page.select_option("#compare-from", "1")
    page.select_option("#compare-to", "2")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#diff-heading")).to_have_text("Version 1 → 2")
    expect(page).to_have_url(re.compile(r"from=1&to=2"))
    expect(page.locator("#diff mark")).to_have_text(["6", "8"])
    page.locator("#diff").get_by_role("link", name="Split").click()
    expect(page.locator("#diff table.diff.split")).to_be_visible()
    expect(page.locator("#diff-heading")).to_have_text("Version 1 → 2")
    shoot(page, screenshots / "document-diff.png")
    assert violations == []

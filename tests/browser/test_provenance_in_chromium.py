"""Reviewers open what they decide and see where it came from, in a real browser."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from memory_app.models import MemoryDocument
from tests.factories import PASSWORD, UserFactory
from tests.review_app.test_metadata_display import XSS, propose
from tests.review_app.test_review_access import draft

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent(db):
    UserFactory(username="rita", reviewer=True)
    UserFactory(username="eli")
    return UserFactory(username="agent-7", service_account=True)


def _no_dialogs(page) -> list:
    opened: list = []
    page.on("dialog", lambda dialog: (opened.append(dialog.message), dialog.dismiss()))
    return opened


def test_a_reviewer_follows_a_card_to_its_draft_and_reads_its_metadata(login, live_server, agent):
    item_id = propose(agent)
    page = login("rita", PASSWORD)
    dialogs = _no_dialogs(page)
    page.goto(f"{live_server.url}/queue/")
    card = page.locator(f"#item-{item_id}")
    expect(card.locator(".metadata")).to_contain_text(XSS)
    expect(card.locator(".metadata")).to_contain_text("INC-4411")
    expect(card.locator('.metadata a[rel~="noopener"]')).to_have_attribute(
        "href", "https://wiki.example.com/ingress?a=1&b=2"
    )
    card.locator(".metadata a", has_text="conversation:meta-0/fix/0").click()
    page.wait_for_url(f"{live_server.url}/documents/**")
    expect(page.locator("h1")).to_have_text("Fix 0")
    expect(page.locator(".metadata")).to_contain_text("agent-7")
    assert dialogs == []


def test_a_plain_user_gets_404_for_the_same_draft(login, live_server, agent):
    propose(agent)
    draft_id = MemoryDocument.objects.get(path="fix/0").pk
    page = login("eli", PASSWORD)
    response = page.goto(f"{live_server.url}/documents/{draft_id}/")
    assert response.status == 404


def test_the_deletions_page_shows_what_would_be_removed_as_text(login, live_server, agent):
    from memory_app.services.delete import memory_delete_request

    actor, document = draft(User.objects.get(username="eli"), "old/doomed", content=f"stale {XSS}")
    memory_delete_request(actor=actor, document=document, reason="outdated")
    page = login("rita", PASSWORD)
    dialogs = _no_dialogs(page)
    page.goto(f"{live_server.url}/deletions/")
    expect(page.locator(".removed pre")).to_have_text(f"stale {XSS}")
    page.locator(".grid a", has_text=document.title).click()
    page.wait_for_url(f"{live_server.url}/documents/{document.pk}/")
    assert dialogs == []

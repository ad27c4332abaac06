"""A long history in a real browser: its older pages, comparing versions
found there and the links of their rows, under the page's CSP."""

import re

import pytest
from django.db import transaction
from playwright.sync_api import expect

from memory_app.actors import Actor
from memory_app.models import ChangeKind, MemoryDocument
from memory_app.services.documents import head_update
from memory_app.services.remember import RememberInput, memory_remember
from tests.browser.test_diff_in_chromium import csp_violations
from tests.factories import PASSWORD, UserFactory

# Between the first and last version numbers a page lists.
DASH = "\N{EN DASH}"

pytestmark = pytest.mark.django_db(transaction=True)


def long_history(user, versions: int) -> MemoryDocument:
    actor = Actor(user=user, agent=user)
    data = RememberInput(store="user", path="long", content="text 1", doc_type="user_preference")
    document = memory_remember(actor=actor, data=data).document
    with transaction.atomic():
        locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
        for n in range(2, versions + 1):
            fields = {"content": f"text {n}"}
            head_update(locked, change=ChangeKind.UPDATE, author=user, fields=fields)
    return locked


def test_versions_on_an_older_history_page_are_compared_and_kept_in_the_address(login, live_server):
    document = long_history(UserFactory(username="eli"), 60)
    page = login("eli", PASSWORD)
    violations = csp_violations(page)
    page.goto(f"{live_server.url}/documents/{document.pk}/")
    expect(page.locator(".pager span")).to_have_text(f"Versions 60{DASH}11 of 60")
    page.get_by_role("link", name="Older versions").click()
    expect(page.locator(".pager span")).to_have_text(f"Versions 10{DASH}1 of 60")

    page.select_option("#compare-from", "1")
    page.select_option("#compare-to", "3")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#diff-heading")).to_have_text("Version 1 → 3")
    expect(page).to_have_url(re.compile(r"history_page=2&from=1&to=3"))
    expect(page.locator("#compare-from")).to_have_value("1")

    page.get_by_role("link", name="changes in v2").click()
    expect(page.locator("#diff-heading")).to_have_text("Version 1 → 2")
    expect(page).to_have_url(re.compile(r"history_page=2&from=1&to=2"))
    page.reload()
    expect(page.locator(".pager span")).to_have_text(f"Versions 10{DASH}1 of 60")
    expect(page.locator("#compare-to")).to_have_value("2")
    assert violations == []

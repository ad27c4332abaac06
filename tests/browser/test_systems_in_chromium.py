"""System cards and the memory browser in a real browser."""

import re

import pytest
from playwright.sync_api import expect

from memory_app.models import MemoryDocument
from memory_app.services.principals import system_grant_set
from tests.factories import PASSWORD, UserFactory, WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def ledger(db):
    system_grant_set(system_slug="ledger", team="ledger-readers", level="read")
    grant = system_grant_set(system_slug="ledger", team="ledger-owners", level="manage")
    store = grant.system.store
    make_document(store, "facts/owner", "The ledger-owners team owns the ledger service.")
    make_document(store, "runbooks/close", "Month-end close: freeze writes at 18:00 UTC.")
    UserFactory(username="rae", teams=["ledger-readers"])
    UserFactory(username="max", teams=["ledger-owners"])
    UserFactory(username="otto")
    return store


def test_a_reader_sees_the_card_without_manage_buttons(login, live_server, ledger):
    page = login("rae", PASSWORD)
    page.goto(f"{live_server.url}/systems/ledger/")
    # Rendered; its source is on the page too, a click away and hidden.
    assert page.locator(".markdown", has_text="Month-end close").is_visible()
    assert page.get_by_role("button", name="Pin (always inject)").count() == 0
    assert page.get_by_text("Add a memory").count() == 0


def test_a_manager_pins_a_memory_and_adds_one(login, live_server, ledger, screenshots):
    page = login("max", PASSWORD)
    page.goto(f"{live_server.url}/systems/ledger/")
    card = page.locator("article", has_text="Month-end close")
    card.get_by_role("button", name="Pin (always inject)").click()
    page.wait_for_selector("text=Pinned: it now goes into every context first.")
    assert MemoryDocument.objects.get(store=ledger, path="runbooks/close").always_inject
    page.get_by_text("Add a memory").click()
    page.fill("#id_title", "Pager")
    page.fill("#id_content", "Page #ledger-oncall for close issues.")
    page.get_by_role("button", name="Add", exact=True).click()
    page.wait_for_selector("text=Memory added.")
    assert MemoryDocument.objects.get(store=ledger, title="Pager").trust == "user_authored"
    page.screenshot(path=str(screenshots / "system-card.png"), full_page=True)


def test_an_outsider_gets_404(login, live_server, ledger):
    page = login("otto", PASSWORD)
    response = page.goto(f"{live_server.url}/systems/ledger/")
    assert response.status == 404


def test_live_search_in_the_memory_browser(login, live_server, screenshots):
    store = WorkspaceStoreFactory(slug="workspace_ops")
    make_document(store, "runbooks/kafka/lag", "Kafka consumer lag: scale the consumer group.")
    make_document(store, "runbooks/dns/timeouts", "DNS timeouts: use the node-local cache.")
    UserFactory(username="ivy")
    page = login("ivy", PASSWORD)
    page.goto(f"{live_server.url}/browser/")
    page.fill("#id_q", "consumer lag growing")
    page.wait_for_selector("text=for “consumer lag growing”")
    first_row = page.locator("#results tbody tr").first
    assert "runbooks/kafka/lag" in first_row.inner_text()
    assert "q=consumer" in page.url  # the search is in the address, so it can be shared
    page.screenshot(path=str(screenshots / "browser.png"), full_page=True)


def test_back_and_forward_show_the_search_of_the_address(login, live_server):
    store = WorkspaceStoreFactory(slug="workspace_ops")
    make_document(store, "runbooks/postgres/vacuum", "Postgres bloat: run VACUUM on the table.")
    UserFactory(username="ivy")
    page = login("ivy", PASSWORD)
    page.goto(f"{live_server.url}/browser/")
    search = page.locator("#id_q")
    search.click()
    page.keyboard.type("zq7919")
    expect(page.locator("#results")).to_contain_text("Nothing matches “zq7919”")
    page.keyboard.press("Control+A")
    page.keyboard.type("postgres")
    expect(page.locator("#results")).to_contain_text("for “postgres”")
    page.go_back()
    expect(page).to_have_url(re.compile(r"/browser/\?q=zq7919&"))
    expect(page.locator("#results")).to_contain_text("Nothing matches “zq7919”")
    expect(search).to_have_value("zq7919")
    page.go_forward()
    expect(page).to_have_url(re.compile(r"/browser/\?q=postgres&"))
    expect(page.locator("#results")).to_contain_text("for “postgres”")
    expect(search).to_have_value("postgres")
    page.go_back()
    page.go_back()
    expect(page).to_have_url(f"{live_server.url}/browser/")
    expect(search).to_have_value("")

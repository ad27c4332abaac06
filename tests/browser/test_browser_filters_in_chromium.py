"""The memory browser's filters in a real browser: the store list follows
the scope chosen, as the results do, without a reload."""

import pytest
from playwright.sync_api import expect

from memory_app.services.stores import store_for_user
from tests.factories import PASSWORD, UserFactory, WorkspaceStoreFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_choosing_a_scope_narrows_the_store_list_too(login, live_server):
    WorkspaceStoreFactory(slug="shelf")
    store_for_user(user=UserFactory(username="max"))
    page = login("max", PASSWORD)
    page.goto(f"{live_server.url}/browser/")
    stores = page.locator("aside.stores")
    assert "shelf" in stores.inner_text() and "max (private)" in stores.inner_text()
    page.select_option("#id_scope", "user")
    page.wait_for_url("**/browser/?*scope=user*")
    page.wait_for_function("!document.querySelector('aside.stores').textContent.includes('shelf')")
    assert "max (private)" in stores.inner_text()
    # Swapped into its place in the aside, not left inside the results.
    assert page.locator("#store-list").count() == 1
    assert page.locator("#results #store-list").count() == 0


def test_no_page_with_memory_is_kept_in_the_browsers_storage(login, live_server):
    WorkspaceStoreFactory(slug="shelf")
    store_for_user(user=UserFactory(username="max"))
    page = login("max", PASSWORD)
    page.goto(f"{live_server.url}/browser/")
    page.select_option("#id_scope", "user")
    page.wait_for_url("**/browser/?*scope=user*")
    page.select_option("#id_scope", "")
    page.wait_for_url("**/browser/?*scope=&*")
    snapshots = page.evaluate(
        "[sessionStorage.getItem('htmx-history-cache'), localStorage.getItem('htmx-history-cache')]"
    )
    assert all(kept in (None, "[]") for kept in snapshots)
    page.go_back()  # the server draws it again
    page.wait_for_url("**/browser/?*scope=user*")
    expect(page.locator("aside.stores")).not_to_contain_text("shelf")
    expect(page.locator("aside.stores")).to_contain_text("max (private)")

"""A refused edit in a real browser, on a phone-sized screen, two tabs
open on My memories: what was typed stays on the page with the reason it
was not saved, and focus (so the scroll) lands on that reason, not on the
top of the page with the reason below the fold."""

import pytest
from playwright.sync_api import expect

from memory_app.models import MemoryDocument
from memory_app.services.stores import store_for_user
from tests.factories import PASSWORD, UserFactory, make_document

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
TYPED_TITLE = "Editor <b>"
TYPED_CONTENT = "Use helix, with the vim keymap."
LONG = "\n\n".join(
    f"Paragraph {n}: keep the editor settings in the dotfiles repo." for n in range(12)
)

IN_VIEW = """element => {
  const box = element.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight;
}"""


@pytest.fixture
def two_tabs(browser, live_server):
    """Two tabs of one phone browser, logged in as a person with a few
    memories: (tab A, tab B, their editor preference), both on My memories."""
    person = UserFactory(username="pia")
    store = store_for_user(user=person)
    for number in range(3):
        make_document(store, f"prefs/other-{number}", LONG, trust="user_authored", author=person)
    document = make_document(store, "prefs/editor", LONG, trust="user_authored", author=person)
    context = browser.new_context(viewport=PHONE)
    first = context.new_page()
    first.goto(f"{live_server.url}/accounts/login/")
    first.fill("#id_username", "pia")
    first.fill("#id_password", PASSWORD)
    first.click("button[type=submit]")
    first.wait_for_url(f"{live_server.url}/**")
    second = context.new_page()
    for tab in (first, second):
        tab.goto(f"{live_server.url}/mine/")
    yield first, second, document
    context.close()


def edit_with_the_keyboard(tab, document: MemoryDocument) -> None:
    """Open the memory's Edit, type a title and content, press Enter in the title."""
    row = tab.locator(f"#memory-{document.pk}")
    row.locator("summary", has_text="Edit").click()
    title = tab.locator(f"#title-{document.pk}")
    title.press("Control+a")
    tab.keyboard.type(TYPED_TITLE)
    tab.keyboard.press("Tab")
    tab.keyboard.press("Control+a")
    tab.keyboard.type(TYPED_CONTENT)
    title.focus()
    with tab.expect_navigation():
        tab.keyboard.press("Enter")


def focused_id(tab) -> str:
    return tab.evaluate("document.activeElement.id")


def test_an_edit_of_a_memory_deleted_in_the_other_tab_keeps_the_text(two_tabs):
    first, second, document = two_tabs
    first.locator(f"#memory-{document.pk}").get_by_role("button", name="Delete").click()
    first.get_by_role("button", name="Delete").click()
    first.wait_for_selector("text=Deleted (tombstoned")
    edit_with_the_keyboard(second, document)
    notice = second.locator("#kept-edit-notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Not saved: “editor” was deleted meanwhile")
    expect(second.locator("#kept-edit-title")).to_have_value(TYPED_TITLE)
    expect(second.locator("#kept-edit-content")).to_have_value(TYPED_CONTENT)
    expect(second.locator("#kept-edit-content")).to_be_visible()
    assert focused_id(second) == "kept-edit-notice"
    assert notice.evaluate(IN_VIEW)
    document.refresh_from_db()
    assert (document.state, document.title) == ("tombstoned", "editor")


def test_a_conflict_focuses_its_notice_in_view_on_a_phone(two_tabs):
    first, second, document = two_tabs
    row = first.locator(f"#memory-{document.pk}")
    row.locator("summary", has_text="Edit").click()
    first.locator(f"#title-{document.pk}").fill("Editor settings")
    with first.expect_navigation():
        first.locator(f"#title-{document.pk}").press("Enter")
    edit_with_the_keyboard(second, document)
    notice = second.locator(f"#memory-{document.pk} p.message.error")
    expect(notice).to_contain_text("This memory changed meanwhile")
    assert second.evaluate("document.activeElement.matches('p.message.error[role=alert]')")
    assert second.evaluate("document.activeElement.closest('article').id") == (
        f"memory-{document.pk}"
    )
    assert notice.evaluate(IN_VIEW)
    assert second.evaluate("window.scrollY") > 0  # it was below the fold
    expect(second.locator(f"#title-{document.pk}")).to_have_value(TYPED_TITLE)
    document.refresh_from_db()
    assert (document.version, document.title) == (2, "Editor settings")

"""An edit saved from a page drawn before someone else's save is refused
(409) with both versions shown, never a silent overwrite of theirs, as
`memory_patch` refuses an agent's stale sha (DESIGN §3.5)."""

import pytest

from memory_app.errors import Conflict
from memory_app.services.authoring import AuthoredMetadata, memory_edit
from memory_app.services.principals import system_grant_set
from memory_app.services.stores import store_for_user
from tests.factories import UserFactory, make_document
from tests.review_app.test_authoring_metadata import edit_form

pytestmark = pytest.mark.django_db

NEWER = "Use neovim, not vim."


@pytest.fixture(params=["mine", "card"])
def place(request, owner):
    """(page, person editing there, someone else who may save there too, a
    memory on that page at v1)."""
    if request.param == "mine":
        store, page, other = store_for_user(user=owner), "/mine/", owner  # another tab
    else:
        grant = system_grant_set(system_slug="ledger", team="ledger-owners", level="manage")
        owner.groups.add(grant.team)
        store, page = grant.system.store, "/systems/ledger/"
        other = UserFactory(username="teammate", teams=["ledger-owners"])
    document = make_document(
        store, "prefs/editor", "Use vim.", trust="user_authored", tags=["editor"], author=owner
    )
    return page, owner, other, document


def save_newer(user, document) -> None:
    """Someone else's edit of v1, made while the page is open: v2."""
    meta = AuthoredMetadata(tags=["editor", "neovim"], importance=5, source_refs=None)
    memory_edit(
        user=user, document=document, base_version=1, title="editor", content=NEWER, metadata=meta
    )


@pytest.mark.parametrize("htmx", [False, True])
def test_an_edit_from_a_stale_page_is_refused_and_shows_both(client, place, htmx):
    page, person, other, document = place
    client.force_login(person)
    action = f"{page}{document.pk}/"
    shown = edit_form(client.get(page).content.decode(), action)
    assert shown["base_version"] == "1"
    save_newer(other, document)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.post(action, {**shown, "action": "edit", "title": "Editor"}, **headers)
    assert response.status_code == 409
    document.refresh_from_db()
    assert (document.version, document.content, document.tags) == (2, NEWER, ["editor", "neovim"])
    html = response.content.decode()
    assert "This memory changed meanwhile: v2 was saved" in html
    now = html.split('<section class="conflict"')[1].split("</section>")[0]
    assert "What is there now: v2" in now and f"{NEWER}</pre>" in now
    assert '<span class="tag">neovim</span>' in now
    refused = edit_form(html, action)
    assert (refused["title"], refused["content"]) == ("Editor", "Use vim.")
    assert refused["tags"] == "editor"
    # Saved again, knowingly, the refused form replaces what is there now.
    assert client.post(action, {**refused, "action": "edit"}).status_code == 302
    document.refresh_from_db()
    assert (document.version, document.title, document.content) == (3, "Editor", "Use vim.")
    assert document.tags == ["editor"]


@pytest.mark.parametrize("sent", [{}, {"base_version": ""}, {"base_version": "x"}])
def test_an_edit_form_that_names_no_version_is_refused(client, place, sent):
    page, person, _, document = place
    client.force_login(person)
    edit = {"action": "edit", "metadata": "1", "title": "Editor", "content": "Use vim."}
    response = client.post(f"{page}{document.pk}/", {**edit, **sent})
    assert response.status_code == 409
    assert "does not say which version of this memory it was drawn from" in (
        response.content.decode()
    )
    document.refresh_from_db()
    assert (document.version, document.title) == (1, "editor")


def test_an_edit_from_a_current_page_saves(client, place):
    page, person, _, document = place
    client.force_login(person)
    action = f"{page}{document.pk}/"
    shown = edit_form(client.get(page).content.decode(), action)
    response = client.post(action, {**shown, "action": "edit", "content": "Use helix."})
    assert response.status_code == 302
    document.refresh_from_db()
    assert (document.version, document.content, document.tags) == (2, "Use helix.", ["editor"])


def test_a_stale_form_refused_for_a_field_still_edits_the_version_it_was_drawn_from(client, place):
    page, person, other, document = place
    client.force_login(person)
    action = f"{page}{document.pk}/"
    shown = edit_form(client.get(page).content.decode(), action)
    save_newer(other, document)
    response = client.post(action, {**shown, "action": "edit", "importance": "11"})
    assert response.status_code == 400
    refused = edit_form(response.content.decode(), action)
    assert refused["base_version"] == "1"
    response = client.post(action, {**refused, "action": "edit", "importance": "7"})
    assert response.status_code == 409
    document.refresh_from_db()
    assert (document.version, document.content) == (2, NEWER)


def test_the_service_refuses_a_stale_base_version(owner):
    document = make_document(store_for_user(user=owner), "prefs/editor", "Use vim.", author=owner)
    save_newer(owner, document)
    with pytest.raises(Conflict) as refused:
        memory_edit(user=owner, document=document, base_version=1, title="t", content="Use ed.")
    assert refused.value.status == 409 and refused.value.extra["current_version"] == 2
    document.refresh_from_db()
    assert (document.version, document.content) == (2, NEWER)


def test_a_stale_edit_from_the_second_page_is_shown_where_the_memory_now_is(client, owner):
    """The newer save moved the memory to the top of the first page: the
    refusal is drawn there, with what was typed."""
    store = store_for_user(user=owner)
    oldest = make_document(store, "prefs/oldest", "Use vim.", trust="user_authored")
    for n in range(50):
        make_document(store, f"prefs/other-{n}", f"Preference {n}.", trust="user_authored")
    client.force_login(owner)
    action = f"/mine/{oldest.pk}/"
    shown = edit_form(client.get("/mine/?page=2").content.decode(), action)
    save_newer(owner, oldest)
    typed = {**shown, "action": "edit", "page": "2", "content": "Use helix."}
    response = client.post(action, typed)
    assert response.status_code == 409
    html = response.content.decode()
    assert "This memory changed meanwhile: v2 was saved" in html
    assert "Use helix." in html

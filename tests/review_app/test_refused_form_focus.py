"""A form the server refuses is drawn again with what was typed and with
focus where the refusal is: the browser scrolls there on load (a phone
shows it without scrolling) and a screen reader reads it. An edit of a
memory deleted meanwhile (in another tab) keeps its text too, read-only,
though no edit form is drawn for a deleted memory any more."""

import re

import pytest
from django.utils.html import escape

from memory_app.models import ChangeKind, MemoryDocument
from memory_app.services import authoring
from memory_app.services.curate import document_state_set
from memory_app.services.documents import head_update
from memory_app.services.principals import system_grant_set
from memory_app.services.stores import store_for_user, store_workspace_ensure
from review_app import memory_actions
from tests.factories import make_document
from tests.review_app.test_authoring_metadata import edit_form
from tests.review_app.test_deletions import request_deletion
from tests.review_app.test_refused_texts_kept import INJECTION, TOKEN
from tests.review_app.test_stale_edits import save_newer

pytestmark = pytest.mark.django_db

TYPED_TITLE = 'Editor <b>&</b> "co"'
TYPED_CONTENT = "Use helix.\n<script>alert(1)</script> then vim."
NOTICE = '<p class="message error" role="alert" tabindex="-1" autofocus>'


def memory_on(where: str, owner) -> tuple[str, MemoryDocument]:
    """(page, a memory on it at v1), the owner managing it."""
    if where == "mine":
        store, page = store_for_user(user=owner), "/mine/"
    else:
        grant = system_grant_set(system_slug="ledger", team="ledger-owners", level="manage")
        owner.groups.add(grant.team)
        store, page = grant.system.store, "/systems/ledger/"
    document = make_document(store, "prefs/editor", "Use vim.", trust="user_authored", author=owner)
    return page, document


@pytest.fixture(params=["mine", "card"])
def place(request, owner):
    return memory_on(request.param, owner)


def autofocused(html: str) -> str:
    """The one element that takes focus on load."""
    tags = re.findall(r"<[a-z]+\b[^>]*\sautofocus\b[^>]*>", html)
    assert len(tags) == 1 and html.count("autofocus") == 1, tags
    return tags[0]


def kept_section(html: str) -> str:
    return html.split('<section class="stacked kept-edit">')[1].split("</section>")[0]


def typed_edit(client, page: str, document: MemoryDocument) -> dict[str, str]:
    """The memory's edit form as the page drew it, then typed in."""
    shown = edit_form(client.get(page).content.decode(), f"{page}{document.pk}/")
    return {**shown, "action": "edit", "title": TYPED_TITLE, "content": TYPED_CONTENT}


def test_an_edit_of_a_memory_deleted_in_another_tab_keeps_what_was_typed(client, owner, place):
    page, document = place
    client.force_login(owner)
    typed = typed_edit(client, page, document)
    document_state_set(user=owner, document=document, tombstoned=True)  # the other tab
    response = client.post(f"{page}{document.pk}/", typed)
    assert response.status_code == 403
    html = response.content.decode()
    kept = kept_section(html)
    assert "Not saved: “editor” was deleted meanwhile" in kept
    assert "restore the memory and edit it again, or add it as a new memory" in kept
    assert f'<input id="kept-edit-title" value="{escape(TYPED_TITLE)}" readonly>' in kept
    assert f"readonly>\n{escape(TYPED_CONTENT)}</textarea>" in kept
    assert "<script>alert" not in html
    # Something to copy from, not a form: nothing in it saves or submits.
    assert "<form" not in kept and "<button" not in kept and "name=" not in kept
    assert f'<a href="/documents/{document.pk}/">Open “editor”</a>: its page restores it' in kept
    assert 'id="kept-edit-notice"' in autofocused(html)
    document.refresh_from_db()
    assert (document.state, document.content) == ("tombstoned", "Use vim.")


def test_an_edit_of_a_memory_merged_away_meanwhile_keeps_what_was_typed(client, owner):
    """On a card: My memories does not find a merged memory at all (404)."""
    page, document = memory_on("card", owner)
    client.force_login(owner)
    typed = typed_edit(client, page, document)
    head_update(document, change=ChangeKind.SUPERSEDE, author=owner, fields={"state": "superseded"})
    response = client.post(f"{page}{document.pk}/", typed)
    assert response.status_code == 403
    html = response.content.decode()
    kept = kept_section(html)
    assert "was merged into another memory by a review meanwhile" in kept
    assert "copy it, then add it as a new memory" in kept and "restore" not in kept
    assert f'value="{escape(TYPED_TITLE)}"' in kept
    assert 'id="kept-edit-notice"' in autofocused(html)


def test_a_memory_deleted_while_the_edit_is_saved_keeps_what_was_typed(
    client, owner, place, monkeypatch
):
    """Deleted after the page looked the memory up, before the save locked
    it: the page reads its state again rather than trusting the look-up."""
    page, document = place
    client.force_login(owner)
    typed = typed_edit(client, page, document)

    def deleted_first(**kwargs):
        fresh = MemoryDocument.objects.get(pk=kwargs["document"].pk)
        document_state_set(user=owner, document=fresh, tombstoned=True)
        return authoring.memory_edit(**kwargs)

    monkeypatch.setattr(memory_actions, "memory_edit", deleted_first)
    response = client.post(f"{page}{document.pk}/", typed)
    assert response.status_code == 403
    kept = kept_section(response.content.decode())
    assert "was deleted meanwhile" in kept and escape(TYPED_CONTENT) in kept


def test_the_refused_deleted_edit_is_bounded_in_queries(
    client, owner, place, django_assert_max_num_queries
):
    """The page drawn again around it, 30 other memories listed: no query a row."""
    page, document = place
    for number in range(30):
        make_document(document.store, f"prefs/more-{number}", f"Preference {number}.")
    client.force_login(owner)
    typed = typed_edit(client, page, document)
    document_state_set(user=owner, document=document, tombstoned=True)
    with django_assert_max_num_queries(18):
        assert client.post(f"{page}{document.pk}/", typed).status_code == 403


def test_a_conflict_focuses_the_notice_of_the_refused_form(client, owner, place):
    page, document = place
    client.force_login(owner)
    typed = typed_edit(client, page, document)
    save_newer(owner, document)  # another tab
    response = client.post(f"{page}{document.pk}/", typed)
    assert response.status_code == 409
    html = response.content.decode()
    row = html.split(f'id="memory-{document.pk}"')[1].split("</article>")[0]
    assert f"{NOTICE}Not saved. This memory changed meanwhile" in row
    assert autofocused(html) == NOTICE
    refused = edit_form(html, f"{page}{document.pk}/")
    assert (refused["title"], refused["content"]) == (TYPED_TITLE, TYPED_CONTENT)
    assert "kept-edit" not in html


def test_a_refused_add_focuses_its_notice(client, owner, place):
    page, _ = place
    client.force_login(owner)
    added = {"title": "units", "content": "Metric.", "importance": "11"}
    response = client.post(f"{page}add", added)
    assert response.status_code == 400
    html = response.content.decode()
    add = html.split('<details class="add-memory" open>')[1].split("</details>")[0]
    assert f"{NOTICE}Not saved. What you typed is still here" in add
    assert autofocused(html) == NOTICE


def test_a_refused_curate_reason_focuses_the_reason(client, reviewer):
    store = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    runbook = make_document(store, "deploy/gate", "Wait for the approval gate.")
    head_update(runbook, change=ChangeKind.UPDATE, author=reviewer, fields={"content": "Go."})
    client.force_login(reviewer)
    response = client.post(
        f"/documents/{runbook.pk}/curate",
        {"action": "rollback", "version": "1", "reason": INJECTION},
    )
    assert response.status_code == 422
    focused = autofocused(response.content.decode())
    assert focused.startswith('<input id="reason"') and 'aria-invalid="true"' in focused


def test_a_refused_redaction_focuses_its_text(client, owner):
    document = make_document(store_for_user(user=owner), "prefs/leak", "join value", author=owner)
    client.force_login(owner)
    response = client.post(f"/documents/{document.pk}/redact", {"text": "not in it"})
    assert response.status_code == 400
    focused = autofocused(response.content.decode())
    assert focused.startswith('<textarea id="redact-text"') and 'aria-invalid="true"' in focused


def test_a_refused_deletion_note_focuses_the_note(client, owner):
    _, item_id = request_deletion(owner)
    request_deletion(owner, path="old/other")
    client.force_login(owner)
    note = f"Keep it: {TOKEN} is in the outage review notes."
    response = client.post(f"/deletions/{item_id}/decide", {"action": "decline", "note": note})
    assert response.status_code == 422
    focused = autofocused(response.content.decode())
    assert focused.startswith(f'<input id="note-{item_id}"') and 'aria-invalid="true"' in focused


def test_nothing_takes_focus_when_nothing_was_refused(client, owner, place):
    page, document = place
    request_deletion(owner)
    client.force_login(owner)
    for address in (page, f"/documents/{document.pk}/", "/deletions/"):
        response = client.get(address)
        assert response.status_code == 200
        assert "autofocus" not in response.content.decode(), address

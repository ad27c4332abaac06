"""The document page: access matrix, escaping, history, diffs, curation."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_app.actors import Actor
from memory_app.models import MemoryDocument, MemoryEvent
from memory_app.services.conversations import conversation_open
from memory_app.services.promote import memory_propose_promotion, promotion_approve
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure

pytestmark = pytest.mark.django_db

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def write(user, content: str, path: str = "notes/page") -> MemoryDocument:
    conversation = conversation_open(user=user, external_id=f"page-{user.pk}")
    actor = Actor(user=user, agent=user, conversation=conversation)
    return memory_remember(
        actor=actor, data=RememberInput(store="conversation", path=path, content=content)
    ).document


@pytest.fixture
def note(owner):
    document = write(owner, "line one\nline two")
    write(owner, "line one\nline 2, changed")
    document.refresh_from_db()
    return document


def url(document) -> str:
    return f"/documents/{document.pk}/"


@pytest.mark.parametrize(("who", "status"), [("owner", 200), ("outsider", 404), ("reviewer", 404)])
def test_a_private_document_is_404_for_everyone_else(
    client, owner, outsider, reviewer, note, who, status
):
    client.force_login({"owner": owner, "outsider": outsider, "reviewer": reviewer}[who])
    assert client.get(url(note)).status_code == status


def test_shared_documents_are_readable_by_everyone_but_curated_by_reviewers(
    client, owner, reviewer
):
    convention = MemoryDocument.objects.get(path="verification-policy")
    client.force_login(owner)
    page = client.get(url(convention)).content.decode()
    assert "Verification policy" in page and "Roll back" not in page and "Tombstone" not in page
    response = client.post(f"{url(convention)}curate", {"action": "tombstone"})
    assert response.status_code == 403
    client.force_login(reviewer)
    assert "Tombstone" in client.get(url(convention)).content.decode()


def test_a_document_past_its_expiry_says_so_before_the_job_marks_it(client, owner, note):
    client.force_login(owner)
    assert "expired" not in client.get(url(note)).content.decode()
    past = timezone.now() - timedelta(minutes=1)
    MemoryDocument.objects.filter(pk=note.pk).update(expires_at=past)
    html = client.get(url(note)).content.decode()
    assert "state <strong>active</strong>, <strong>expired</strong>: served to no agent" in html


def test_content_is_shown_as_text(client, owner):
    document = write(owner, f"careful {XSS}")
    client.force_login(owner)
    html = client.get(url(document)).content.decode()
    assert XSS not in html and "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_history_and_the_diff_of_the_last_change(client, owner, note):
    client.force_login(owner)
    html = client.get(url(note)).content.decode()
    assert "history intact (2 versions)" in html
    assert "Version 1 → 2" in html
    assert '<td class="sign">-</td><td class="code">line two</td>' in html
    assert '<td class="sign">+</td><td class="code">line 2, changed</td>' in html


def test_any_two_versions_can_be_compared_and_htmx_gets_the_diff_only(client, owner, note):
    client.force_login(owner)
    html = client.get(f"{url(note)}?from=2&to=1", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in html and "Version 2 → 1" in html


def test_garbage_version_parameters_are_a_message_not_an_error(client, owner, note):
    client.force_login(owner)
    response = client.get(f"{url(note)}?from=abc&to=2")
    assert response.status_code == 400
    assert "“from” takes a version number (0 or more), not “abc”" in response.content.decode()


def test_rollback_from_the_page_adds_a_version(client, owner, note):
    client.force_login(owner)
    response = client.post(f"{url(note)}curate", {"action": "rollback", "version": 1})
    assert response.status_code == 302
    note.refresh_from_db()
    assert (note.version, note.content) == (3, "line one\nline two")


def test_a_rollback_says_which_version_it_made(client, owner, note):
    client.force_login(owner)
    response = client.post(f"{url(note)}curate", {"action": "rollback", "version": 1}, follow=True)
    assert "Rolled back to version 1&#x27;s text as version 3." in response.content.decode()


def test_a_rollback_to_the_current_text_says_nothing_changed_and_records_nothing(
    client, owner, note
):
    client.force_login(owner)
    response = client.post(f"{url(note)}curate", {"action": "rollback", "version": 2}, follow=True)
    assert "Version 2 holds the current text; nothing changed." in response.content.decode()
    note.refresh_from_db()
    assert note.version == 2
    assert not MemoryEvent.objects.filter(type="memory.document.rolled_back").exists()


def test_a_deleted_pinned_document_does_not_claim_to_be_injected(client, owner, note):
    client.force_login(owner)
    client.post(f"{url(note)}curate", {"action": "pin"})
    response = client.post(
        f"{url(note)}curate", {"action": "tombstone", "confirm": "on"}, follow=True
    )
    page = response.content.decode()
    assert "Deleted: agents no longer receive it. Its history stays." in page
    assert "pinned, not injected while deleted" in page
    assert "always injected" not in page


def test_a_history_of_one_version_reads_as_one(client, owner):
    document = write(owner, "only line", path="notes/single")
    client.force_login(owner)
    assert "history intact (1 version)" in client.get(url(document)).content.decode()


def test_tombstone_and_restore_are_versions_and_events(client, owner, note):
    client.force_login(owner)
    client.post(f"{url(note)}curate", {"action": "tombstone", "reason": "stale", "confirm": "on"})
    note.refresh_from_db()
    assert note.state == "tombstoned"
    client.post(f"{url(note)}curate", {"action": "restore"})
    note.refresh_from_db()
    assert note.state == "active" and note.version == 4
    assert MemoryEvent.objects.filter(type="memory.document.restored").exists()


def test_pinning_a_private_document(client, owner, note):
    client.force_login(owner)
    client.post(f"{url(note)}curate", {"action": "pin"})
    note.refresh_from_db()
    assert note.always_inject is True


def test_a_bad_curate_form_is_a_message_on_the_page_again(client, owner, note):
    client.force_login(owner)
    response = client.post(f"{url(note)}curate", {"action": "rollback"})
    assert response.status_code == 400
    assert "Choose the version" in response.content.decode()


def test_a_rollback_to_a_missing_version_is_404(client, owner, note):
    client.force_login(owner)
    assert (
        client.post(f"{url(note)}curate", {"action": "rollback", "version": 99}).status_code == 404
    )


def test_the_page_is_bounded_in_queries(client, owner, django_assert_max_num_queries):
    document = write(owner, "v0", path="many")
    for n in range(1, 50):
        write(owner, f"v{n}", path="many")
    client.force_login(owner)
    # The chain's check reads the versions and, for their signed records, their source refs.
    with django_assert_max_num_queries(14):
        response = client.get(url(document))
    assert response.status_code == 200
    assert "history intact (50 versions)" in response.content.decode()


SECRET = "orchid-lantern-4217"


def write_private(user, content: str, path: str = "prefs/leak") -> MemoryDocument:
    """A preference in the user's own store, where the owner may redact."""
    actor = Actor(user=user, agent=user)
    data = RememberInput(store="user", path=path, content=content, doc_type="user_preference")
    return memory_remember(actor=actor, data=data).document


def test_the_owner_redacts_a_private_document_from_the_page(client, owner):
    document = write_private(owner, f"join value {SECRET}")
    write_private(owner, "join value from the vault")
    client.force_login(owner)
    assert "Redact" in client.get(url(document)).content.decode()
    asked = client.post(f"{url(document)}redact", {"text": SECRET}).content.decode()
    assert "<strong>2 times</strong>" in asked
    response = client.post(f"{url(document)}redact", {"text": SECRET, "confirm": "on"}, follow=True)
    page = response.content.decode()
    # The content and the title derived from it.
    assert "Redacted 2 occurrence(s) in version(s) 1." in page
    assert SECRET not in page
    assert document.versions.get(version=1).content == "join value [redacted]"
    assert "history intact (3 versions)" in page


def test_redaction_first_says_how_much_it_hits_and_changes_nothing(client, owner):
    document = write_private(owner, "join value from the vault")
    client.force_login(owner)

    response = client.post(f"{url(document)}redact", {"text": "o"})

    page = response.content.decode()
    assert response.status_code == 200
    assert "<strong>4 times</strong>" in page
    assert "in version 1." in page
    assert "This cannot be undone." in page
    assert 'name="confirm" value="on"' in page
    # It names the text: the browser keeps no copy to show on Back.
    assert "no-store" in response["Cache-Control"]
    assert MemoryDocument.objects.get(pk=document.pk).version == document.version
    assert document.versions.get(version=1).content == "join value from the vault"


def test_the_redaction_text_is_shown_escaped_when_confirming(client, owner):
    document = write_private(owner, "payload <script>alert(1)</script> stored")
    client.force_login(owner)

    page = client.post(f"{url(document)}redact", {"text": "<script>alert(1)</script>"})

    body = page.content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_a_redaction_typed_with_enter_at_the_end_or_line_breaks_finds_its_text(client, owner):
    document = write_private(owner, f"first line\nsecond {SECRET}\nthird")
    client.force_login(owner)

    for typed in (f"{SECRET}\r\n", f"second {SECRET}\r\nthird"):
        asked = client.post(f"{url(document)}redact", {"text": typed}).content.decode()
        assert "<strong>1 time</strong>" in asked, typed

    client.post(
        f"{url(document)}redact",
        {"text": f"second {SECRET}\r\nthird", "confirm": "on"},
        follow=True,
    )
    assert document.versions.get(version=1).content == "first line\n[redacted]"


@pytest.mark.parametrize("action", ["redact", "curate"])
def test_a_form_address_opened_directly_goes_back_to_the_document(client, owner, action):
    document = write_private(owner, f"join value {SECRET}")
    client.force_login(owner)

    response = client.get(f"{url(document)}{action}")

    assert response.status_code == 302
    assert response.url == url(document)


def test_redaction_needs_the_csrf_token(owner):
    from django.test import Client

    document = write_private(owner, f"join value {SECRET}")
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    confirmed = {"text": SECRET, "confirm": "on"}
    assert client.post(f"{url(document)}redact", confirmed).status_code == 403
    assert SECRET in MemoryDocument.objects.get(pk=document.pk).content


def test_redaction_of_absent_text_is_shown_again_to_correct(client, owner):
    document = write_private(owner, "join value from the vault")
    client.force_login(owner)
    response = client.post(f"{url(document)}redact", {"text": "never written"})
    html = response.content.decode()
    assert response.status_code == 400
    assert ">\nnever written</textarea>" in html
    assert "does not occur" in html
    assert MemoryDocument.objects.get(pk=document.pk).version == document.version


def test_a_conversation_participant_may_not_redact(client, owner, note):
    client.force_login(owner)
    assert "redact-heading" not in client.get(url(note)).content.decode()
    assert client.post(f"{url(note)}redact", {"text": "line"}).status_code == 403


def test_shared_documents_are_redacted_by_reviewers_only(client, owner, reviewer, outsider, note):
    convention = MemoryDocument.objects.get(path="verification-policy")
    client.force_login(owner)
    assert "redact-heading" not in client.get(url(convention)).content.decode()
    assert client.post(f"{url(convention)}redact", {"text": "verify"}).status_code == 403
    client.force_login(outsider)
    assert client.post(f"{url(note)}redact", {"text": "line"}).status_code == 404
    client.force_login(reviewer)
    assert "redact-heading" in client.get(url(convention)).content.decode()


def test_a_bidirectional_override_typed_in_a_form_is_refused_by_name(client, owner):
    document = write_private(owner, f"join value {SECRET}")
    client.force_login(owner)

    response = client.post(f"{url(document)}redact", {"text": f"{SECRET}\u202e"}, follow=True)

    assert "Control character U+202E at position 19." in response.content.decode()
    assert document.versions.get(version=1).content == f"join value {SECRET}"


@pytest.mark.parametrize("name", ["from", "to"])
def test_a_control_character_in_a_version_is_not_echoed(client, owner, note, name):
    client.force_login(owner)
    response = client.get(f"{url(note)}?{name}=%00%1b[2J")
    html = response.content.decode()
    assert response.status_code == 400
    assert "\x00" not in html and "\x1b" not in html
    assert f"“{name}” takes a version number" in html and "not “\ufffd\ufffd[2J”" in html


def test_a_reason_over_its_limit_is_shown_again_with_the_error(client, owner):
    document = write_private(owner, "Prefers dark mode.")
    client.force_login(owner)
    reason = "stale <b>" + "x" * 2000
    response = client.post(f"{url(document)}curate", {"action": "pin", "reason": reason})
    html = response.content.decode()
    assert response.status_code == 400
    assert f'value="stale &lt;b&gt;{"x" * 2000}"' in html
    assert '<p class="field-error" id="reason-error"><strong>Reason:</strong>' in html
    assert "at most 2000 characters" in html
    document.refresh_from_db()
    assert (document.version, document.always_inject) == (1, False)


def test_a_redaction_text_over_its_limit_is_shown_again_with_the_error(client, owner):
    document = write_private(owner, "Prefers dark mode.")
    client.force_login(owner)
    text = "dark " * 4001
    response = client.post(f"{url(document)}redact", {"text": text})
    html = response.content.decode()
    assert response.status_code == 400
    assert f">\n{text}</textarea>" in html
    assert '<p class="field-error" id="redact-text-error"><strong>Text:</strong>' in html
    assert "no-store" in response["Cache-Control"]
    assert document.versions.get(version=1).content == "Prefers dark mode."


def test_the_redaction_question_focuses_cancel(client, owner):
    document = write_private(owner, f"join value {SECRET}")
    client.force_login(owner)
    html = client.post(f"{url(document)}redact", {"text": SECRET}).content.decode()
    assert f'<a href="{url(document)}" autofocus>Cancel, keep it</a>' in html
    assert html.count("autofocus") == 1


def test_redacting_a_promoted_document_names_and_redacts_its_draft(client, owner, reviewer):
    store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    conversation = conversation_open(user=owner, external_id="leaky")
    actor = Actor(user=owner, agent=owner, conversation=conversation)
    draft = memory_remember(
        actor=actor,
        data=RememberInput(store="conversation", path="notes/join", content=f"join {SECRET}"),
    ).document
    proposal = memory_propose_promotion(
        actor=actor, document=draft, target_store="workspace_runbooks", rationale="Seen."
    )
    shared = promotion_approve(user=reviewer, item_id=proposal.item.pk)
    client.force_login(reviewer)
    asked = client.post(f"{url(shared)}redact", {"text": SECRET}).content.decode()
    assert "conversation leaky/notes/join" in asked
    response = client.post(f"{url(shared)}redact", {"text": SECRET, "confirm": "on"}, follow=True)
    assert "redacted from 1 linked document(s) too" in response.content.decode()
    draft.refresh_from_db()
    assert draft.content == "join [redacted]"

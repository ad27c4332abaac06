"""Version history is a keyed chain: a rewrite shows, even by the tables' owner."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memory_app.hashing import sha256_text
from memory_app.management.commands import memory_verify
from memory_app.models import MemoryDocument
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.constrain import documents_constrain
from memory_app.services.curate import document_always_inject_set
from memory_app.services.versions import version_append
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db

# The table's owner may switch its triggers off (once deferred checks ran);
# the test transaction undoes it.
TRIGGERS_OFF = (
    "SET CONSTRAINTS ALL IMMEDIATE; ALTER TABLE memory_app_memoryversion DISABLE TRIGGER USER"
)


def _update_head(document: MemoryDocument, content: str) -> None:
    document.content = content
    document.content_sha256 = sha256_text(content)
    document.version += 1
    document.save()
    version_append(document=document, change="update", author=None)


def test_a_new_document_has_an_intact_chain_of_one():
    document = make_document(WorkspaceStoreFactory(), content="first")
    status = version_chain_verify(document)
    assert status.intact and status.versions == 1


def test_each_version_points_at_its_parent():
    document = make_document(WorkspaceStoreFactory(), content="first")
    _update_head(document, "second")
    first, second = document.versions.order_by("version")
    assert first.parent_sha256 == ""
    assert second.parent_sha256 == first.sha256 == sha256_text("first")
    assert second.chain_sha256 != first.chain_sha256
    assert version_chain_verify(document).intact


def test_rewriting_old_content_behind_the_triggers_back_is_detected():
    document = make_document(WorkspaceStoreFactory(), content="first")
    _update_head(document, "second")
    _update_head(document, "third")
    with connection.cursor() as cursor:
        # What the app's own database credential can do: it owns the table.
        cursor.execute(TRIGGERS_OFF)
        cursor.execute(
            "UPDATE memory_app_memoryversion SET content = 'forged', sha256 = %s "
            "WHERE document_id = %s AND version = 2",
            [sha256_text("forged"), document.pk],
        )
    status = version_chain_verify(document)
    assert not status.intact
    assert status.broken_at == 2


def test_the_verify_command_reports_intact_and_broken_histories():
    store = WorkspaceStoreFactory()
    document = make_document(store, content="first")
    _update_head(document, "second")
    out = io.StringIO()
    call_command("memory_verify", "--store", store.slug, stdout=out)
    assert "1 documents verified" in out.getvalue()
    with connection.cursor() as cursor:
        cursor.execute(TRIGGERS_OFF)
        cursor.execute(
            "UPDATE memory_app_memoryversion SET author_name = 'mallory' "
            "WHERE document_id = %s AND version = 1",
            [document.pk],
        )
    errors = io.StringIO()
    with pytest.raises(CommandError, match="1 of 1 documents"):
        call_command("memory_verify", "--store", store.slug, stdout=io.StringIO(), stderr=errors)
    assert "version 1: chain hash does not match" in errors.getvalue()


def _verify_fails(store) -> str:
    """memory_verify on `store`, which must exit 1; what it wrote to stderr."""
    errors = io.StringIO()
    with pytest.raises(CommandError, match="1 of 1 documents have a broken history"):
        call_command("memory_verify", "--store", store.slug, stdout=io.StringIO(), stderr=errors)
    return errors.getvalue()


def test_verify_names_a_head_whose_text_was_rewritten_in_sql():
    store = WorkspaceStoreFactory()
    document = make_document(store, path="runbooks/restart", content="first")
    _update_head(document, "second")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_app_memorydocument SET content = 'forged', content_sha256 = %s "
            "WHERE id = %s",
            [sha256_text("forged"), document.pk],
        )
    assert (
        f"{store.slug}/runbooks/restart: version 2: the head differs from it in "
        "content, content_sha256"
    ) in _verify_fails(store)


def test_verify_names_a_head_whose_trust_was_raised_in_sql():
    store = WorkspaceStoreFactory()
    document = make_document(store, content="first")
    MemoryDocument.objects.filter(pk=document.pk).update(trust="admin_approved", title="Forged")
    assert "version 1: the head differs from it in title, trust" in _verify_fails(store)


def test_verify_names_a_head_ahead_of_its_history():
    store = WorkspaceStoreFactory()
    document = make_document(store, content="first")
    MemoryDocument.objects.filter(pk=document.pk).update(version=3)
    assert "version 3: the head is at this version, the history ends at version 1" in (
        _verify_fails(store)
    )


def test_verify_accepts_a_pin_and_a_constraint_which_record_no_version(reviewer):
    store = WorkspaceStoreFactory()
    document = make_document(store, content="first")
    document_always_inject_set(user=reviewer, document=document, value=True)
    documents_constrain([document])
    out = io.StringIO()
    call_command("memory_verify", "--store", store.slug, stdout=out, stderr=io.StringIO())
    assert "1 documents verified" in out.getvalue()


def test_verify_refuses_a_store_that_does_not_exist():
    store = WorkspaceStoreFactory()
    with pytest.raises(CommandError, match=f"No store named nope. Stores: .*{store.slug}"):
        call_command("memory_verify", "--store", "nope", stdout=io.StringIO())


def test_verify_says_how_far_it_got_on_stderr(monkeypatch):
    store = WorkspaceStoreFactory()
    make_document(store, path="a", content="first")
    make_document(store, path="b", content="second")
    monkeypatch.setattr(memory_verify, "PROGRESS_SECONDS", 0)
    errors = io.StringIO()
    call_command("memory_verify", "--store", store.slug, stdout=io.StringIO(), stderr=errors)
    assert errors.getvalue().splitlines() == [
        "verified 1 of 2 documents",
        "verified 2 of 2 documents",
    ]


def test_verify_names_the_version_that_was_deleted_from_the_middle():
    store = WorkspaceStoreFactory()
    document = make_document(store, path="runbooks/restart", content="first")
    _update_head(document, "second")
    _update_head(document, "third")
    with connection.cursor() as cursor:
        cursor.execute(TRIGGERS_OFF)
        cursor.execute(
            "DELETE FROM memory_app_memoryversion WHERE document_id = %s AND version = 2",
            [document.pk],
        )
    errors = _verify_fails(store)
    assert (
        f"{store.slug}/runbooks/restart: version 2: missing (the next version stored is 3)"
    ) in errors
    assert "version 3:" not in errors

"""A version's record (title, recall hint, reason, run, trust and the head's
other fields, source refs) is signed with its link: rewriting it with only a
database credential, in the version and its head alike, shows."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from memory_app.hashing import GENESIS, chain_keyring, chain_sha256
from memory_app.models import MemoryDocument, MemorySourceRef, MemoryVersion
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.chain import history_rewrite
from memory_app.services.documents import head_update
from memory_app.services.versions import SourceRef
from tests.factories import WorkspaceStoreFactory, make_document
from tests.memory_app.test_history_keying_migration import Editor, migration_named

pytestmark = pytest.mark.django_db


def _rewrite(sql: str, params: list) -> None:
    """As the app's role may: a transaction that declares a history rewrite."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('memory.history_rewrite', 'on', true)")
        cursor.execute(sql, params)
        cursor.execute("SELECT set_config('memory.history_rewrite', 'off', true)")


@pytest.fixture
def draft():
    document = make_document(WorkspaceStoreFactory(), path="notes/dns", content="first")
    head_update(
        document,
        change="update",
        author=None,
        fields={"content": "second"},
        reason="checked the resolver",
        source_refs=[SourceRef("url", "https://status.example.com/incident/1")],
    )
    assert version_chain_verify(document).intact
    return document


def test_trust_raised_in_the_version_and_its_head_breaks_the_chain(draft):
    _rewrite(
        "UPDATE memory_app_memoryversion SET metadata = jsonb_set(metadata, '{trust}',"
        " '\"admin_approved\"') WHERE document_id = %s",
        [draft.pk],
    )
    MemoryDocument.objects.filter(pk=draft.pk).update(trust="admin_approved")
    status = version_chain_verify(draft)
    assert not status.intact
    assert (status.broken_at, status.problem) == (1, "chain hash does not match")


@pytest.mark.parametrize(
    ("column", "value"), [("title", "Forged"), ("recall_hint", "forged"), ("reason", "forged")]
)
def test_a_version_text_rewritten_breaks_the_chain(draft, column, value):
    with history_rewrite():
        MemoryVersion.objects.filter(document=draft, version=2).update(**{column: value})
    status = version_chain_verify(draft)
    assert (status.intact, status.broken_at) == (False, 2)


def test_a_source_ref_swapped_breaks_the_chain(draft):
    _rewrite(
        "UPDATE memory_app_memorysourceref SET ref = 'https://evil.example.com/'"
        " WHERE version_id IN (SELECT id FROM memory_app_memoryversion WHERE document_id = %s)",
        [draft.pk],
    )
    assert MemorySourceRef.objects.filter(ref="https://evil.example.com/").exists()
    status = version_chain_verify(draft)
    assert (status.intact, status.broken_at) == (False, 2)


def _historical_apps():
    """The models as the migration sees them, run forwards or backwards:
    historical ones, without the live models' reverse accessors."""
    loader = MigrationLoader(connection)
    return loader.project_state(("memory_app", "0018_dreamjob_attempts")).apps


def _sign_without_records(document: MemoryDocument) -> None:
    """Sign the history as links were signed before they held the record."""
    keyring = chain_keyring()
    previous = GENESIS
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('memory.history_rewrite', 'on', true)")
    for row in document.versions.order_by("version"):
        previous = chain_sha256(
            key=keyring[row.chain_key_id],
            previous_chain=previous,
            version=row.version,
            change=row.change,
            content_sha256=row.sha256,
            author_name=row.author_name,
            created_at=row.created_at,
            record_sha256=None,
        )
        MemoryVersion.objects.filter(pk=row.pk).update(chain_sha256=previous)


def test_the_migration_signs_the_records_of_histories_signed_before_them(draft):
    _sign_without_records(draft)
    assert version_chain_verify(draft).problem == "chain hash does not match"
    migration = migration_named("_history_records_signed")

    migration.sign_records(_historical_apps(), Editor())
    assert version_chain_verify(draft).intact

    migration.unsign_records(_historical_apps(), Editor())
    assert version_chain_verify(draft).problem == "chain hash does not match"
    migration.sign_records(_historical_apps(), Editor())
    assert version_chain_verify(draft).intact


def test_a_forged_history_signed_before_records_stays_broken(draft):
    _sign_without_records(draft)
    _rewrite(
        "UPDATE memory_app_memoryversion SET content = 'forged' WHERE document_id = %s"
        " AND version = 1",
        [draft.pk],
    )
    migration_named("_history_records_signed").sign_records(_historical_apps(), Editor())
    assert version_chain_verify(draft).problem == "content does not match its hash"


def test_the_migration_runs_backwards_and_forwards_on_stored_histories(draft):
    call_command("migrate", "memory_app", "0018_dreamjob_attempts", verbosity=0)
    assert version_chain_verify(draft).problem == "chain hash does not match"
    call_command("migrate", "memory_app", verbosity=0)
    assert version_chain_verify(draft).intact


def test_rekey_signs_a_history_signed_before_records_in_full(draft):
    """One the migration left, its key then missing from the keyring."""
    _sign_without_records(draft)
    out = io.StringIO()
    call_command("memory_verify", "--rekey", stdout=out)
    assert "1 documents re-signed" in out.getvalue()
    assert version_chain_verify(draft).intact


def test_rekey_leaves_a_forged_history_broken(draft):
    _sign_without_records(draft)
    with history_rewrite():
        MemoryVersion.objects.filter(document=draft, version=1).update(content="forged")
    with pytest.raises(CommandError, match=r"^1 of \d+ documents have a broken history"):
        call_command("memory_verify", "--rekey", stdout=io.StringIO(), stderr=io.StringIO())
    assert version_chain_verify(draft).problem == "content does not match its hash"

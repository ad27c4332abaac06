"""What a stolen app database credential can and cannot do to history."""

import hashlib
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from memory_app import checks
from memory_app.hashing import sha256_text
from memory_app.models import MemoryDocument
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.chain import history_rewrite
from memory_app.services.documents import head_update
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db

STORE = "workspace_ops"
KEY_A = "a" * 16 + "first-chain-key-for-tests"
KEY_B = "b" * 16 + "second-chain-key-for-tests"


@pytest.fixture
def document(settings) -> MemoryDocument:
    settings.MEMORY_CHAIN_KEY = KEY_A
    settings.MEMORY_CHAIN_RETIRED_KEYS = []
    document = make_document(WorkspaceStoreFactory(slug=STORE), content="first")
    for content in ("second", "third"):
        head_update(document, change="update", author=None, fields={"content": content})
    return document


def _sql(statement: str, params=()) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, params)


def _verify() -> str:
    out = io.StringIO()
    call_command("memory_verify", "--store", STORE, stdout=out)
    return out.getvalue()


def _verify_fails() -> str:
    errors = io.StringIO()
    with pytest.raises(CommandError, match="1 of 1 documents"):
        call_command("memory_verify", "--store", STORE, stdout=io.StringIO(), stderr=errors)
    return errors.getvalue()


def test_the_app_role_is_not_a_superuser():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
        assert cursor.fetchone() == ("memory_app", False)
    with pytest.raises(DatabaseError, match="permission denied"):
        _sql("SET session_replication_role = replica")


@pytest.mark.parametrize(
    "statement",
    [
        "TRUNCATE memory_app_memoryversion CASCADE",
        "TRUNCATE memory_app_memorysourceref",
        "TRUNCATE memory_app_memorydocument CASCADE",
    ],
)
def test_truncate_of_history_is_refused_as_the_app_role(document, statement):
    _sql("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(DatabaseError, match="append-only: TRUNCATE"):
        _sql(statement)
    assert document.versions.count() == 3


def test_update_and_delete_are_refused(document):
    with pytest.raises(DatabaseError, match="append-only: UPDATE"):
        _sql(
            "UPDATE memory_app_memoryversion SET content = 'x' WHERE document_id = %s",
            [document.pk],
        )
    with pytest.raises(DatabaseError, match="append-only: DELETE"):
        _sql("DELETE FROM memory_app_memoryversion WHERE document_id = %s", [document.pk])


def test_a_declared_rewrite_still_cannot_change_who_or_when(document):
    with (
        pytest.raises(DatabaseError, match="append-only: UPDATE"),
        transaction.atomic(),
        history_rewrite(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE memory_app_memoryversion SET author_name = 'mallory' WHERE document_id = %s",
            [document.pk],
        )
    with (
        pytest.raises(DatabaseError, match="append-only: DELETE"),
        transaction.atomic(),
        history_rewrite(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM memory_app_memoryversion WHERE document_id = %s", [document.pk])


def _forge(document: MemoryDocument, content: str) -> None:
    """Rewrite version 2 as the tables' owner and recompute every hash the
    way one would without the key: content, parents and unkeyed links."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SET CONSTRAINTS ALL IMMEDIATE; "
            "ALTER TABLE memory_app_memoryversion DISABLE TRIGGER USER"
        )
        cursor.execute(
            "SELECT id, version, change, content, author_name, created_at "
            "FROM memory_app_memoryversion WHERE document_id = %s ORDER BY version",
            [document.pk],
        )
        previous_chain = previous_sha = ""
        for pk, version, change, old, author, created in cursor.fetchall():
            text = content if version == 2 else old
            sha = sha256_text(text)
            link = json.dumps(
                [previous_chain, version, change, sha, author, created.isoformat()],
                separators=(",", ":"),
            )
            chain = hashlib.sha256(link.encode()).hexdigest()
            cursor.execute(
                "UPDATE memory_app_memoryversion SET content = %s, sha256 = %s, "
                "parent_sha256 = %s, chain_sha256 = %s WHERE id = %s",
                [text, sha, previous_sha, chain, pk],
            )
            previous_chain, previous_sha = chain, sha


def test_a_rewrite_without_the_key_is_detected(document):
    assert "every history chain is intact" in _verify()
    _forge(document, "forged")
    assert "version 1: chain hash does not match" in _verify_fails()


def test_a_rotated_key_keeps_old_history_verifiable_and_rekey_retires_it(document, settings):
    settings.MEMORY_CHAIN_KEY = KEY_B
    settings.MEMORY_CHAIN_RETIRED_KEYS = [KEY_A]
    head_update(document, change="update", author=None, fields={"content": "fourth"})
    status = version_chain_verify(document)
    assert status.intact and status.retired_keys == 3

    settings.MEMORY_CHAIN_RETIRED_KEYS = []
    assert "version 1: signed with an unknown key" in _verify_fails()

    settings.MEMORY_CHAIN_RETIRED_KEYS = [KEY_A]
    out = io.StringIO()
    call_command("memory_verify", "--store", STORE, "--rekey", stdout=out)
    assert "1 documents re-signed" in out.getvalue()
    settings.MEMORY_CHAIN_RETIRED_KEYS = []
    assert "every history chain is intact" in _verify()
    assert [v.content for v in document.versions.order_by("version")] == [
        "first",
        "second",
        "third",
        "fourth",
    ]


def test_rekey_refuses_to_launder_a_forged_history(document, settings):
    _forge(document, "forged")
    settings.MEMORY_CHAIN_KEY = KEY_B
    settings.MEMORY_CHAIN_RETIRED_KEYS = [KEY_A]
    errors = io.StringIO()
    with pytest.raises(CommandError):
        call_command(
            "memory_verify", "--store", STORE, "--rekey", stdout=io.StringIO(), stderr=errors
        )
    assert "chain hash does not match" in errors.getvalue()
    assert "chain hash does not match" in _verify_fails()


def test_the_role_check_is_quiet_for_the_app_role():
    out = io.StringIO()
    call_command("check", "--database", "default", stdout=out)
    assert "W001" not in out.getvalue()


def test_the_role_check_warns_about_a_superuser(monkeypatch):
    class Superuser:
        def cursor(self):
            return self

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def execute(self, query):
            assert "rolsuper" in query

        def fetchone(self):
            return (True,)

    monkeypatch.setattr(checks, "connections", {"default": Superuser()})
    [warning] = checks.database_role_check(None, databases=["default"])
    assert warning.id == "memory_app.W001"

"""`migrate` refuses a PostgreSQL without pgvector before it writes anything."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from memory_app import checks

pytestmark = pytest.mark.django_db


def test_a_server_with_pgvector_passes():
    out = io.StringIO()
    call_command("check", "--database", "default", stdout=out)
    assert "E001" not in out.getvalue()


def test_migrate_stops_at_a_server_without_it_and_says_what_to_do(monkeypatch):
    monkeypatch.setattr(checks, "VECTOR_EXTENSION", "an_extension_this_server_lacks")
    # The checks run before the plan is even made, let alone applied.
    with pytest.raises(SystemCheckError) as refused:
        call_command("migrate", "--plan", skip_checks=False, stdout=io.StringIO())
    assert "has no pgvector" in str(refused.value)
    assert "leave DATABASE_URL unset" in str(refused.value)


def test_migrate_warns_where_the_role_may_not_create_the_extension(monkeypatch):
    # The suite connects as the embedded server's app role, which is no
    # superuser; dblink is on the server, untrusted and not in this database.
    monkeypatch.setattr(checks, "VECTOR_EXTENSION", "dblink")
    [warning] = checks.pgvector_check(None, databases=["default"])
    assert warning.id == "memory_app.W003"
    assert "lacks the 'dblink' extension" in warning.msg
    assert "Have a superuser run CREATE EXTENSION dblink;" in warning.hint


def test_an_extension_the_role_may_create_itself_passes(monkeypatch):
    # pg_trgm is trusted: the owner of a database may create it there.
    monkeypatch.setattr(checks, "VECTOR_EXTENSION", "pg_trgm")
    assert checks.pgvector_check(None, databases=["default"]) == []

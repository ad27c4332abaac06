"""The migration that keys the chain signs intact histories and no forged one."""

import hashlib
import importlib
import json
import pkgutil

import pytest
from django.apps import apps
from django.db import connection

import memory_app.migrations
from memory_app.hashing import sha256_text
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.documents import head_update
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db


def migration_named(suffix: str):
    """Found by name: migration numbers change when branches merge."""
    [name] = [
        m.name
        for m in pkgutil.iter_modules(memory_app.migrations.__path__)
        if m.name.endswith(suffix)
    ]
    return importlib.import_module(f"memory_app.migrations.{name}")


class Editor:
    """The part of a schema editor the data migrations use."""

    @staticmethod
    def execute(statement, params=None):
        with connection.cursor() as cursor:
            cursor.execute(statement, params)


def _unkey(document, *, forge_version: int | None = None) -> None:
    """Rewrite the history as it was before keyed chains (optionally forged)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SET CONSTRAINTS ALL IMMEDIATE; "
            "ALTER TABLE memory_app_memoryversion DISABLE TRIGGER USER"
        )
        previous_chain = ""
        for row in document.versions.order_by("version"):
            link = json.dumps(
                [
                    previous_chain,
                    row.version,
                    row.change,
                    row.sha256,
                    row.author_name,
                    row.created_at.isoformat(),
                ],
                separators=(",", ":"),
            )
            chain = hashlib.sha256(link.encode()).hexdigest()
            content = "forged" if row.version == forge_version else row.content
            cursor.execute(
                "UPDATE memory_app_memoryversion SET chain_sha256 = %s, chain_key_id = '', "
                "content = %s, sha256 = %s WHERE id = %s",
                [chain, content, sha256_text(content), row.pk],
            )
            previous_chain = chain
        cursor.execute("ALTER TABLE memory_app_memoryversion ENABLE TRIGGER USER")


def test_intact_histories_are_signed_and_forged_ones_left_broken():
    store = WorkspaceStoreFactory()
    intact = make_document(store, path="notes/intact", content="one")
    forged = make_document(store, path="notes/forged", content="one")
    for document in (intact, forged):
        head_update(document, change="update", author=None, fields={"content": "two"})
    _unkey(intact)
    _unkey(forged, forge_version=1)
    assert version_chain_verify(intact).problem == "signed with an unknown key"

    migration_named("_history_keyed_chain").sign_existing_histories(apps, Editor())

    assert version_chain_verify(intact).intact
    assert not version_chain_verify(forged).intact
    assert set(forged.versions.values_list("chain_key_id", flat=True)) == {""}

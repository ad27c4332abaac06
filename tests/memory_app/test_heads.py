"""A head locked for a write comes with its head version's refs and hashes,
also when another writer moved the head while this one waited for the lock."""

import threading
import time

import pytest
from django.db import connection, connections, transaction

from memory_app.models import ChangeKind, MemoryDocument
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.documents import head_update
from memory_app.services.heads import head_at, head_locked_by_id
from memory_app.services.versions import SourceRef, version_append
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db


def test_a_locked_head_holds_its_versions_refs_and_hashes():
    document = make_document(WorkspaceStoreFactory(), path="notes/a")
    with transaction.atomic():
        locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
        head_update(
            locked,
            change=ChangeKind.UPDATE,
            author=None,
            fields={"content": "Second."},
            source_refs=[SourceRef("run", "r-2"), SourceRef("incident", "INC-2")],
        )
    with transaction.atomic():
        head = head_at(document.store_id, "notes/a", lock=True)
    second = locked.versions.get(version=2)
    assert head.document.version == 2 and head.document.content == "Second."
    assert head.refs == [SourceRef("run", "r-2"), SourceRef("incident", "INC-2")]
    assert (head.link.sha256, head.link.chain_sha256) == (second.sha256, second.chain_sha256)
    assert head_at(document.store_id, "notes/a") == head
    assert head_at(document.store_id, "notes/none") is None


@pytest.mark.django_db(transaction=True)
def test_a_head_moved_while_waiting_for_the_lock_chains_to_the_new_version():
    document = make_document(WorkspaceStoreFactory(), path="notes/race")
    holding, moved = threading.Event(), threading.Event()

    def rival() -> None:
        try:
            with transaction.atomic():
                rival_head = MemoryDocument.objects.select_for_update().get(pk=document.pk)
                holding.set()
                _wait_for_a_lock_waiter()
                head_update(
                    rival_head,
                    change=ChangeKind.UPDATE,
                    author=None,
                    fields={"content": "The rival's."},
                    source_refs=[SourceRef("run", "rival")],
                )
            moved.set()
        finally:
            connections.close_all()

    thread = threading.Thread(target=rival)
    thread.start()
    assert holding.wait(30)
    with transaction.atomic():
        head = head_locked_by_id(document.pk)
        assert moved.is_set()
        assert head.document.version == 2 and head.refs == [SourceRef("run", "rival")]
        head.document.version = 3
        version_append(
            document=head.document, change=ChangeKind.UPDATE, author=None, previous=head.link
        )
        MemoryDocument.objects.filter(pk=document.pk).update(version=3)
    thread.join()
    assert version_chain_verify(MemoryDocument.objects.get(pk=document.pk)).intact


def _wait_for_a_lock_waiter() -> None:
    """Until another session waits for a row lock (the test's main thread),
    as long as a loaded machine takes to get it there."""
    with connection.cursor() as cursor:
        for _ in range(3000):
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("nobody waited for the lock")

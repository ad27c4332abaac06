"""The database itself refuses data that breaks the model's rules."""

import pytest
from django.db import (
    DataError,
    IntegrityError,
    InternalError,
    ProgrammingError,
    connection,
    transaction,
)

from memory_app.models import (
    Conversation,
    MemoryDocument,
    MemoryStore,
    MemoryVersion,
    Scope,
    System,
)
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db

HISTORY_REFUSED = (InternalError, ProgrammingError)


def _refused(statement, params=()):
    with (
        pytest.raises((*HISTORY_REFUSED, IntegrityError)) as caught,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement, params)
    return caught.value


def test_two_documents_cannot_share_a_path_in_a_store():
    store = WorkspaceStoreFactory()
    make_document(store, path="runbooks/nginx")
    with pytest.raises(IntegrityError), transaction.atomic():
        make_document(store, path="runbooks/nginx")


def test_the_same_path_is_fine_in_another_store():
    make_document(WorkspaceStoreFactory(), path="runbooks/nginx")
    assert make_document(WorkspaceStoreFactory(), path="runbooks/nginx").version == 1


@pytest.mark.parametrize(
    "bad_path",
    ["/leading", "trailing/", "Upper/case", "a//b", "dots/../escape", "spa ce", "", "x" * 201],
)
def test_the_database_rejects_a_malformed_path(bad_path):
    store = WorkspaceStoreFactory()
    with pytest.raises((IntegrityError, DataError)), transaction.atomic():
        MemoryDocument.objects.create(
            store=store,
            path=bad_path,
            title="t",
            content="c",
            content_sha256="0",
            trust="agent_draft",
        )


def test_importance_above_ten_is_rejected():
    store = WorkspaceStoreFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryDocument.objects.create(
            store=store,
            path="a",
            title="t",
            content="c",
            content_sha256="0",
            trust="agent_draft",
            importance=11,
        )


def test_an_unknown_trust_level_is_rejected():
    store = WorkspaceStoreFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryDocument.objects.create(
            store=store, path="a", title="t", content="c", content_sha256="0", trust="gospel"
        )


def test_a_workspace_store_cannot_have_an_owner(owner):
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryStore.objects.create(slug="ws-owned", scope=Scope.WORKSPACE, owner=owner)


def test_a_user_store_needs_an_owner():
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryStore.objects.create(slug="user-nobody", scope=Scope.USER)


def test_a_user_store_cannot_also_be_bound_to_a_system(owner):
    system = System.objects.create(slug="payments", name="Payments")
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryStore.objects.create(slug="user-x", scope=Scope.USER, owner=owner, system=system)


def test_a_system_store_needs_its_system():
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryStore.objects.create(slug="system-none", scope=Scope.SYSTEM)


def test_a_conversation_store_needs_its_conversation():
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryStore.objects.create(slug="conversation-none", scope=Scope.CONVERSATION)


def test_a_user_has_at_most_one_store(owner):
    MemoryStore.objects.create(slug="user-a", scope=Scope.USER, owner=owner)
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryStore.objects.create(slug="user-b", scope=Scope.USER, owner=owner)


def test_a_conversation_has_at_most_one_store(owner):
    conversation = Conversation.objects.create(external_id="c-1", created_by=owner)
    MemoryStore.objects.create(slug="conv-a", scope=Scope.CONVERSATION, conversation=conversation)
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryStore.objects.create(
            slug="conv-b", scope=Scope.CONVERSATION, conversation=conversation
        )


def test_an_unknown_scope_is_rejected():
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryStore.objects.create(slug="odd", scope="galaxy")


def test_raw_sql_cannot_update_a_version():
    document = make_document(WorkspaceStoreFactory(), content="original")
    error = _refused(
        "UPDATE memory_app_memoryversion SET content = 'rewritten' WHERE document_id = %s",
        [document.pk],
    )
    assert "append-only" in str(error)
    assert MemoryVersion.objects.get(document=document).content == "original"


def test_raw_sql_cannot_delete_a_version():
    document = make_document(WorkspaceStoreFactory())
    error = _refused("DELETE FROM memory_app_memoryversion WHERE document_id = %s", [document.pk])
    assert "append-only" in str(error)
    assert MemoryVersion.objects.filter(document=document).count() == 1


def test_the_orm_cannot_update_a_version_either():
    document = make_document(WorkspaceStoreFactory())
    with pytest.raises(HISTORY_REFUSED), transaction.atomic():
        MemoryVersion.objects.filter(document=document).update(reason="tamper")


def test_source_refs_are_append_only_too():
    from memory_app.services.versions import SourceRef

    document = make_document(
        WorkspaceStoreFactory(), source_refs=[SourceRef(kind="run", ref="run-1")]
    )
    _refused(
        "UPDATE memory_app_memorysourceref SET ref = 'run-2' "
        "WHERE version_id IN (SELECT id FROM memory_app_memoryversion WHERE document_id = %s)",
        [document.pk],
    )
    assert document.versions.get().source_refs.get().ref == "run-1"


def test_two_versions_cannot_share_a_number():
    document = make_document(WorkspaceStoreFactory())
    first = document.versions.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryVersion.objects.create(
            document=document,
            version=1,
            change="update",
            title="t",
            content="x",
            sha256="0",
            chain_sha256="0",
            author_name="x",
            created_at=first.created_at,
        )


def test_the_vector_extension_is_installed():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
    major, minor = (int(part) for part in version.split(".")[:2])
    assert (major, minor) >= (0, 8)

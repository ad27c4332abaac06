"""Direct changes by people: pins and rollbacks (DESIGN §6, §9)."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from memory_app.actors import actor_for
from memory_app.errors import NotFound
from memory_app.models import ChangeKind, DocState, MemoryDocument
from memory_app.policy import check_can_curate, check_can_govern
from memory_app.services.documents import embedding_for, head_update
from memory_app.services.events import event_record
from memory_app.services.guard import (
    agent_text_fields,
    recording_refusals,
    scan_for_store,
    scan_note,
    scan_record,
)

_RESTORED_FIELDS = ("doc_type", "tags", "entities", "importance")


@transaction.atomic
def document_always_inject_set(
    *, user: AbstractBaseUser, document: MemoryDocument, value: bool
) -> MemoryDocument:
    """Pin or unpin a document; every flip is an event (who, when, from, to).

    Permission: `can_govern` (workspace pins need a reviewer, a system's
    pins its managers; private stores whoever may curate the document).
    """
    check_can_govern(user, document)
    locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
    previous = locked.always_inject
    if previous != value:
        MemoryDocument.objects.filter(pk=locked.pk).update(always_inject=value)
        locked.always_inject = value
        event_record(
            "memory.document.always_inject",
            principal=user,
            document=locked,
            payload={"from": previous, "to": value, "path": locked.path},
        )
    return locked


def document_rollback(
    *, user: AbstractBaseUser, document: MemoryDocument, version: int, reason: str = ""
) -> MemoryDocument:
    """Make an old version's content current again, as a new version.

    History is append-only: nothing is rewritten, the rollback is one more
    link in the chain with its actor and reason. Emits
    `memory.document.rolled_back`; a version whose text is the current one
    changes nothing and records nothing (the head's version stays). The
    reason, then the text brought back, are scanned first under the store's
    rules (422, recorded): an old version may hold what today's scanner
    refuses, and a rollback must not be the way around it.
    """
    check_can_curate(user, document)
    scan_note(user, reason, tool="document_rollback", store=document.store, field="reason")
    old = document.versions.filter(version=version).first()
    if old is None:
        raise NotFound(f"The document has no version {version}.")
    with recording_refusals(actor_for(user), tool="document_rollback", store=document.store.slug):
        findings = scan_for_store(
            agent_text_fields(
                title=old.title,
                recall_hint=old.recall_hint,
                content=old.content,
                tags=old.metadata.get("tags", ()),
                entities=old.metadata.get("entities"),
            ),
            document.store,
        )
    return _rolled_back(
        user=user, document=document, version=version, reason=reason, findings=findings
    )


@transaction.atomic
def _rolled_back(
    *, user: AbstractBaseUser, document: MemoryDocument, version: int, reason: str, findings
) -> MemoryDocument:
    locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
    old = locked.versions.get(version=version)
    fields = {"title": old.title, "recall_hint": old.recall_hint, "content": old.content}
    fields |= {k: old.metadata[k] for k in _RESTORED_FIELDS if k in old.metadata}
    changed = head_update(
        locked,
        change=ChangeKind.ROLLBACK,
        author=user,
        fields=fields,
        embedding=embedding_for(old.title, old.recall_hint, old.content),
        reason=reason or f"rollback to version {version}",
        **scan_record(findings),
    )
    if not changed:
        return locked
    event_record(
        "memory.document.rolled_back",
        principal=user,
        document=locked,
        payload={"to_version": version, "new_version": locked.version, "reason": reason},
    )
    return locked


def document_state_set(
    *, user: AbstractBaseUser, document: MemoryDocument, tombstoned: bool, reason: str = ""
) -> MemoryDocument:
    """Tombstone or restore a document, as a new version either way.

    Permission: `can_govern`, as for pins. Emits `memory.document.tombstoned`
    or `memory.document.restored`. The reason is scanned first (422,
    recorded): it is kept in the history.
    """
    scan_note(user, reason, tool="document_state_set", store=document.store, field="reason")
    return _state_set(user=user, document=document, tombstoned=tombstoned, reason=reason)


@transaction.atomic
def _state_set(
    *, user: AbstractBaseUser, document: MemoryDocument, tombstoned: bool, reason: str
) -> MemoryDocument:
    check_can_govern(user, document)
    locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
    state = DocState.TOMBSTONED if tombstoned else DocState.ACTIVE
    changed = head_update(
        locked,
        change=ChangeKind.TOMBSTONE if tombstoned else ChangeKind.RESTORE,
        author=user,
        fields={"state": state},
        reason=reason,
    )
    if changed:
        event_record(
            "memory.document.tombstoned" if tombstoned else "memory.document.restored",
            principal=user,
            document=locked,
            payload={"path": locked.path, "version": locked.version, "reason": reason},
        )
    return locked

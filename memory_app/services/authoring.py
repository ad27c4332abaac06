"""People writing memory directly: a system's managers on its card, a user
in their own store (DESIGN §6). Scanned like any write, recorded as
`user_authored` versions with the person as author."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from memory_app.actors import actor_for
from memory_app.errors import InvalidInput, PermissionDenied
from memory_app.models import ChangeKind, DocType, MemoryDocument, MemoryStore, Scope, Trust
from memory_app.paths import path_from_title
from memory_app.policy import can_curate_store, check_can_curate, check_document_writable
from memory_app.services.documents import document_create, embedding_for, head_update
from memory_app.services.events import event_record
from memory_app.services.guard import check_sizes, recording_refusals, scan_for_store, scan_record
from memory_app.services.titles import title_from_content

AUTHORED_SCOPES = (Scope.SYSTEM, Scope.USER)


def _scan(user, store: MemoryStore, title: str, content: str, path: str) -> dict:
    check_sizes(content=content, path=path)
    if not content.strip():
        message = "A memory needs some content."
        raise InvalidInput(message, fields={"content": [message]})
    with recording_refusals(actor_for(user), tool="page", store=store.slug):
        findings = scan_for_store({"path": path, "title": title, "content": content}, store)
    return scan_record(findings)


def memory_author(
    *,
    user: AbstractBaseUser,
    store: MemoryStore,
    content: str,
    title: str = "",
    path: str = "",
    doc_type: str = DocType.FACT,
) -> MemoryDocument:
    """Add a memory as a person. Permission: may curate the store (a system's
    manager, the owner of a user store, a reviewer); system and user stores only.
    An empty title is derived from the content."""
    if store.scope not in AUTHORED_SCOPES or not can_curate_store(user, store):
        raise PermissionDenied("You may not add memory to this store.")
    if store.scope == Scope.USER:
        doc_type = DocType.USER_PREFERENCE
    title = title.strip() or title_from_content(content)
    path = path or path_from_title(title)
    scanned = _scan(user, store, title, content, path)
    try:
        with transaction.atomic():
            document = document_create(
                store=store,
                path=path,
                title=title,
                content=content,
                doc_type=doc_type,
                trust=Trust.USER_AUTHORED,
                author=user,
                embedding=embedding_for(title, "", content),
                **scanned,
            )
    except IntegrityError:
        message = f"{path} already exists in this store; edit that memory instead."
        raise InvalidInput(message, fields={"path": [message]}) from None
    event_record(
        "memory.document.written",
        principal=user,
        document=document,
        payload={"via": "page", "store": store.slug, "path": path, "outcome": "created"},
    )
    return document


def memory_edit(
    *, user: AbstractBaseUser, document: MemoryDocument, title: str, content: str
) -> MemoryDocument:
    """A person's edit: a new `user_authored` version. Permission: may curate.
    An empty title is derived from the content."""
    check_can_curate(user, document)
    title = title.strip() or title_from_content(content)
    scanned = _scan(user, document.store, title, content, document.path)
    with transaction.atomic():
        locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
        check_document_writable(locked.state)
        changed = head_update(
            locked,
            change=ChangeKind.UPDATE,
            author=user,
            fields={"title": title, "content": content, "trust": Trust.USER_AUTHORED},
            embedding=embedding_for(title, locked.recall_hint, content),
            **scanned,
        )
    if changed:
        event_record(
            "memory.document.written",
            principal=user,
            document=locked,
            payload={"via": "page", "path": locked.path, "outcome": "updated"},
        )
    return locked

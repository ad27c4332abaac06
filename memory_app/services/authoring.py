"""People writing memory directly: a system's managers on its card, a user
in their own store, a reviewer in a workspace store (DESIGN §6). Scanned
like any write, with the person as author: `user_authored` versions, or
`admin_approved` in a workspace store, where only reviewed memory lives."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from memory_app.access import store_ref
from memory_app.actors import actor_for
from memory_app.errors import Conflict, InvalidInput, PermissionDenied
from memory_app.models import ChangeKind, DocType, MemoryDocument, MemoryStore, Scope, Trust
from memory_app.paths import path_from_title
from memory_app.policy import can_author_store, check_can_curate, check_document_writable
from memory_app.services.documents import document_create, embedding_for, head_update
from memory_app.services.events import event_record
from memory_app.services.guard import (
    agent_text_fields,
    check_sizes,
    recording_refusals,
    scan_for_store,
    scan_record,
)
from memory_app.services.titles import title_from_content
from memory_app.services.versions import SourceRef, head_source_refs


@dataclass(frozen=True)
class AuthoredMetadata:
    """What a person may set besides title and content."""

    recall_hint: str = ""
    tags: Sequence[str] = ()
    entities: dict = field(default_factory=dict)
    importance: int = 5
    expires_at: datetime | None = None
    # None: an edit keeps the head's source refs.
    source_refs: Sequence[SourceRef] | None = ()

    def head_fields(self) -> dict:
        return {
            "recall_hint": self.recall_hint,
            "tags": sorted(set(self.tags)),
            "entities": dict(self.entities),
            "importance": self.importance,
            "expires_at": self.expires_at,
        }


def _trust(store: MemoryStore) -> str:
    return Trust.ADMIN_APPROVED if store.scope == Scope.WORKSPACE else Trust.USER_AUTHORED


def _scan(user, store: MemoryStore, title, content, path, meta: AuthoredMetadata) -> dict:
    check_sizes(content=content, path=path)
    if not content.strip():
        message = "A memory needs some content."
        raise InvalidInput(message, fields={"content": [message]})
    texts = agent_text_fields(
        path=path,
        title=title,
        content=content,
        recall_hint=meta.recall_hint,
        tags=meta.tags,
        entities=meta.entities,
        source_refs=meta.source_refs or (),
    )
    with recording_refusals(actor_for(user), tool="page", store=store.slug):
        findings = scan_for_store(texts, store)
    return scan_record(findings)


def memory_author(
    *,
    user: AbstractBaseUser,
    store: MemoryStore,
    content: str,
    title: str = "",
    path: str = "",
    doc_type: str = DocType.FACT,
    metadata: AuthoredMetadata | None = None,
) -> MemoryDocument:
    """Add a memory as a person. Permission: `can_author_store` (a system's
    manager, the owner of a user store, a reviewer; workspace stores need a
    reviewer). An empty title is derived from the content."""
    if not can_author_store(user, store):
        raise PermissionDenied("You may not add memory to this store.")
    if store.scope == Scope.USER:
        doc_type = DocType.USER_PREFERENCE
    meta = metadata or AuthoredMetadata()
    title = title.strip() or title_from_content(content)
    path = path or path_from_title(title)
    scanned = _scan(user, store, title, content, path, meta)
    try:
        with transaction.atomic():
            document = document_create(
                store=store,
                path=path,
                title=title,
                content=content,
                doc_type=doc_type,
                trust=_trust(store),
                author=user,
                embedding=embedding_for(title, meta.recall_hint, content),
                source_refs=meta.source_refs or (),
                **meta.head_fields(),
                **scanned,
            )
    except IntegrityError:
        message = f"{path} already exists in this store; edit that memory instead."
        raise InvalidInput(message, fields={"path": [message]}) from None
    event_record(
        "memory.document.written",
        principal=user,
        document=document,
        payload={"via": "page", "store": store_ref(store), "path": path, "outcome": "created"},
    )
    return document


def memory_edit(
    *,
    user: AbstractBaseUser,
    document: MemoryDocument,
    base_version: int | None,
    title: str,
    content: str,
    metadata: AuthoredMetadata | None = None,
) -> MemoryDocument:
    """A person's edit: a new version by them. Permission: may curate. Without
    `metadata` the document's metadata is kept; without its `source_refs`,
    the head's evidence is. An empty title is derived from the content.

    `base_version` is the version the person edited: when another writer
    has saved since, the edit is refused (Conflict) rather than replacing
    their version unseen, as `memory_patch` refuses a stale sha (DESIGN
    §3.5). None, from a form that does not say, is refused the same way."""
    check_can_curate(user, document)
    title = title.strip() or title_from_content(content)
    scanned = _scan(
        user, document.store, title, content, document.path, metadata or _kept(document)
    )
    fields = {"title": title, "content": content, "trust": _trust(document.store)}
    if metadata is not None:
        fields |= metadata.head_fields()
    with transaction.atomic():
        locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
        check_document_writable(locked.state)
        _check_base(locked, base_version)
        kept_refs = head_source_refs(locked)
        sent = metadata.source_refs if metadata is not None else None
        refs = kept_refs if sent is None else list(sent)
        changed = head_update(
            locked,
            change=ChangeKind.UPDATE,
            author=user,
            fields=fields,
            embedding=embedding_for(title, fields.get("recall_hint", locked.recall_hint), content),
            force=refs != kept_refs,
            source_refs=refs,
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


def _check_base(locked: MemoryDocument, base_version: int | None) -> None:
    """Of two people saving edits of one version, the second is told."""
    if base_version == locked.version:
        return
    detail = (
        f"This memory changed meanwhile: v{locked.version} was saved (by someone else, "
        f"an agent or another tab) after this form was drawn from v{base_version}."
        if base_version is not None
        else "This form does not say which version of this memory it was drawn from "
        f"(it is from an older page), so it could undo a newer one: v{locked.version} "
        "is there now."
    )
    raise Conflict(detail, current_sha256=locked.content_sha256, current_version=locked.version)


def _kept(document: MemoryDocument) -> AuthoredMetadata:
    """The document's own metadata, for scanning an edit that leaves it alone."""
    return AuthoredMetadata(
        recall_hint=document.recall_hint,
        tags=document.tags,
        entities=document.entities,
        importance=document.importance,
        expires_at=document.expires_at,
        source_refs=None,
    )

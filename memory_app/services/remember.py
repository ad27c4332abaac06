"""memory_remember: an agent writes a document (DESIGN §3, API.md)."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction

from memory_app.access import access_store
from memory_app.actors import Actor
from memory_app.models import ChangeKind, DocState, MemoryDocument, Scope, Trust
from memory_app.paths import path_from_title
from memory_app.policy import check_store_write, check_write_quota
from memory_app.services.dedup import near_duplicate
from memory_app.services.documents import (
    WriteResult,
    document_create,
    embedding_for,
    head_update,
)
from memory_app.services.events import event_record
from memory_app.services.guard import (
    agent_text_fields,
    check_sizes,
    recording_refusals,
    scan_for_store,
    scan_record,
)
from memory_app.services.titles import title_from_content
from memory_app.services.versions import SourceRef


@dataclass(frozen=True)
class RememberInput:
    store: str
    content: str
    title: str = ""
    path: str | None = None
    doc_type: str = "note"
    recall_hint: str = ""
    tags: Sequence[str] = ()
    entities: dict = field(default_factory=dict)
    always_inject: bool = False
    importance: int = 5
    expires_at: datetime | None = None
    source_refs: Sequence[SourceRef] = ()

    @property
    def effective_title(self) -> str:
        return self.title or title_from_content(self.content)


def memory_remember(*, actor: Actor, data: RememberInput) -> WriteResult:
    """Create or update a document in a store the actor may write.

    Permission: read access to the store (else 404) and the scope policy
    (else 403 policy_denied, recorded as an event). The content is scanned
    (422 write_blocked, recorded) and deduplicated against the store. Writes
    a version with source refs in one transaction; agent writes are
    `agent_draft`. Emits `memory.document.written`.
    """
    path = data.path or path_from_title(data.effective_title)
    check_sizes(content=data.content, path=path)
    store = access_store(actor, data.store)
    # The refusal event names the store only: a refused path or title may be
    # the very text the scanner objects to.
    with recording_refusals(actor, tool="memory_remember", store=data.store):
        check_store_write(actor, store, doc_type=data.doc_type)
        findings = scan_for_store(
            agent_text_fields(
                path=path,
                title=data.effective_title,
                recall_hint=data.recall_hint,
                content=data.content,
                tags=data.tags,
                entities=data.entities,
                source_refs=data.source_refs,
            ),
            store,
        )
    embedding = embedding_for(data.effective_title, data.recall_hint, data.content)
    fields = {
        "title": data.effective_title,
        "recall_hint": data.recall_hint,
        "content": data.content,
        "doc_type": data.doc_type,
        "trust": Trust.AGENT_DRAFT,
        "state": DocState.ACTIVE,
        # Pins in shared scopes need a reviewer (DESIGN §9); agents may pin
        # only in their own user and conversation stores.
        "always_inject": data.always_inject and store.scope in (Scope.USER, Scope.CONVERSATION),
        "tags": sorted(set(data.tags)),
        "entities": data.entities,
        "importance": data.importance,
        "expires_at": data.expires_at,
    }
    version_kwargs = {
        "on_behalf_of": actor.on_behalf_of,
        "run_id": actor.run_id,
        "source_refs": data.source_refs,
        **scan_record(findings),
    }
    with transaction.atomic():
        check_write_quota(actor)
        result = _write(actor, store, path, fields, embedding, version_kwargs)
    if result.document.embedding is None:
        _embed_later(result.document)
    event_record(
        "memory.document.written",
        actor=actor,
        document=result.document,
        payload={
            "tool": "memory_remember",
            "outcome": result.outcome,
            "store": data.store,
            "path": result.document.path,
            "version": result.document.version,
        },
    )
    return result


def _write(actor, store, path, fields, embedding, version_kwargs) -> WriteResult:
    """Update the document at `path`, else a near-duplicate, else create one."""
    existing = _locked(store, path)
    outcome = "updated"
    if existing is None:
        duplicate = near_duplicate(store, content=fields["content"], embedding=embedding)
        if duplicate is not None:
            existing = MemoryDocument.objects.select_for_update().get(pk=duplicate.pk)
            outcome = "deduplicated"
        else:
            try:
                with transaction.atomic():
                    document = document_create(
                        store=store,
                        path=path,
                        author=actor.agent,
                        embedding=embedding,
                        **fields_for_create(fields),
                        **version_kwargs,
                    )
                return WriteResult(document, "created")
            except IntegrityError:
                # A concurrent writer created the path first: update theirs.
                existing = _locked(store, path)
    changed = head_update(
        existing,
        change=ChangeKind.UPDATE,
        author=actor.agent,
        fields=fields,
        embedding=embedding,
        **version_kwargs,
    )
    return WriteResult(existing, outcome if changed else "unchanged")


def _embed_later(document: MemoryDocument) -> None:
    from memory_app.tasks import embed_document

    transaction.on_commit(lambda: embed_document.delay(str(document.pk)))


def _locked(store, path) -> MemoryDocument | None:
    return MemoryDocument.objects.select_for_update().filter(store=store, path=path).first()


def fields_for_create(fields: dict) -> dict:
    """document_create sets state itself (a new document is active)."""
    return {name: value for name, value in fields.items() if name != "state"}

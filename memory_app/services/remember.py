"""memory_remember: an agent writes a document (DESIGN §3, API.md)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import NamedTuple

import numpy as np
from django.db import transaction

from memory_app.access import access_store
from memory_app.actors import Actor
from memory_app.models import ChangeKind, MemoryDocument, MemoryStore, Scope, Trust
from memory_app.paths import path_from_title
from memory_app.policy import (
    check_agent_may_overwrite,
    check_document_writable,
    check_store_write,
    check_write_quota,
)
from memory_app.queueing import send_after_commit
from memory_app.services.dedup import near_duplicate
from memory_app.services.documents import (
    WriteResult,
    document_insert,
    embedding_for,
    embedding_soon,
    head_update,
    hold_store_for_new_document,
    vector_holds,
)
from memory_app.services.events import event_record
from memory_app.services.guard import (
    agent_text_fields,
    check_sizes,
    recording_refusals,
    scan_for_store,
    scan_record,
)
from memory_app.services.heads import Head, head_at, head_locked_by_id
from memory_app.services.stores import store_saved
from memory_app.services.titles import title_from_content
from memory_app.services.versions import SourceRef


class _Unsent(Enum):
    UNSENT = "unsent"


# An optional field the caller did not send: a new document takes the
# default, an existing one keeps its value (API.md: a re-save without the
# optional fields keeps them; fields that are sent replace).
UNSENT = _Unsent.UNSENT
DEFAULTS = {
    "doc_type": "note",
    "recall_hint": "",
    "tags": (),
    "entities": {},
    "always_inject": False,
    "importance": 5,
    "expires_at": None,
    "source_refs": (),
}


@dataclass(frozen=True)
class RememberInput:
    store: str
    content: str
    title: str = ""
    path: str | None = None
    doc_type: str | _Unsent = UNSENT
    recall_hint: str | _Unsent = UNSENT
    tags: Sequence[str] | _Unsent = UNSENT
    entities: dict | _Unsent = UNSENT
    always_inject: bool | _Unsent = UNSENT
    importance: int | _Unsent = UNSENT
    expires_at: datetime | _Unsent | None = UNSENT
    source_refs: Sequence[SourceRef] | _Unsent = UNSENT

    @property
    def effective_title(self) -> str:
        return self.title or title_from_content(self.content)

    def sent(self) -> dict:
        """The optional fields the caller sent."""
        return {name: getattr(self, name) for name in DEFAULTS if getattr(self, name) is not UNSENT}

    def resolved(self, head: Head | None) -> dict:
        """Each optional field as the write applies it: sent, else kept from
        the `head` (its document and its version's source refs), else the
        default."""
        kept = dict(DEFAULTS)
        if head is not None:
            kept |= {
                name: getattr(head.document, name) for name in DEFAULTS if name != "source_refs"
            }
            kept["source_refs"] = head.refs
        return kept | self.sent() | {"title": self.effective_title}


def memory_remember(*, actor: Actor, data: RememberInput) -> WriteResult:
    """Create or update a document in a store the actor may write.

    Permission: read access to the store (else 404) and the scope policy
    (else 403 policy_denied, recorded as an event). The content is scanned
    (422 write_blocked, recorded) and deduplicated against the store. Writes
    a version with source refs in one transaction; agent writes are
    `agent_draft`. Optional fields not sent keep the updated document's
    values. Emits `memory.document.written` unless the outcome is "unchanged".
    """
    path = data.path or path_from_title(data.effective_title)
    check_sizes(content=data.content, path=path)
    store = access_store(actor, data.store)
    # What the write will keep, to judge and scan the document it leaves.
    found = head_at(store.pk, path)
    values = data.resolved(found)
    # The refusal event names the store only: a refused path or title may be
    # the very text the scanner objects to.
    with recording_refusals(actor, tool="memory_remember", store=data.store):
        check_store_write(actor, store, doc_type=values["doc_type"])
        if found is not None:
            check_document_writable(found.document.state, found.document.expires_at)
            check_agent_may_overwrite(found.document)
        embedded = (values["title"], values["recall_hint"], data.content)
        holds = vector_holds(found and found.document, *embedded)
        # The model runs while the text is scanned and the quota counted.
        embedding = None if holds else embedding_soon(*embedded)
        findings = scan_for_store(
            agent_text_fields(
                path=path,
                title=values["title"],
                recall_hint=values["recall_hint"],
                content=data.content,
                tags=values["tags"],
                entities=values["entities"],
                source_refs=values["source_refs"],
            ),
            store,
        )
    version_kwargs = {
        "on_behalf_of": actor.on_behalf_of,
        "run_id": actor.run_id,
        **scan_record(findings),
    }
    # The event commits with the write: one commit (and one flush to disk)
    # per write, and no written document without its event.
    with (
        recording_refusals(actor, tool="memory_remember", store=data.store),
        transaction.atomic(),
    ):
        check_write_quota(actor)
        vector = embedding.result() if embedding is not None else None
        store = store_saved(store)
        result = _write(actor, store, path, data, Embedded(embedded, vector), version_kwargs, found)
        if result.document.embedding is None:
            _embed_later(result.document)
        # An unchanged write wrote nothing: no event, so it claims no
        # conversation either (conversation_claim reads kept writes from them).
        if result.outcome != "unchanged":
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


class Embedded(NamedTuple):
    """The text a write gave the model (title, recall hint, content) and its
    vector (None: not computed, or the model failed)."""

    text: tuple[str, str, str]
    vector: np.ndarray | None

    def vector_for(self, fields: dict) -> np.ndarray | None:
        """The vector of the text `fields` leave: this one when that is the
        text, else the model's now.

        They differ when a merge keeps what it does not send (a recall hint)
        from the near-duplicate it updates, or when the head at the path
        moved before the write locked it: a vector is of its document's text.
        """
        text = (fields["title"], fields["recall_hint"], fields["content"])
        return self.vector if text == self.text else embedding_for(*text)


def _head_fields(data: RememberInput, store: MemoryStore, values: dict) -> dict:
    """The head the write leaves, with the version's source refs, from the
    optional fields as `data.resolved` gave them."""
    always_inject = values["always_inject"]
    if data.always_inject is not UNSENT:
        # Pins in shared scopes need a reviewer (DESIGN §9); agents may pin
        # only in their own user and conversation stores.
        always_inject = always_inject and store.scope in (Scope.USER, Scope.CONVERSATION)
    fields = {
        "title": values["title"],
        "recall_hint": values["recall_hint"],
        "content": data.content,
        "doc_type": values["doc_type"],
        "trust": Trust.AGENT_DRAFT,
        "always_inject": always_inject,
        "tags": sorted(set(values["tags"])),
        "entities": dict(values["entities"]),
        "importance": values["importance"],
        "expires_at": values["expires_at"],
    }
    return {**fields, "source_refs": list(values["source_refs"])}


def _write(actor, store, path, data, embedded, version_kwargs, found) -> WriteResult:
    """Update the document at `path`, else a near-duplicate, else create one.

    `found` is the head read at `path` before the transaction (or None).
    A path found empty is not read again: if a concurrent writer takes it
    first, the insert says so.
    """
    head = head_at(store.pk, path, lock=True) if found is not None else None
    outcome = "updated"
    if head is None:
        hold_store_for_new_document(store)
        duplicate = near_duplicate(store, content=data.content, embedding=embedded.vector)
        if duplicate is not None:
            head = head_locked_by_id(duplicate)
            outcome = "deduplicated"
        else:
            fields = _head_fields(data, store, data.resolved(None))
            document = document_insert(
                store=store,
                path=path,
                author=actor.agent,
                embedding=embedded.vector_for(fields),
                **fields,
                **version_kwargs,
            )
            if document is not None:
                return WriteResult(document, "created")
            # A concurrent writer created the path first: update theirs.
            head = head_at(store.pk, path, lock=True)
    # A document deleted or replaced stays so; one held for review keeps
    # its state while it is written.
    check_document_writable(head.document.state, head.document.expires_at)
    check_agent_may_overwrite(head.document)
    existing = _own(head.document, store)
    fields = _head_fields(data, store, data.resolved(head))
    source_refs = fields.pop("source_refs")
    changed = head_update(
        existing,
        change=ChangeKind.UPDATE,
        author=actor.agent,
        fields=fields,
        embedding=embedded.vector_for(fields),
        source_refs=source_refs,
        previous=head.link,
        **version_kwargs,
    )
    return WriteResult(existing, outcome if changed else "unchanged")


def _embed_later(document: MemoryDocument) -> None:
    from memory_app.tasks import embed_document

    send_after_commit(lambda: embed_document.delay(str(document.pk)), what="a document's embedding")


def _own(document: MemoryDocument, store: MemoryStore) -> MemoryDocument:
    """The document with its store attached: the response names the store,
    which would otherwise be read again."""
    document.store = store
    return document

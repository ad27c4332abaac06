"""memory_patch: optimistic-concurrency edits of one document (API.md)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from memory_app.actors import Actor
from memory_app.errors import Conflict, InvalidInput
from memory_app.models import ChangeKind, MemoryDocument, Trust
from memory_app.policy import (
    check_agent_may_overwrite,
    check_document_writable,
    check_store_write,
    check_write_quota,
)
from memory_app.safety.registry import Finding
from memory_app.services.documents import WriteResult, embedding_for, head_update, vector_holds
from memory_app.services.events import event_record
from memory_app.services.guard import (
    agent_text_fields,
    check_sizes,
    recording_refusals,
    scan_for_store,
    scan_record,
)
from memory_app.services.heads import head_locked_by_id


@dataclass(frozen=True)
class Edit:
    old: str
    new: str


def apply_edits(content: str, edits: Sequence[Edit]) -> str:
    """Apply each edit in order; each `old` must occur exactly once."""
    problems: list[str] = []
    for index, edit in enumerate(edits):
        count = content.count(edit.old) if edit.old else 0
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            problems.append(f"edits[{index}].old {where}; it must occur exactly once.")
            continue
        content = content.replace(edit.old, edit.new, 1)
    if problems:
        raise InvalidInput("An edit did not apply.", fields={"edits": problems})
    return content


def _check_sha(document: MemoryDocument, expected_sha256: str) -> None:
    if document.content_sha256 != expected_sha256:
        raise Conflict(
            "The document changed since you read it; read it again and retry.",
            current_sha256=document.content_sha256,
            current_version=document.version,
        )


def _check_fields_unmoved(read: MemoryDocument, locked: MemoryDocument, sent: dict) -> None:
    """409 when a field this patch sets to a new value (`sent`, as the head
    will hold it) was changed by another writer between this call's read
    and its lock: of two writers racing on one field within their calls
    exactly one wins, as for the content.
    Different fields merge, and so does setting the value already there.
    (`expected_sha256` is the content's hash: a patch read long before, of
    metadata only, cannot be told from a fresh one.)"""
    if any(getattr(read, name) != getattr(locked, name) != value for name, value in sent.items()):
        raise Conflict(
            "Another writer changed the same fields; read it again and retry.",
            current_sha256=locked.content_sha256,
            current_version=locked.version,
        )


def memory_patch(
    *,
    actor: Actor,
    document: MemoryDocument,
    expected_sha256: str,
    content: str | None = None,
    edits: Sequence[Edit] = (),
    metadata: Mapping[str, object] | None = None,
) -> WriteResult:
    """Replace or edit the content and/or the metadata of a document the
    actor can read.

    `metadata` holds the fields sent (title, recall_hint, tags, entities,
    importance, expires_at, source_refs); the others keep their values, and
    the new version keeps the head's source refs unless new ones are sent.
    The head is locked and its sha compared with `expected_sha256`: of two
    racing writers exactly one wins, the other gets 409 with the current
    sha. Policy and scanner as for memory_remember. Content left empty (or
    blank) is refused with 400, as a write of empty content is; a patch that
    changes nothing writes no version. The outcome is always "updated".
    Emits `memory.document.written` when it wrote a version.
    """
    metadata = dict(metadata or {})
    store = document.store
    refusal_context = {"document_id": str(document.pk)}
    with recording_refusals(actor, tool="memory_patch", **refusal_context):
        check_store_write(actor, store, doc_type=document.doc_type)
        check_document_writable(document.state, document.expires_at)
        check_agent_may_overwrite(document)
    _check_sha(document, expected_sha256)
    new_content = content if content is not None else apply_edits(document.content, edits)
    check_sizes(content=new_content)
    if (content is not None or edits) and not new_content.strip():
        field = "content" if content is not None else "edits"
        message = "A memory needs some content; memory_delete removes one."
        raise InvalidInput(message, fields={field: [message]})
    with recording_refusals(actor, tool="memory_patch", **refusal_context):
        judged = _judge(document, new_content, metadata)
        with transaction.atomic():
            check_write_quota(actor)
            head = head_locked_by_id(document.pk)
            locked = head.document
            locked.store = store
            # Same sha, same content: the edits applied to what is there.
            _check_sha(locked, expected_sha256)
            if locked.version != document.version:
                # Another writer changed the metadata (or the state) since the
                # document was read: what this patch keeps is what it left,
                # unless both set one field (the later one would undo it).
                sent = {name: judged.fields[name] for name in metadata if name in judged.fields}
                _check_fields_unmoved(document, locked, sent)
                check_document_writable(locked.state, locked.expires_at)
                check_agent_may_overwrite(locked)
                judged = _judge(locked, new_content, metadata)
            kept_refs = head.refs
            new_refs = list(metadata.get("source_refs", kept_refs))
            changed = head_update(
                locked,
                change=ChangeKind.PATCH,
                author=actor.agent,
                fields=judged.fields,
                embedding=judged.embedding,
                # New evidence alone is a change worth a version.
                force=new_refs != kept_refs,
                on_behalf_of=actor.on_behalf_of,
                run_id=actor.run_id,
                source_refs=new_refs,
                previous=head.link,
                **scan_record(judged.findings),
            )
            # "updated" even when nothing changed (API.md): the version and
            # sha tell whether a new version was written.
            result = WriteResult(locked, "updated")
            if changed:
                event_record(
                    "memory.document.written",
                    actor=actor,
                    document=locked,
                    payload={
                        "tool": "memory_patch",
                        "outcome": result.outcome,
                        "path": locked.path,
                        "version": locked.version,
                    },
                )
    return result


@dataclass(frozen=True)
class _Judged:
    """The head a patch leaves, what the scanner found in it, and its vector
    (None: the document's own still holds)."""

    fields: dict
    findings: list[Finding]
    embedding: np.ndarray | None


def _judge(document: MemoryDocument, content: str, metadata: dict) -> _Judged:
    """Build the patched head over `document` and scan it under its store's rules."""
    fields = _patched_fields(document, content, metadata)
    findings = scan_for_store(
        agent_text_fields(
            title=fields["title"],
            recall_hint=fields["recall_hint"],
            content=content,
            tags=fields["tags"],
            entities=fields["entities"],
            source_refs=metadata.get("source_refs", ()),
        ),
        document.store,
    )
    embedded = (fields["title"], fields["recall_hint"], content)
    embedding = None if vector_holds(document, *embedded) else embedding_for(*embedded)
    return _Judged(fields, findings, embedding)


def _patched_fields(document: MemoryDocument, content: str, metadata: dict) -> dict:
    """The head after the patch: sent metadata replaces, the rest is kept."""
    fields = {
        "title": document.title,
        "recall_hint": document.recall_hint,
        "tags": list(document.tags),
        "entities": dict(document.entities),
        "importance": document.importance,
        "expires_at": document.expires_at,
    }
    fields |= {name: value for name, value in metadata.items() if name in fields}
    fields["tags"] = sorted(set(fields["tags"]))
    return {**fields, "content": content, "trust": Trust.AGENT_DRAFT}

"""Redaction: removing a secret from a document's whole history.

History is otherwise append-only; a redaction is the one deliberate
rewrite. Every occurrence of the text, in every version, source ref, the
head (and so its search vector and a recomputed embedding), the review
items and events about the document, becomes MARKER. The chain is re-signed
with the app's key and a `redact` version records who did it and where,
never the text, so `memory_verify` passes and still shows the redaction.
"""

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from memory_app.errors import InvalidInput
from memory_app.models import (
    ChangeKind,
    DreamReviewItem,
    MemoryDocument,
    MemoryEvent,
    MemorySourceRef,
    MemoryVersion,
)
from memory_app.policy import check_can_redact
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.chain import chain_resign, history_rewrite
from memory_app.services.documents import embedding_for, head_update
from memory_app.services.events import event_record

MARKER = "[redacted]"
_VERSION_TEXT = ("title", "recall_hint", "content", "reason", "metadata")
_HEAD_TEXT = ("title", "recall_hint", "content", "tags", "entities")
_ITEM_TEXT = ("proposed_title", "proposed_content", "rationale", "decision_note")


@dataclass(frozen=True)
class RedactionResult:
    document: MemoryDocument
    versions: list[int]
    occurrences: int


def redaction_span(
    document: MemoryDocument, *, start: int, end: int, version: int | None = None
) -> str:
    """The text between two offsets of a version's content (default: the head)."""
    number = version or document.version
    row = document.versions.filter(version=number).only("content").first()
    if row is None:
        raise InvalidInput(
            f"The document has no version {number}.",
            fields={"version": [f"Between 1 and {document.version}."]},
        )
    if not 0 <= start < end <= len(row.content):
        raise InvalidInput(
            "The span is outside the version's content.",
            fields={"end": [f"0 <= start < end <= {len(row.content)} (the content's length)."]},
        )
    return row.content[start:end]


def _scrub(value, text: str):
    """`value` with every occurrence of `text` replaced, inside lists and dicts too."""
    if isinstance(value, str):
        return value.replace(text, MARKER)
    if isinstance(value, list):
        return [_scrub(item, text) for item in value]
    if isinstance(value, dict):
        return {key: _scrub(item, text) for key, item in value.items()}
    return value


def _scrubbed(row, names: tuple[str, ...], text: str) -> dict:
    """The fields of `row` that change when `text` is removed."""
    changed = {name: _scrub(getattr(row, name), text) for name in names}
    return {name: value for name, value in changed.items() if value != getattr(row, name)}


def _occurrences(row, names: tuple[str, ...], text: str) -> int:
    """How often `text` occurs in the fields of `row` it would change."""
    return sum(str(getattr(row, name)).count(text) for name in names)


def _check_text(text: str) -> None:
    if not text.strip():
        raise InvalidInput("Name the text to redact.", fields={"text": ["Must not be blank."]})


def _absent() -> InvalidInput:
    return InvalidInput(
        "The text does not occur in this document's history.",
        fields={"text": ["Not found in any version."]},
    )


def redaction_preview(
    *, user: AbstractBaseUser, document: MemoryDocument, text: str
) -> RedactionResult:
    """Where a redaction of `text` would rewrite the history, changing nothing:
    what the page states before the reviewer confirms (a short text can hit
    far more than they meant). Same permission and errors as `document_redact`."""
    check_can_redact(user, document)
    _check_text(text)
    versions: set[int] = set()
    occurrences = 0
    for row in document.versions.order_by("version"):
        if changed := _scrubbed(row, _VERSION_TEXT, text):
            occurrences += _occurrences(row, tuple(changed), text)
            versions.add(row.version)
    refs = MemorySourceRef.objects.filter(version__document=document, ref__contains=text)
    for ref in refs.select_related("version"):
        occurrences += ref.ref.count(text)
        versions.add(ref.version.version)
    if not versions:
        raise _absent()
    return RedactionResult(document, sorted(versions), occurrences)


@transaction.atomic
def document_redact(
    *, user: AbstractBaseUser, document: MemoryDocument, text: str
) -> RedactionResult:
    """Replace `text` with MARKER everywhere the document's history keeps it.

    Permission: `can_redact` (else PermissionDenied). InvalidInput when the
    text is blank, absent from the history, or the history does not verify
    (re-signing it would hide a tampering). Emits `memory.document.redacted`
    with the versions and counts, never the text.
    """
    check_can_redact(user, document)
    _check_text(text)
    locked = MemoryDocument.objects.select_for_update().select_related("store").get(pk=document.pk)
    if not (status := version_chain_verify(locked)).intact:
        raise InvalidInput(
            f"The history is broken at version {status.broken_at} ({status.problem}); "
            "it is not re-signed. Restore it from a backup first."
        )
    versions, occurrences = _history_scrub(locked, text)
    if not versions:
        raise _absent()
    chain_resign(locked)
    _related_scrub(locked, text)
    fields = {name: _scrub(getattr(locked, name), text) for name in _HEAD_TEXT}
    # Always a new version, even when only old versions held the text: the
    # chain's record of who redacted, when and where.
    head_update(
        locked,
        change=ChangeKind.REDACT,
        author=user,
        fields=fields,
        embedding=embedding_for(fields["title"], fields["recall_hint"], fields["content"]),
        reason=f"Redacted {occurrences} occurrence(s) in version(s) "
        f"{', '.join(map(str, versions))}.",
        force=True,
    )
    event_record(
        "memory.document.redacted",
        principal=user,
        document=locked,
        payload={
            "path": locked.path,
            "versions": versions,
            "occurrences": occurrences,
            "characters": len(text),
            "new_version": locked.version,
        },
    )
    return RedactionResult(locked, versions, occurrences)


def _history_scrub(document: MemoryDocument, text: str) -> tuple[list[int], int]:
    """Rewrite the versions and source refs holding `text`; which versions, how often."""
    versions: set[int] = set()
    occurrences = 0
    with history_rewrite():
        for row in document.versions.order_by("version"):
            if changed := _scrubbed(row, _VERSION_TEXT, text):
                occurrences += _occurrences(row, tuple(changed), text)
                MemoryVersion.objects.filter(pk=row.pk).update(**changed)
                versions.add(row.version)
        refs = MemorySourceRef.objects.filter(version__document=document, ref__contains=text)
        for ref in refs.select_related("version"):
            occurrences += ref.ref.count(text)
            MemorySourceRef.objects.filter(pk=ref.pk).update(ref=_scrub(ref.ref, text))
            versions.add(ref.version.version)
    return sorted(versions), occurrences


def _related_scrub(document: MemoryDocument, text: str) -> None:
    """Review items and events about the document may quote it too."""
    items = DreamReviewItem.objects.filter(
        Q(source_document=document)
        | Q(source_version__document=document)
        | Q(result_version__document=document)
        | Q(target_store=document.store_id, target_path=document.path)
    )
    for item in items:
        if changed := _scrubbed(item, _ITEM_TEXT, text):
            DreamReviewItem.objects.filter(pk=item.pk).update(**changed)
    for event in MemoryEvent.objects.filter(document=document).only("payload"):
        if changed := _scrubbed(event, ("payload",), text):
            MemoryEvent.objects.filter(pk=event.pk).update(**changed)

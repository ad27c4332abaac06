"""Redaction: removing a secret from a document's whole history.

History is otherwise append-only; a redaction is the one deliberate
rewrite. Every occurrence of the text, in every version, source ref, the
head (and so its search vector and a recomputed embedding), the review
items and events about the document, becomes MARKER. The chain is re-signed
with the app's key and a `redact` version records who did it and where,
never the text, so `memory_verify` passes and still shows the redaction.

A text that slipped into shared memory came through a promotion or a merge,
so its draft holds it too: the redaction follows that lineage (`lineage`)
to every document the redactor may redact that holds the text.
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
    ReviewAction,
)
from memory_app.paths import PATH_MAX_LENGTH, path_error
from memory_app.policy import can_redact, check_can_redact
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.chain import chain_resign, history_rewrite
from memory_app.services.documents import embedding_for, head_update
from memory_app.services.events import event_record

MARKER = "[redacted]"
# What a path holds instead: a path's letters cannot spell MARKER.
PATH_MARKER = "redacted"
# Keys of event payloads that hold a document path.
PATH_KEYS = ("path", "target_path")
_VERSION_TEXT = ("title", "recall_hint", "content", "reason", "metadata")
_HEAD_TEXT = ("title", "recall_hint", "content", "tags", "entities")
_ITEM_TEXT = ("proposed_title", "proposed_content", "rationale", "decision_note")


LINEAGE_LIMIT = 100
RUNS_NAMED = 100
_LINEAGE_ACTIONS = (ReviewAction.PROMOTE, ReviewAction.SUPERSEDE, ReviewAction.MERGE)


@dataclass(frozen=True)
class RedactionResult:
    document: MemoryDocument
    versions: list[int]
    occurrences: int
    # Documents of the lineage that held the text too, redacted with it.
    also: tuple[MemoryDocument, ...] = ()
    # Documents of the lineage that hold the text but whose history does not
    # verify: left as they are, for someone to restore first.
    broken: tuple[MemoryDocument, ...] = ()
    # Where the document moves when its path holds the text (else None).
    path: str | None = None


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


def _path_without(document: MemoryDocument, text: str) -> str | None:
    """The path the document moves to when its own holds `text`, else None:
    a path is shown and exported wherever the document is, so a secret in
    it must go too."""
    if _in_path(text, document.path):
        return _path_free(document.store_id, _path_scrub(document.path, text), document.pk)
    return None


def _in_path(text: str, path: str) -> bool:
    """Whether `path` holds `text` as a path holds it: in lower case."""
    return bool(text.strip()) and text.lower() in path


def _path_scrub(path: str, text: str) -> str:
    scrubbed = path.replace(text.lower(), PATH_MARKER)
    return PATH_MARKER if path_error(scrubbed) else scrubbed


def _path_free(store_id: int, stem: str, document_id=None) -> str:
    """`stem`, or `stem-2`, `stem-3`, … : the first no other document of
    the store holds."""
    taken = MemoryDocument.objects.filter(store_id=store_id).exclude(pk=document_id)
    candidate, number = stem, 1
    while taken.filter(path=candidate).exists():
        number += 1
        candidate = f"{stem[: PATH_MAX_LENGTH - 8]}-{number}"
    return candidate


def _path_move(document: MemoryDocument, path: str, text: str) -> None:
    """Move the locked document to `path`, and out of the paths its review
    items target (the proposal to promote it targets its path elsewhere);
    its events' paths follow, so none names the old path or one no
    document can have."""
    moved = {document.path: path}
    for item in _related_items(document).filter(target_path__contains=text.lower()):
        if (item.target_store_id, item.target_path) == (document.store_id, document.path):
            target = path
        else:
            target = _path_free(item.target_store_id, _path_scrub(item.target_path, text))
        moved[item.target_path] = target
        DreamReviewItem.objects.filter(pk=item.pk).update(target_path=target)
    for event in MemoryEvent.objects.filter(document=document).only("payload"):
        payload = _paths_moved(event.payload, moved, text)
        if payload != event.payload:
            MemoryEvent.objects.filter(pk=event.pk).update(payload=payload)
    MemoryDocument.objects.filter(pk=document.pk).update(path=path)
    document.path = path


def _paths_moved(payload, moved: dict[str, str], text: str):
    """`payload` with each path that held `text` replaced by where it went."""
    if not isinstance(payload, dict):
        return payload
    return {
        key: moved.get(value) or _path_scrub(value, text)
        if key in PATH_KEYS and isinstance(value, str) and _in_path(text, value)
        else value
        for key, value in payload.items()
    }


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
    versions, occurrences = _history_count(document, text)
    path = _path_without(document, text)
    if not versions and path is None:
        raise _absent()
    also = tuple(d for d in _redactable_lineage(user, document) if _holds(d, text))
    return RedactionResult(document, versions, occurrences, also, path=path)


def _holds(document: MemoryDocument, text: str) -> bool:
    """Whether the document's history or path holds `text`."""
    return bool(_history_count(document, text)[0]) or _path_without(document, text) is not None


def _history_count(document: MemoryDocument, text: str) -> tuple[list[int], int]:
    """Which versions of the document hold `text`, and how often."""
    return _history_hits(document, text, rewrite=False)


def lineage(document: MemoryDocument) -> list[MemoryDocument]:
    """The documents `document`'s text came from or went into, transitively:
    the drafts of the approved promotions, contradictions and merges that
    wrote it, the members of those merges, and what it was itself approved
    into. At most LINEAGE_LIMIT, nearest first; `document` not included."""
    seen = {document.pk}
    found: list[MemoryDocument] = []
    frontier = [document.pk]
    while frontier and len(found) < LINEAGE_LIMIT:
        linked = set(_linked_ids(frontier)) - seen
        seen |= linked
        rows = MemoryDocument.objects.filter(pk__in=linked).select_related("store").order_by("pk")
        found.extend(rows[: LINEAGE_LIMIT - len(found)])
        frontier = list(linked)
    return found


def _linked_ids(ids: list) -> list:
    """Documents one approved decision away from any of `ids`, either way."""
    approved = DreamReviewItem.objects.filter(
        action__in=_LINEAGE_ACTIONS, result_version__isnull=False
    )
    into = approved.filter(result_version__document__in=ids)
    from_ = approved.filter(
        Q(source_version__document__in=ids)
        | Q(action=ReviewAction.MERGE, related_documents__in=ids)
    )
    members = DreamReviewItem.related_documents.through.objects.filter(
        dreamreviewitem__in=into.filter(action=ReviewAction.MERGE)
    )
    heads = MemoryDocument.objects.filter(pk__in=ids, promoted_from__isnull=False)
    return [
        *into.values_list("source_version__document", flat=True),
        *members.values_list("memorydocument", flat=True),
        *from_.values_list("result_version__document", flat=True),
        *heads.values_list("promoted_from__document", flat=True),
        *MemoryDocument.objects.filter(promoted_from__document__in=ids).values_list(
            "pk", flat=True
        ),
    ]


def _redactable_lineage(user: AbstractBaseUser, document: MemoryDocument) -> list:
    return [linked for linked in lineage(document) if can_redact(user, linked)]


@transaction.atomic
def document_redact(
    *, user: AbstractBaseUser, document: MemoryDocument, text: str
) -> RedactionResult:
    """Replace `text` with MARKER everywhere the document's history keeps it,
    and in each document of its lineage the user may redact that holds it.

    Permission: `can_redact` (else PermissionDenied). InvalidInput when the
    text is blank, absent from the history, or the document's history does
    not verify (re-signing it would hide a tampering); a linked document
    whose history does not verify is left as it is and named in the result
    (`broken`). Emits `memory.document.redacted` for each document
    rewritten, with the versions and counts, never the text.
    """
    check_can_redact(user, document)
    _check_text(text)
    linked = _redactable_lineage(user, document)
    # The document and its lineage locked in one statement, in id order, as
    # an approval locks what it touches: two redactions from either end of
    # one lineage, or a redaction and an approval, wait for each other
    # instead of deadlocking.
    locked = {
        row.pk: row
        for row in MemoryDocument.objects.select_for_update(of=("self",))
        .select_related("store")
        .filter(pk__in=[document.pk, *(d.pk for d in linked)])
        .order_by("pk")
    }
    head = locked[document.pk]
    if not (status := version_chain_verify(head)).intact:
        raise InvalidInput(
            f"The history is broken at version {status.broken_at} ({status.problem}); "
            "it is not re-signed. Restore it from a backup first."
        )
    moved_from = head.path
    versions, occurrences = _redact_locked(user, head, text)
    if not versions and head.path == moved_from:
        raise _absent()
    also, broken = [], []
    for row in (locked[d.pk] for d in linked if d.pk in locked):
        if not _holds(row, text):
            continue
        if not version_chain_verify(row).intact:
            broken.append(row)
            continue
        _redact_locked(user, row, text)
        also.append(row)
    path = head.path if head.path != moved_from else None
    return RedactionResult(head, versions, occurrences, tuple(also), tuple(broken), path)


def _redact_locked(
    user: AbstractBaseUser, locked: MemoryDocument, text: str
) -> tuple[list[int], int]:
    """Redact `text` from one locked document's history and head, whose
    chain verified; nothing when it holds none. Its versions and occurrences."""
    versions, occurrences = _history_scrub(locked, text)
    path = _path_without(locked, text)
    if not versions and path is None:
        return [], 0
    chain_resign(locked)
    # Paths first: they hold the text in lower case, which the scrub below
    # would not find, and what it left would be no path at all.
    if path is not None:
        _path_move(locked, path, text)
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
        reason=_reason(versions, occurrences, moved=path is not None),
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
    return versions, occurrences


def _reason(versions: list[int], occurrences: int, *, moved: bool) -> str:
    """The `redact` version's reason: where, never what."""
    parts = []
    if versions:
        parts.append(f"Redacted {occurrences} occurrence(s) in version(s) {_spans(versions)}.")
    if moved:
        parts.append("Moved from a path that held the text.")
    return " ".join(parts)


def _spans(versions: list[int]) -> str:
    """`1-4, 7, 9-12`: version numbers as runs, at most RUNS_NAMED of them,
    so a reason stays within what a version's reason may hold (2,000
    characters) however long the history."""
    runs: list[list[int]] = []
    for number in versions:
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    named = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:RUNS_NAMED]]
    more = f" and {len(runs) - RUNS_NAMED} more" if len(runs) > RUNS_NAMED else ""
    return ", ".join(named) + more


def _history_scrub(document: MemoryDocument, text: str) -> tuple[list[int], int]:
    """Rewrite the versions and source refs holding `text`; which versions, how often."""
    with history_rewrite():
        return _history_hits(document, text, rewrite=True)


def _history_hits(document: MemoryDocument, text: str, *, rewrite: bool) -> tuple[list[int], int]:
    versions: set[int] = set()
    occurrences = 0
    for row in document.versions.order_by("version"):
        if changed := _scrubbed(row, _VERSION_TEXT, text):
            occurrences += _occurrences(row, tuple(changed), text)
            if rewrite:
                MemoryVersion.objects.filter(pk=row.pk).update(**changed)
            versions.add(row.version)
    refs = MemorySourceRef.objects.filter(version__document=document, ref__contains=text)
    for ref in refs.select_related("version"):
        occurrences += ref.ref.count(text)
        if rewrite:
            MemorySourceRef.objects.filter(pk=ref.pk).update(ref=_scrub(ref.ref, text))
        versions.add(ref.version.version)
    return sorted(versions), occurrences


def _related_items(document: MemoryDocument):
    return DreamReviewItem.objects.filter(
        Q(source_document=document)
        | Q(source_version__document=document)
        | Q(result_version__document=document)
        | Q(target_store=document.store_id, target_path=document.path)
    )


def _related_scrub(document: MemoryDocument, text: str) -> None:
    """Review items and events about the document may quote it too."""
    for item in _related_items(document):
        if changed := _scrubbed(item, _ITEM_TEXT, text):
            DreamReviewItem.objects.filter(pk=item.pk).update(**changed)
    for event in MemoryEvent.objects.filter(document=document).only("payload"):
        if changed := _scrubbed(event, ("payload",), text):
            MemoryEvent.objects.filter(pk=event.pk).update(**changed)
